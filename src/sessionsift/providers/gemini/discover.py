"""Which Gemini CLI sessions exist under a ``.gemini`` directory (measured with 0.61.0; layout read from
the client's ``Storage``, ``ProjectRegistry``, ``StorageMigration`` and ``ChatRecordingService``):

    projects.json                                   {"projects": {"<abs project root>": "<short name>"}}
    tmp/<short name>/.project_root                  the owner's path (the registry's ownership marker)
    tmp/<short name>/chats/session-<YYYY-MM-DDTHH-MM>-<id[:8]>.jsonl     a main session (append log)
    tmp/<short name>/chats/session-*.json           legacy whole-file session (releases before 0.39)
    tmp/<short name>/chats/<parent session id>/<session id>.jsonl       a subagent's own session
    tmp/<sha256 of the project root>/chats/...      the older hash-named dir (releases before 0.29)

One session can have several files, all measured:

- since 0.29 the client *copies* (never moves) an old hash dir into the new short-name dir, so a migrated
  session exists twice;
- resuming a legacy ``.json`` session writes ``<same name>.jsonl`` beside it (the whole old session, then
  the new records): the ``.json`` is then a copy;
- every ``--resume`` first starts a new chat file ``session-<now>-<id[:8]>.jsonl`` holding only a header
  and the run's ``<session_context>``, then appends the run to the resumed file (when both names fall in
  the same minute they are one file: the second header then sits inside the session's own file).

One :class:`SessionRef` is reported per session id, from the file that holds the conversation (a
``.jsonl`` with a gemini message, over a ``.json``; the short-name dir over the hash dir; then the latest);
the other files are listed in ``extra["other_files"]`` as ``{"path", "role", "project"}`` (``copy``,
``legacy json``, ``startup file``), are not read, and belong to the session's footprint.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path

import orjson

from ..base import Discovery, Problem, SessionRef

HEX64 = re.compile(r"[0-9a-f]{64}")
_HEAD_BYTES = 1 << 16
_TAIL_BYTES = 1 << 16
_STR = rb'"((?:[^"\\]|\\.)*)"'
_RE = {k: re.compile(rb'"' + k.encode() + rb'"\s*:\s*' + _STR) for k in ("sessionId", "startTime", "lastUpdated",
                                                                       "timestamp", "kind", "projectHash")}


@dataclass
class _Found:
    ref: SessionRef
    rank: tuple


def load_projects(root: Path, problems: list[Problem]) -> dict[str, str] | None:
    """``projects.json``: project path -> short name (None when absent or unreadable, with a problem)."""
    p = root / "projects.json"
    try:
        data = orjson.loads(p.read_bytes())
    except FileNotFoundError:
        return None
    except OSError as exc:
        problems.append(Problem(str(p), f"unreadable: {exc.strerror or exc}"))
        return None
    except orjson.JSONDecodeError:
        problems.append(Problem(str(p), "not JSON: project paths come from .project_root markers only"))
        return None
    projects = data.get("projects") if isinstance(data, dict) else None
    if not isinstance(projects, dict):
        problems.append(Problem(str(p), "unknown format (no \"projects\" object)"))
        return None
    return {k: v for k, v in projects.items() if isinstance(k, str) and isinstance(v, str)}


def _unescape(b: bytes) -> str | None:
    try:
        v = orjson.loads(b'"' + b + b'"')
    except orjson.JSONDecodeError:
        return None
    return v if isinstance(v, str) else None


def _first(rx: re.Pattern, buf: bytes) -> str | None:
    m = rx.search(buf)
    return _unescape(m.group(1)) if m else None


def _last(rx: re.Pattern, buf: bytes) -> str | None:
    """The value of the rightmost match of `rx` in `buf`, found backwards from the end (the key's
    bytes by `rfind`, then the pattern tried there): on JSON bytes the same value as the last of
    a forward scan, since a key's quoted name followed by `:` never occurs inside a string."""
    key = rx.pattern[:rx.pattern.index(b'"', 1) + 1]
    end = len(buf)
    while True:
        i = buf.rfind(key, 0, end)
        if i < 0:
            return None
        m = rx.match(buf, i)
        if m is not None:
            return _unescape(m.group(1))
        end = i + len(key) - 1


def _pread(fd: int, n: int, at: int) -> bytes:
    """Up to `n` bytes at offset `at` (fewer only at the end of the file)."""
    out = os.pread(fd, n, at)
    if len(out) < n and out:
        parts = [out]
        got = len(out)
        while got < n:
            more = os.pread(fd, n - got, at + got)
            if not more:
                break
            parts.append(more)
            got += len(more)
        out = b"".join(parts)
    return out


def peek(path: Path) -> dict:
    """Session id, kind, first/last instants from the head and tail of a chat file (no full parse).

    The head is the header line (``.jsonl``) or the top of the object (``.json``); the tail holds the last
    ``lastUpdated`` patch. Raises OSError when the file cannot be read."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        size = os.fstat(fd).st_size
        head = _pread(fd, _HEAD_BYTES, 0)
        if size > _HEAD_BYTES:
            at = max(_HEAD_BYTES, size - _TAIL_BYTES)
            tail = _pread(fd, size - at, at)
        else:
            tail = head
    finally:
        os.close(fd)
    nl = head.find(b"\n")
    first_line = head if nl < 0 else head[:nl]
    out = {"size": size, "shape": None}
    obj = None
    if os.fspath(path).endswith(".jsonl"):
        try:
            obj = orjson.loads(first_line)
        except orjson.JSONDecodeError:
            obj = None
        if isinstance(obj, dict) and isinstance(obj.get("sessionId"), str) and isinstance(obj.get("projectHash"), str):
            out["shape"] = "jsonl"
            out.update(session_id=obj["sessionId"], kind=obj.get("kind"), first_at=obj.get("startTime"),
                       project_hash=obj["projectHash"])
        else:
            # a damaged first line: the header may still be found further on (a torn or zeroed start)
            sid = _first(_RE["sessionId"], head)
            if sid:
                out.update(shape="jsonl", session_id=sid, kind=_first(_RE["kind"], head),
                           first_at=_first(_RE["startTime"], head), project_hash=_first(_RE["projectHash"], head))
        last = max(filter(None, (_last(_RE["lastUpdated"], tail), _last(_RE["timestamp"], tail))), default=None)
    else:
        sid = _first(_RE["sessionId"], head[:4096])
        if sid and head.lstrip()[:1] == b"{":
            out.update(shape="json", session_id=sid, kind=_first(_RE["kind"], head[:4096]),
                       first_at=_first(_RE["startTime"], head[:4096]),
                       project_hash=_first(_RE["projectHash"], head[:4096]))
        last = _first(_RE["lastUpdated"], head[:4096])
    out["last_at"] = last
    return out


def discover(provider, root) -> Discovery:
    base = root.path
    problems: list[Problem] = []
    if base is None or not base.exists():
        return Discovery([], provider.coverage(root, "absent", 0, f"{base} does not exist"), problems)
    if not base.is_dir():
        return Discovery([], provider.coverage(root, "unreadable", None, f"{base} is not a directory"), problems)
    try:
        os.listdir(base)
    except OSError as exc:
        return Discovery([], provider.coverage(root, "unreadable", None, f"cannot list {base}: {exc.strerror}"), problems)
    tmp = base / "tmp"
    if not tmp.is_dir():
        return Discovery([], provider.coverage(root, "absent", 0, f"no tmp/ under {base} (where chats are kept)"), problems)
    try:
        dirs = sorted(tmp.iterdir())
    except OSError as exc:
        return Discovery([], provider.coverage(root, "unreadable", None, f"cannot list {tmp}: {exc.strerror}"), problems)

    projects = load_projects(base, problems)
    by_slug: dict[str, list[str]] = {}
    by_hash: dict[str, str] = {}
    for path, slug in (projects or {}).items():
        by_slug.setdefault(slug, []).append(path)
        by_hash[hashlib.sha256(path.encode()).hexdigest()] = path

    found: dict[str, list[_Found]] = {}
    unknown_files: list[str] = []
    unreadable_dirs = 0
    looked = 0
    pending: list[tuple] = []
    """Per looked dir, in order: what its listing found (problems, unknown files) and its chat
    files; the files are peeked all at once (two processes for many), then taken in this order,
    so problems keep the order of a dir-by-dir reading."""
    for d in dirs:
        chats = d / "chats"
        if not chats.is_dir():
            continue
        looked += 1
        project, source, note = _project_of(d, by_slug, by_hash, projects is not None)
        legacy_dir = bool(HEX64.fullmatch(d.name))
        dprobs: list[Problem] = []
        dunknown: list[str] = []
        files: list[tuple[Path, str | None]] = []
        try:
            with os.scandir(chats) as it:
                entries = sorted(it, key=_name)
        except OSError as exc:
            unreadable_dirs += 1
            dprobs.append(Problem(str(chats), f"cannot list: {exc.strerror}"))
            entries = []
        for e in entries:
            name = e.name
            if _is_dir(e):
                try:
                    with os.scandir(e.path) as it:
                        subs = sorted(it, key=_name)
                    files += [(Path(f.path), name) for f in subs
                              if f.name.endswith((".jsonl", ".json")) and _suffix_ok(f.name) and _is_file(f)]
                except OSError as exc:
                    unreadable_dirs += 1  # its subagents' sessions are not counted: a lower bound
                    dprobs.append(Problem(e.path, f"cannot list subagent dir: {exc.strerror}"))
            elif name.startswith("session-"):
                if name.endswith((".jsonl", ".json")) and _suffix_ok(name):
                    files.append((Path(e.path), None))
                elif ".unreadable-" in name:
                    dprobs.append(Problem(e.path, "set aside by the client as unreadable (.unreadable-*): not read"))
                elif ".tmp-" not in name:
                    dunknown.append(e.path)
        pending.append((dprobs, dunknown, files, d, project, source, note, legacy_dir))
    peeks = iter(_peek_all([f for _a, _b, files, *_ in pending for f, _p in files]))
    for dprobs, dunknown, files, d, project, source, note, legacy_dir in pending:
        problems.extend(dprobs)
        unknown_files.extend(dunknown)
        for f, parent in files:
            _add(found, f, parent, d, project, source, note, legacy_dir, problems, unknown_files, next(peeks))

    sessions: list[SessionRef] = []
    for sid, cands in found.items():
        if len(cands) > 1:
            for c in cands:
                c.rank = (c.rank[0], _has_conversation(c.ref.paths[0])) + c.rank[1:]
        cands.sort(key=lambda c: c.rank, reverse=True)
        ref = cands[0].ref
        if len(cands) > 1:
            ref.extra["other_files"] = [{"path": str(c.ref.paths[0]), "role": _role(c, cands[0]),
                                         "project": c.ref.project} for c in cands[1:]]
        sessions.append(ref)
    sessions.sort(key=lambda r: (r.first_at or "", r.session_id))
    for u in unknown_files:
        problems.append(Problem(u, "unknown format: not a Gemini CLI chat file this reader knows"))
    if not sessions:
        if unknown_files:
            return Discovery([], provider.coverage(root, "unknown_format", None,
                                                   f"{len(unknown_files)} chat file(s) of a format this reader "
                                                   "does not know"), problems)
        if unreadable_dirs:
            return Discovery([], provider.coverage(root, "unreadable", None,
                                                   f"{unreadable_dirs} chats dir(s) could not be listed"), problems)
        return Discovery([], provider.coverage(root, "absent", 0, f"no chat files in {looked} project dir(s)"), problems)
    reason = None
    if unreadable_dirs or unknown_files:
        reason = (f"a lower bound: {unreadable_dirs} chats or subagent dir(s) unreadable, {len(unknown_files)} "
                  "file(s) of unknown format")
    return Discovery(sessions, provider.coverage(root, "ok", len(sessions), reason), problems)


def _name(e: os.DirEntry) -> str:
    return e.name


def _is_dir(e: os.DirEntry) -> bool:
    try:
        return e.is_dir()
    except OSError:
        return False


def _is_file(e: os.DirEntry) -> bool:
    try:
        return e.is_file()
    except OSError:
        return False


def _suffix_ok(name: str) -> bool:
    """For a name ending in ``.jsonl``/``.json``: whether that is its suffix (``Path.suffix``), i.e.
    the name is not only the extension (a dot-file has no suffix)."""
    return name not in (".jsonl", ".json")


def _has_conversation(path: Path) -> bool:
    """Whether a chat file holds a model message (a startup file holds only a header and the context)."""
    try:
        with open(path, "rb") as f:
            prev = b""
            while chunk := f.read(1 << 20):
                if b'"type":"gemini"' in prev[-32:] + chunk or b'"type": "gemini"' in prev[-32:] + chunk:
                    return True
                prev = chunk
    except OSError:
        return False
    return False


def _role(c: _Found, best: _Found) -> str:
    p = c.ref.paths[0]
    if p.suffix == ".json":
        return "legacy json (its messages are in the .jsonl)" if best.ref.paths[0].suffix == ".jsonl" else "copy"
    if c.rank[1] is False:
        return "startup file (a header and one run's context, no conversation)"
    return "copy"


def _project_of(d: Path, by_slug, by_hash, have_registry: bool) -> tuple[str | None, str | None, str | None]:
    if HEX64.fullmatch(d.name):
        if d.name in by_hash:
            return by_hash[d.name], "projects.json (sha256 of the path = the tmp dir name)", None
        return None, None, "hash-named tmp dir with no projects.json entry hashing to it"
    paths = by_slug.get(d.name, [])
    if len(paths) == 1:
        return paths[0], "projects.json", None
    marker = d / ".project_root"
    try:
        owner = marker.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        owner = ""
    if owner and (not paths or owner in paths):
        return owner, "tmp/<short name>/.project_root", None
    if len(paths) > 1:
        return None, None, f"projects.json maps {len(paths)} paths to the short name {d.name!r}"
    why = "no projects.json" if not have_registry else "short name not in projects.json"
    return None, None, f"{why} and no .project_root marker"


PEEK_FORK_FILES = 2000
"""Discovery peeks at this many chat files or more with two processes (read.fanout)."""


def _peek_one(f: Path) -> dict | OSError:
    try:
        return peek(f)
    except OSError as exc:
        return exc


def _peek_all(files: list[Path]) -> list:
    """`peek` of every file in order (an OSError in place of a file that could not be read)."""
    from ...read.fanout import map_halves

    return map_halves(_peek_one, files, [1] * len(files), min_bytes=PEEK_FORK_FILES)


def _add(found, f: Path, parent: str | None, d: Path, project, source, note, legacy_dir: bool,
         problems: list[Problem], unknown_files: list[str], info) -> None:
    if isinstance(info, OSError):
        exc = info
        problems.append(Problem(str(f), f"unreadable: {exc.strerror or exc}"))
        info = {"size": None, "shape": "unreadable"}
    if info["shape"] is None:
        try:
            empty = f.stat().st_size == 0
        except OSError:
            empty = False
        if not empty:
            unknown_files.append(str(f))
            return
        info["shape"] = "empty"
    sid = info.get("session_id") or (f.stem if parent is not None else f.stem)
    extra: dict = {"project_short_name": d.name, "kind": info.get("kind") or ("subagent" if parent else None),
                   "format": info["shape"]}
    if legacy_dir:
        extra["legacy_hash_dir"] = True
    if info.get("project_hash"):
        extra["project_hash"] = info["project_hash"]
    if info["shape"] in ("unreadable", "empty"):
        extra["id_from"] = "file name"
    if note:
        extra["project_note"] = note
    ref = SessionRef(provider="gemini-cli", session_id=sid, paths=[f], project=project, project_source=source,
                     first_at=info.get("first_at"), last_at=info.get("last_at"), size=info.get("size"),
                     parent_session_id=parent, extra=extra)
    rank = (f.suffix == ".jsonl", not legacy_dir, info.get("last_at") or "", info.get("size") or 0)
    found.setdefault(sid, []).append(_Found(ref, rank))
