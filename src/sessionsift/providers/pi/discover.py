"""Which pi sessions exist under an agent dir or a session directory (layout from the client's
``SessionManager``, 0.73.1; measured offline):

    <agent dir>/sessions/--<encoded cwd>--/<ISO time>_<uuid>.jsonl     one file per session (default)
    <session dir>/<ISO time>_<uuid>.jsonl                               with --session-dir, the env var
                                                                        or settings.json ``sessionDir``

A file is a pi session when its first line is a header ``{"type":"session","id":…}`` (the client's own
test, ``isValidSessionFile``). The header gives the session id, the cwd (the project: the folder name
is the cwd with ``/`` turned into ``-``, which cannot be turned back), the start instant, the format
version (1-3; the client rewrites an older file to 3 when it opens it) and, for a fork, the file it
came from (``parentSession``). pi records no client version.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import orjson

from ..base import Discovery, Problem, SessionRef

_HEAD = 1 << 16
_TAIL = 1 << 16
_TS = re.compile(rb'"timestamp"\s*:\s*"([^"\\]{1,64})"')
_NAME = re.compile(rb'\{"type":"session_info"[^\n]*?"name":"((?:[^"\\]|\\.)*)"')


def _listing(d: Path) -> list[os.DirEntry]:
    with os.scandir(d) as it:
        return sorted(it, key=lambda e: e.name)


def _is_dir(e: os.DirEntry) -> bool:
    try:
        return e.is_dir(follow_symlinks=False)
    except OSError:
        return False


def _is_file(e: os.DirEntry) -> bool:
    try:
        return e.is_file()
    except OSError:
        return False


def settings_session_dir(agent_dir: Path, problems: list[Problem]) -> Path | None:
    """``sessionDir`` of the agent dir's settings.json (``~`` expanded as the client does), if any."""
    p = agent_dir / "settings.json"
    try:
        data = orjson.loads(p.read_bytes())
    except FileNotFoundError:
        return None
    except (OSError, orjson.JSONDecodeError) as exc:
        problems.append(Problem(str(p), f"cannot read settings.json (a sessionDir it names is not looked in): "
                                        f"{getattr(exc, 'strerror', None) or exc}"))
        return None
    sd = data.get("sessionDir") if isinstance(data, dict) else None
    if not isinstance(sd, str) or not sd:
        return None
    if sd == "~":
        return Path.home()
    if sd.startswith("~/"):
        return Path.home() / sd[2:]
    return Path(sd)


def peek(path: Path) -> dict | str:
    """The header and a few facts from the head and tail of one file, or why it is no pi session."""
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            head = f.read(_HEAD)
            tail = b""
            if size > _HEAD:
                f.seek(max(_HEAD, size - _TAIL))
                tail = f.read(_TAIL)
    except OSError as exc:
        return f"cannot read: {exc.strerror or exc}"
    first = head.split(b"\n", 1)[0]
    try:
        header = orjson.loads(first)
    except orjson.JSONDecodeError:
        return "unknown format: the first line is not a JSON header"
    if not isinstance(header, dict) or header.get("type") != "session" or not isinstance(header.get("id"), str):
        return "unknown format: no pi session header on the first line"
    buf = head + tail
    stamps = _TS.findall(tail or head)
    names = _NAME.findall(buf)
    title = None
    if names:
        try:
            title = orjson.loads(b'"' + names[-1] + b'"').strip() or None
        except orjson.JSONDecodeError:
            title = None
    return {"header": header, "size": size, "last_at": stamps[-1].decode() if stamps else None, "title": title}


def _ref(path: Path, info: dict, session_dir: Path, how: str) -> SessionRef:
    h = info["header"]
    cwd = h.get("cwd") if isinstance(h.get("cwd"), str) and h.get("cwd") else None
    extra = {"format_version": h.get("version") if isinstance(h.get("version"), int) else 1,
             "session_dir": str(session_dir), "layout": how}
    parent = h.get("parentSession")
    if isinstance(parent, str) and parent:
        extra["parent_session_path"] = parent
    ts = h.get("timestamp") if isinstance(h.get("timestamp"), str) else None
    return SessionRef("pi", h["id"], [path], project=cwd, project_source="session header cwd" if cwd else None,
                      first_at=ts, last_at=info["last_at"] or ts, size=info["size"], title=info["title"],
                      version=None, extra=extra)


def discover(provider, root) -> Discovery:
    base = root.path
    problems: list[Problem] = []
    if base is None or not base.exists():
        return Discovery([], provider.coverage(root, "absent", 0, f"{base} does not exist"), problems)
    if not base.is_dir():
        return Discovery([], provider.coverage(root, "unreadable", None, f"{base} is not a directory"), problems)
    try:
        top = _listing(base)
    except OSError as exc:
        return Discovery([], provider.coverage(root, "unreadable", None, f"cannot list {base}: {exc.strerror}"),
                         problems)
    # (dir, how): the agent dir's sessions/ with its per-cwd folders; a session dir (flat files)
    places: list[tuple[Path, str]] = []
    sessions_dir = base / "sessions"
    if sessions_dir.is_dir():
        places.append((sessions_dir, "agent dir"))
    if any(e.name.endswith(".jsonl") and _is_file(e) for e in top) or not places:
        places.append((base, "session dir"))
    extra_dir = settings_session_dir(base, problems) if places[0][1] == "agent dir" else None
    if extra_dir is not None and extra_dir.resolve() not in {p.resolve() for p, _ in places}:
        places.append((extra_dir, "settings.json sessionDir"))

    files: list[tuple[Path, Path, str]] = []
    unreadable_dirs = 0
    for place, how in places:
        try:
            entries = _listing(place)
        except FileNotFoundError:
            continue
        except OSError as exc:
            unreadable_dirs += 1
            problems.append(Problem(str(place), f"cannot list: {exc.strerror}"))
            continue
        for e in entries:
            if e.name.endswith(".jsonl") and _is_file(e):
                files.append((Path(e.path), place, how))
            elif how == "agent dir" and _is_dir(e):
                try:
                    subs = _listing(Path(e.path))
                except OSError as exc:
                    unreadable_dirs += 1
                    problems.append(Problem(e.path, f"cannot list: {exc.strerror}"))
                    continue
                files += [(Path(f.path), Path(e.path), "per-cwd folder") for f in subs
                          if f.name.endswith(".jsonl") and _is_file(f)]
    sessions: list[SessionRef] = []
    unknown = unreadable = 0
    seen: dict[str, SessionRef] = {}
    for f, d, how in files:
        info = peek(f)
        if isinstance(info, str):
            problems.append(Problem(str(f), info))
            if info.startswith("unknown format"):
                unknown += 1
            else:
                unreadable += 1
            continue
        ref = _ref(f, info, d, how)
        other = seen.get(ref.session_id)
        if other is not None:  # the same header id in two files: a copied file; both are listed
            problems.append(Problem(str(f), f"same session id as {other.paths[0]}: listed as its own session"))
            ref.extra["same_id_as"] = str(other.paths[0])
        else:
            seen[ref.session_id] = ref
        sessions.append(ref)
    sessions.sort(key=lambda r: (r.first_at or "", r.session_id, str(r.paths[0])))
    looked = ", ".join(str(p) for p, _ in places)
    if not sessions:
        if unknown:
            return Discovery([], provider.coverage(root, "unknown_format", None,
                                                   f"{unknown} .jsonl file(s) without a pi session header"), problems)
        if unreadable or unreadable_dirs:
            return Discovery([], provider.coverage(root, "unreadable", None,
                                                   f"{unreadable} session file(s) and {unreadable_dirs} dir(s) "
                                                   "could not be read"), problems)
        return Discovery([], provider.coverage(root, "absent", 0, f"no session files in {looked}"), problems)
    reason = None
    if unknown or unreadable or unreadable_dirs:
        reason = (f"a lower bound: {unreadable} file(s) and {unreadable_dirs} dir(s) unreadable, {unknown} "
                  "file(s) of unknown format")
    return Discovery(sessions, provider.coverage(root, "ok", len(sessions), reason), problems)
