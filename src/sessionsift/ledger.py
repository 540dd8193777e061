"""The ledger: the one place that records what sessionsift KEPT of a session (an export, a capture).

`clean scan`'s *kept* gate asks it whether a session has been kept; `export chunks|markdown|html|
parquet` and `clean capture|protect` record here what they wrote. Nothing else counts as kept: a
summary a person wrote by hand, a file named after a topic, another tool's export are invisible to
this gate, and the gate says so ("not provably kept", never "not kept").

**Where.** ``${XDG_DATA_HOME:-~/.local/share}/sessionsift/ledger.jsonl`` (:func:`data_dir`; the
directory is created 0700, the file 0600). Append-only JSON Lines: one object per line, never
rewritten. Each append takes an exclusive ``flock`` on the file, writes one line with a single
``write`` and ``fsync``\\ s; a torn last line (a crash mid-append) is skipped by readers and counted
in :attr:`Entries.torn`.

**An entry** (all keys always present; ``null`` where unknown)::

    {"v": 1, "kind": "export" | "capture", "provider": "claude-code", "session_id": "...",
     "fingerprint": "sha256:<64 hex>",     # fingerprint() of the session when it was kept
     "reader_version": "0.1.0",             # sessionsift version that read / wrote it
     "path": "/abs/path/of/what/was/written", "format": "markdown" | "parquet" | "zst-archive" | ...,
     "sha256": "<64 hex of the written file>", "size": 12345,
     "instant": "2026-09-02T10:11:12.123456Z", "extra": {...}}

**The fingerprint** (:func:`fingerprint`, ``fingerprint_v1``) is a SHA-256 over the session's whole
footprint (``Provider.footprint(ref)``) in this order: the footprint entries in the order the
provider lists them; a directory entry is walked, every entry below it in byte order of its path
relative to the footprint entry (``os.fsencode``), a directory before its contents, symlinks not
followed. Each item contributes ``<type>\\0<name>\\0<size>\\0`` then its bytes, where ``type`` is
``F`` (regular file, its content), ``L`` (symlink, the link target), ``D`` (directory, no bytes)
and ``name`` is the entry's basename joined with its relative path by ``/`` (so a moved data root
keeps its fingerprints). Any change to any byte, name or file of the footprint changes it. A
session with no files of its own (rows in a shared SQLite database: opencode, Crush) is
fingerprinted by :func:`fingerprint_rows` over its records as the reader yields them
(``rows_v1``: each record's locator and raw row, orjson, in read order).

**The API** (used by ``export`` and by ``clean``)::

    from sessionsift import ledger
    fp = ledger.fingerprint(provider.footprint(ref))        # before reading the session
    ...write the export to out_path...
    ledger.record(kind="export", provider=ref.provider, session_id=ref.session_id, fingerprint=fp,
                  path=out_path, format="markdown")          # sha256 + size of out_path computed here
    ledger.entries("claude-code", sid)                       # every entry of one session, oldest first
    ledger.current("claude-code", sid)                       # the newest entry, or None
    ledger.is_kept("claude-code", sid, fp)                   # -> (bool, evidence, reason)

``is_kept`` is True only for an entry whose fingerprint equals the session's CURRENT fingerprint
and whose written file still exists with the recorded size and SHA-256 (rehashed now). A session
that grew after it was exported is therefore not provably kept. Captures are checked against
the archive's authenticated manifest by ``sessionsift.clean`` (this module only records them).
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import os
import stat as S
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping

import orjson

FILE = "ledger.jsonl"
KINDS = ("export", "capture")
CHUNK = 1 << 20


def data_dir(env: Mapping[str, str] | None = None) -> Path:
    """``${XDG_DATA_HOME:-~/.local/share}/sessionsift`` (an empty XDG_DATA_HOME counts as unset)."""
    env = os.environ if env is None else env
    base = env.get("XDG_DATA_HOME") or os.path.join(env.get("HOME") or str(Path.home()), ".local", "share")
    return Path(base) / "sessionsift"


def ensure_private_dir(d: Path) -> Path:
    """Create ``d`` (and parents) with mode 0700; an existing dir is tightened to 0700 if it is ours."""
    d.mkdir(parents=True, exist_ok=True, mode=0o700)
    try:
        st = os.stat(d)
        if st.st_uid == os.getuid() and S.S_IMODE(st.st_mode) != 0o700:
            os.chmod(d, 0o700)
    except OSError:
        pass
    return d


def now_iso() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def sha256_file(path: str | os.PathLike[str]) -> tuple[str, int]:
    """(hex sha256, size) of a file's bytes, streamed."""
    h = hashlib.sha256()
    n = 0
    with open(path, "rb") as f:
        while True:
            b = f.read(CHUNK)
            if not b:
                break
            h.update(b)
            n += len(b)
    return h.hexdigest(), n


# -- fingerprints ------------------------------------------------------------------------------


def _items(paths: Iterable[os.PathLike[str] | str]) -> Iterator[tuple[str, str, bytes]]:
    """(type, name, path bytes) for every item of a footprint, in fingerprint order."""
    for p in paths:
        p = os.fspath(p)
        base = os.path.basename(p.rstrip("/")) or p
        try:
            st = os.lstat(p)
        except FileNotFoundError:
            continue
        if S.S_ISDIR(st.st_mode):
            yield "D", base, os.fsencode(p)
            for rel in _walk(os.fsencode(p), b""):
                full = os.path.join(os.fsencode(p), rel)
                try:
                    m = os.lstat(full).st_mode
                except FileNotFoundError:
                    continue
                t = "D" if S.S_ISDIR(m) else "L" if S.S_ISLNK(m) else "F" if S.S_ISREG(m) else "?"
                yield t, base + "/" + os.fsdecode(rel), full
        elif S.S_ISLNK(st.st_mode):
            yield "L", base, os.fsencode(p)
        elif S.S_ISREG(st.st_mode):
            yield "F", base, os.fsencode(p)
        else:
            yield "?", base, os.fsencode(p)


def _walk(root: bytes, rel: bytes) -> Iterator[bytes]:
    """Relative paths below root, byte-sorted, depth first (a directory, then its contents)."""
    d = os.path.join(root, rel) if rel else root
    try:
        names = sorted(os.listdir(d))
    except OSError:
        return
    for n in names:
        r = os.path.join(rel, n) if rel else n
        yield r
        full = os.path.join(root, r)
        try:
            if S.S_ISDIR(os.lstat(full).st_mode):
                yield from _walk(root, r)
        except FileNotFoundError:
            continue


def fingerprint(paths: Iterable[os.PathLike[str] | str]) -> str:
    """``sha256:<hex>`` over a footprint's bytes (fingerprint_v1, see the module docstring)."""
    h = hashlib.sha256(b"sessionsift-fingerprint-v1\0")
    for t, name, full in _items(paths):
        nb = name.encode("utf-8", "surrogateescape")
        if t == "F":
            try:
                with open(full, "rb") as f:
                    size = os.fstat(f.fileno()).st_size
                    h.update(b"F\0" + nb + b"\0" + str(size).encode() + b"\0")
                    while True:
                        b = f.read(CHUNK)
                        if not b:
                            break
                        h.update(b)
            except FileNotFoundError:
                continue
        elif t == "L":
            try:
                tgt = os.readlink(full)
            except OSError:
                continue
            tb = os.fsencode(tgt)
            h.update(b"L\0" + nb + b"\0" + str(len(tb)).encode() + b"\0" + tb)
        elif t == "D":
            h.update(b"D\0" + nb + b"\0" + b"0\0")
        else:
            h.update(b"?\0" + nb + b"\0" + b"0\0")
    return "sha256:" + h.hexdigest()


def fingerprint_rows(records: Iterable[Any]) -> str:
    """``sha256:<hex>`` over a database session's records (rows_v1): each record's locator and raw
    row as orjson (sorted keys), in the order the reader yields them. Pass records read with
    ``raw=True``."""
    h = hashlib.sha256(b"sessionsift-rows-v1\0")
    for r in records:
        loc = getattr(r, "locator", "")
        raw = getattr(r, "raw", None)
        try:
            body = orjson.dumps(raw, option=orjson.OPT_SORT_KEYS, default=str)
        except (TypeError, orjson.JSONEncodeError):
            body = repr(raw).encode("utf-8", "surrogateescape")
        h.update(loc.encode("utf-8", "surrogateescape") + b"\0" + str(len(body)).encode() + b"\0" + body)
    return "sha256:" + h.hexdigest()


# -- the file ----------------------------------------------------------------------------------


@dataclass
class Entries:
    rows: list[dict] = field(default_factory=list)
    torn: int = 0
    """Lines that are not JSON objects (a crash mid-append): skipped, counted."""
    state: str = "ok"
    """``ok`` | ``absent`` (no ledger yet: nothing ever recorded) | ``unreadable: <why>``."""


def names_out(v: Any) -> Any:
    """``v`` with every string that is not valid UTF-8 (a file name's undecodable bytes, held as
    surrogate escapes) replaced by ``{"bytes": "<base64>"}``, the form docs/json.md gives such a
    string: names are bytes, and every one of them can be written and read back."""
    if isinstance(v, str):
        try:
            v.encode("utf-8")
            return v
        except UnicodeEncodeError:
            import base64

            return {"bytes": base64.b64encode(v.encode("utf-8", "surrogateescape")).decode()}
    if isinstance(v, dict):
        return {k: names_out(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [names_out(x) for x in v]
    return v


def names_in(v: Any) -> Any:
    """The inverse of :func:`names_out` (``{"bytes": ...}`` back to the surrogate-escaped str)."""
    if isinstance(v, dict):
        if len(v) == 1 and isinstance(v.get("bytes"), str):
            import base64
            import binascii

            try:
                return base64.b64decode(v["bytes"], validate=True).decode("utf-8", "surrogateescape")
            except (binascii.Error, ValueError):
                return v
        return {k: names_in(x) for k, x in v.items()}
    if isinstance(v, list):
        return [names_in(x) for x in v]
    return v


def ledger_path(root: Path | None = None) -> Path:
    return (root if root is not None else data_dir()) / FILE


def record(*, kind: str, provider: str, session_id: str, fingerprint: str, path: str | os.PathLike[str],
           format: str, sha256: str | None = None, size: int | None = None, reader_version: str | None = None,
           instant: str | None = None, extra: dict | None = None, root: Path | None = None,
           durable: bool = True) -> dict:
    """Append one entry and return it. ``sha256``/``size`` of ``path`` are computed when not given
    (the file must exist). ``root``: the sessionsift data dir (default :func:`data_dir`)."""
    if kind not in KINDS:
        raise ValueError(f"ledger kind must be one of {KINDS}, not {kind!r}")
    if not (isinstance(fingerprint, str) and fingerprint.startswith("sha256:")):
        raise ValueError("fingerprint must be 'sha256:<hex>' (ledger.fingerprint / fingerprint_rows)")
    p = os.path.abspath(os.fspath(path))
    if sha256 is None or size is None:
        sha256, size = sha256_file(p)
    if reader_version is None:
        from . import __version__ as reader_version
    entry = {"v": 1, "kind": kind, "provider": provider, "session_id": session_id, "fingerprint": fingerprint,
             "reader_version": reader_version, "path": p, "format": format, "sha256": sha256, "size": size,
             "instant": instant or now_iso(), "extra": extra or {}}
    append_line(ledger_path(root), orjson.dumps(names_out(entry)), durable)
    return entry


def write_all(fd: int, data: bytes) -> None:
    """Write every byte of ``data`` to ``fd``: a short write (a disk filling up) continues where it
    stopped, a write that makes no progress is an error (ENOSPC), and an error is raised -- a
    count is never ignored."""
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        if n <= 0:
            raise OSError(errno.ENOSPC, "no progress writing (a write of 0 bytes)")
        view = view[n:]


def append_line(path: Path, line: bytes, durable: bool = True) -> int:
    """Append one line (0600 file in a 0700 dir) under an exclusive flock, every byte checked,
    then fsync (unless ``durable`` is False: a line whose loss in a power cut loses nothing).
    Returns the offset the line starts at. On any error the file is cut back to its size before
    the append (no torn line is left where it can be helped) and the error is raised."""
    ensure_private_dir(path.parent)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        # a torn last line from a crash must not glue onto ours
        size = os.fstat(fd).st_size
        prefix = b""
        if size:
            with open(path, "rb") as r:
                r.seek(size - 1)
                if r.read(1) != b"\n":
                    prefix = b"\n"
        try:
            write_all(fd, prefix + line + b"\n")
            if durable:
                os.fsync(fd)
        except OSError:
            try:
                os.ftruncate(fd, size)
            except OSError:
                pass
            raise
        return size + len(prefix)
    finally:
        os.close(fd)


def read_all(root: Path | None = None) -> Entries:
    p = ledger_path(root)
    out = Entries()
    try:
        raw = p.read_bytes()
    except FileNotFoundError:
        out.state = "absent"
        return out
    except OSError as exc:
        out.state = f"unreadable: {exc.strerror or exc}"
        return out
    for line in raw.split(b"\n"):
        if not line.strip():
            continue
        try:
            o = orjson.loads(line)
        except orjson.JSONDecodeError:
            out.torn += 1
            continue
        if isinstance(o, dict) and o.get("kind") in KINDS:
            out.rows.append(names_in(o))
        else:
            out.torn += 1
    return out


def entries(provider: str, session_id: str, root: Path | None = None) -> list[dict]:
    """Every entry of one session, oldest first."""
    return [e for e in read_all(root).rows if e.get("provider") == provider and e.get("session_id") == session_id]


def current(provider: str, session_id: str, root: Path | None = None) -> dict | None:
    """The newest entry of one session (None: never kept by us)."""
    es = entries(provider, session_id, root)
    return es[-1] if es else None


def check_written(e: dict) -> tuple[bool, str]:
    """Whether the file an entry names is still there with its recorded size and SHA-256."""
    p = e.get("path")
    if not isinstance(p, str):
        return False, "the entry names no path"
    try:
        st = os.stat(p)
    except FileNotFoundError:
        return False, f"{p} is gone"
    except OSError as exc:
        return False, f"{p}: {exc.strerror}"
    if isinstance(e.get("size"), int) and st.st_size != e["size"]:
        return False, f"{p} is {st.st_size} bytes, the entry says {e['size']}"
    try:
        h, _ = sha256_file(p)
    except OSError as exc:
        return False, f"{p}: {exc.strerror}"
    if h != e.get("sha256"):
        return False, f"{p} changed since it was written (sha256 differs)"
    return True, f"{p} present, sha256 matches"


def is_kept(provider: str, session_id: str, fingerprint: str, root: Path | None = None,
            kinds: tuple[str, ...] = ("export",), all_entries: Entries | None = None) -> tuple[bool, list[dict], str]:
    """(kept, evidence, reason). ``reason`` is ``kept_provably`` or ``not_provably_kept: <why>``;
    ``evidence`` the entries looked at, each with ``check``. ``kinds``: which entry kinds count
    (``clean`` checks captures against its manifest instead, so it asks for exports only)."""
    es = all_entries if all_entries is not None else read_all(root)
    if es.state.startswith("unreadable"):
        return False, [], f"not_provably_kept: the ledger is {es.state}"
    mine = [e for e in es.rows if e.get("provider") == provider and e.get("session_id") == session_id
            and e.get("kind") in kinds]
    if not mine:
        return False, [], "not_provably_kept: no ledger entry for this session"
    ev: list[dict] = []
    stale = 0
    for e in reversed(mine):
        if e.get("fingerprint") != fingerprint:
            stale += 1
            ev.append({**e, "check": "fingerprint differs from the session's current bytes"})
            continue
        ok, why = check_written(e)
        ev.append({**e, "check": why})
        if ok:
            return True, ev, "kept_provably"
    if stale == len(mine):
        return False, ev, (f"not_provably_kept: {len(mine)} ledger entr{'y' if len(mine) == 1 else 'ies'}, none of the "
                           "session's current bytes (it changed after it was kept)")
    return False, ev, "not_provably_kept: the matching export is gone or changed"
