"""Where index files live and how one is written, read and judged fresh.

**Where.** ``${XDG_CACHE_HOME:-~/.cache}/sessionsift/index/v<N>/<kind>/<hh>/<hash>.idx`` (an empty
XDG_CACHE_HOME counts as unset): directories 0700, files 0600, private to the user. The name is a
hash of the indexed file's absolute path (the path itself is stored inside and checked). Never
inside an agent's own data folder: `usable_for` refuses a cache directory that lies under a data
root being read (the index is then off for that root, and the answer says so).

**A file.** ``MAGIC``, a 4-byte header length, the header's BLAKE2b-128 digest, the header
(`marshal`: version, interpreter version, kind, path, the identity of the indexed bytes, and per
section its offset, length and BLAKE2b-128 digest), then the sections (zlib-compressed `marshal`
data: nothing to import on a warm answer). marshal's format is the interpreter's, so a file written
by another Python version is treated as absent; nothing is unmarshalled before its digest checks.
A section is read and checked on its own, so a question that needs one small section never
decompresses the others. Written to a temporary file in the same
directory and moved into place with ``os.replace`` (a reader sees the old file or the new one,
never a torn one); any file that does not parse, does not check or names another path is
**never trusted**: it is treated as absent (and rebuilt by whoever writes next).

**Identity and freshness** (`judge`): the index records, for the bytes it covers (``end``: just
after the last newline at indexing time), the file's device, inode, size, mtime and ctime (ns),
and BLAKE2b fingerprints of the head (first 4 KiB), of the last 4 KiB before ``end`` and of eight
4 KiB samples spread over ``[0, end)``. A stat equal in all five fields means *fresh* (nothing was
written since: ctime cannot be set back by user space). Otherwise the covered bytes are re-read
at the recorded places: all fingerprints equal and the file at least ``end`` long means *grown*
(an append: only the bytes after ``end`` need reading); anything else - a rewrite, a truncation, a
rotation, a copy over the path - means *stale* (re-index from scratch).
"""

from __future__ import annotations

import os
import struct
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

try:  # hashlib's own blake2b, without hashlib's import (it loads OpenSSL: ~10 ms of a warm census)
    from _blake2 import blake2b
except ImportError:  # an interpreter built without it
    from hashlib import blake2b

MAGIC = b"SSIFTIDX"
VERSION = 5
FP_BYTES = 4096
SAMPLES = 8


def cache_dir(env: Mapping[str, str] | None = None) -> Path:
    """``${XDG_CACHE_HOME:-~/.cache}/sessionsift/index`` (not created); ``$SESSIONSIFT_INDEX_DIR``
    instead when set (tests, or a store that wants its index elsewhere)."""
    env = os.environ if env is None else env
    if env.get("SESSIONSIFT_INDEX_DIR"):
        return Path(env["SESSIONSIFT_INDEX_DIR"])
    base = env.get("XDG_CACHE_HOME") or os.path.join(env.get("HOME") or str(Path.home()), ".cache")
    return Path(base) / "sessionsift" / "index"


def root_dir(env: Mapping[str, str] | None = None) -> Path:
    return cache_dir(env) / f"v{VERSION}"


def usable_for(data_root: str | os.PathLike[str] | None) -> bool:
    """False when the index directory would lie inside `data_root` (an agent's own data folder)."""
    if data_root is None:
        return True
    try:
        idx = os.path.realpath(cache_dir())
        root = os.path.realpath(data_root)
    except OSError:
        return False
    return not (idx == root or idx.startswith(root.rstrip(os.sep) + os.sep))


_ROOT: list = [None, None]
"""(the environment values it was computed from, root_dir as a string): index_path runs once per
transcript, so the root is not recomputed each time."""


def _root_str() -> str:
    key = (os.environ.get("SESSIONSIFT_INDEX_DIR"), os.environ.get("XDG_CACHE_HOME"), os.environ.get("HOME"))
    if _ROOT[0] != key:
        _ROOT[0], _ROOT[1] = key, str(root_dir())
    return _ROOT[1]


def abspath(p: str) -> str:
    """`os.path.abspath(p)`, without its work when `p` is already absolute and normal (the hot
    paths call it once per transcript with paths discovery built from an absolute root)."""
    if p[:1] == "/" and "//" not in p and "/./" not in p and "/../" not in p and not p.endswith(("/", "/.", "/..")):
        return p
    return os.path.abspath(p)


def index_path(kind: str, path: str | os.PathLike[str]) -> Path:
    return Path(index_str(kind, os.fsencode(os.path.abspath(path))))


def index_str(kind: str, abs_b: bytes) -> str:
    """`index_path` as a string, from the indexed file's absolute path as bytes (the hot path:
    no Path object, the absolute path computed once by the caller)."""
    h = blake2b(abs_b, digest_size=16).hexdigest()
    return f"{_root_str()}/{kind}/{h[:2]}/{h}.idx"


def _private_dirs(d: Path) -> None:
    top = cache_dir()
    d.mkdir(parents=True, exist_ok=True, mode=0o700)
    p = d
    while True:
        try:
            st = p.stat()
            if st.st_uid == os.getuid() and st.st_mode & 0o077:
                os.chmod(p, 0o700)
        except OSError:
            pass
        if p == top or p.parent == p or top not in p.parents:
            break
        p = p.parent


def private_dirs(d: Path) -> None:
    """Create `d` (and parents) private to the user, as every index file's directory is."""
    _private_dirs(d)


def open_database(p: Path, timeout: float = 10.0):
    """An index database at `p` (a sqlite3 connection in autocommit, WAL, synchronous NORMAL,
    usable from the thread that did not open it): its directory made private and the file 0600,
    made so if it was not. Raises OSError or sqlite3.Error."""
    import sqlite3

    private_dirs(p.parent)
    fd = os.open(p, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        if os.fstat(fd).st_mode & 0o077:
            os.fchmod(fd, 0o600)
    finally:
        os.close(fd)
    con = sqlite3.connect(p, timeout=timeout, isolation_level=None, check_same_thread=False)
    con.execute("PRAGMA journal_mode=WAL")
    con.execute("PRAGMA synchronous=NORMAL")
    return con


# -- identity ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Identity:
    """What an index file covers of the indexed file."""

    end: int
    """Bytes covered: [0, end), end just after a newline (0: nothing)."""
    size: int
    dev: int
    ino: int
    mtime_ns: int
    ctime_ns: int
    fps: tuple[str, ...]
    """Fingerprints of the head, the last bytes before `end`, and SAMPLES spread samples."""

    def as_obj(self) -> dict:
        return {"end": self.end, "size": self.size, "dev": self.dev, "ino": self.ino,
                "mtime_ns": self.mtime_ns, "ctime_ns": self.ctime_ns, "fps": list(self.fps)}

    @classmethod
    def from_obj(cls, o: dict) -> "Identity":
        return cls(int(o["end"]), int(o["size"]), int(o["dev"]), int(o["ino"]), int(o["mtime_ns"]),
                   int(o["ctime_ns"]), tuple(str(x) for x in o["fps"]))


def _spots(end: int) -> list[tuple[int, int]]:
    """(offset, length) of the fingerprinted regions of [0, end)."""
    if end <= 0:
        return []
    n = min(FP_BYTES, end)
    out = [(0, n), (end - n, n)]
    if end > 2 * FP_BYTES:
        step = end // (SAMPLES + 1)
        out += [(min(step * (k + 1), end - n), n) for k in range(SAMPLES)]
    return out


def fingerprints(buf_or_file, end: int) -> tuple[str, ...]:
    """Fingerprints of [0, end) from a buffer (mmap/bytes) or an open binary file."""
    out = []
    for off, n in _spots(end):
        if hasattr(buf_or_file, "seek"):
            buf_or_file.seek(off)
            data = buf_or_file.read(n)
        else:
            data = bytes(buf_or_file[off:off + n])
        out.append(blake2b(data, digest_size=16).hexdigest())
    return tuple(out)


def identity_of(st: os.stat_result, end: int, fps: tuple[str, ...]) -> Identity:
    return Identity(end, st.st_size, st.st_dev, st.st_ino, st.st_mtime_ns, st.st_ctime_ns, fps)


FRESH, GROWN, STALE = "fresh", "grown", "stale"


def judge(path: str | os.PathLike[str], ident: Identity, st: os.stat_result | None = None) -> str:
    """FRESH (unchanged), GROWN (bytes appended after `ident.end`, the covered ones intact) or
    STALE (re-index). Raises OSError when the file cannot be read."""
    st = os.stat(path) if st is None else st
    if (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns) == (
            ident.dev, ident.ino, ident.size, ident.mtime_ns, ident.ctime_ns):
        return FRESH
    if st.st_size < ident.end:
        return STALE
    with open(path, "rb") as f:
        if fingerprints(f, ident.end) != ident.fps:
            return STALE
    return GROWN


# -- the file format --------------------------------------------------------------------------


def _codec():
    import marshal
    import zlib

    return marshal, zlib


_FIRST_READ = 64 << 10
"""IndexFile.open reads this much at once: most index files are whole in it."""

_HEAD = len(MAGIC) + 4 + 16
"""Bytes before the header: magic, its length, its digest."""


def _digest(b: bytes) -> bytes:
    return blake2b(b, digest_size=16).digest()


_PY = f"{sys.version_info[0]}.{sys.version_info[1]}/{getattr(__import__('marshal'), 'version', 0)}"
"""marshal's format is the interpreter's: an index written by another version is not read."""


def write(dest: Path, kind: str, path: str, ident: Identity, sections: dict[str, Any],
          extra: dict | None = None, raw_sections: dict[str, tuple[bytes, int]] | None = None) -> int:
    """Write an index file atomically (temp + os.replace); returns its size in bytes.
    `raw_sections`: sections already compressed (name -> (bytes, uncompressed length)), copied."""
    mp, zlib = _codec()
    blobs = []
    table = {}
    off = 0
    items = [(name, None, obj) for name, obj in sections.items()]
    items += [(name, comp_n, None) for name, comp_n in (raw_sections or {}).items() if name not in sections]
    for name, comp_n, obj in items:
        if comp_n is None:
            raw = mp.dumps(obj)
            comp, n = zlib.compress(raw, 3), len(raw)
        else:
            comp, n = comp_n
        table[name] = [off, len(comp), n, blake2b(comp, digest_size=16).hexdigest()]
        blobs.append(comp)
        off += len(comp)
    header = mp.dumps({"version": VERSION, "py": _PY, "kind": kind, "path": os.fsencode(os.path.abspath(path)),
                         "identity": ident.as_obj(), "sections": table, "extra": extra or {}})
    import tempfile  # only a writer needs it (a warm answer writes nothing)

    dest = Path(dest)
    _private_dirs(dest.parent)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".idx", dir=dest.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            os.fchmod(f.fileno(), 0o600)
            f.write(MAGIC + struct.pack("<I", len(header)) + _digest(header) + header)
            for b in blobs:
                f.write(b)
        os.replace(tmp, dest)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return _HEAD + len(header) + off


class IndexFile:
    """An index file opened for reading: its header, and each section on demand (checked)."""

    def __init__(self, dest: Path, header: dict, base: int, data: bytes | None = None):
        self.dest = dest
        self.header = header
        self.base = base
        self.data = data
        """The whole file when the first read took it all (a small index: sections are sliced
        from it, not read again)."""
        self.identity = Identity.from_obj(header["identity"])
        self.extra: dict = header.get("extra") or {}

    @classmethod
    def open(cls, dest: Path | str, kind: str, path: str, abs_b: bytes | None = None) -> "IndexFile | None":
        """The index file at `dest` for `path` (`abs_b`: its absolute path as bytes, when the
        caller has it), or None when absent or not to be trusted."""
        mp, _z = _codec()
        try:
            fd = os.open(dest, os.O_RDONLY)
            try:
                head = os.read(fd, _FIRST_READ)
                whole = len(head) < _FIRST_READ and os.read(fd, 1) == b""
                if head[:8] != MAGIC or len(head) < _HEAD:
                    return None
                (n,) = struct.unpack("<I", head[8:12])
                if len(head) < _HEAD + n:
                    head += os.pread(fd, _HEAD + n - len(head), len(head))
            finally:
                os.close(fd)
        except OSError:
            return None
        try:
            hb = head[_HEAD:_HEAD + n]
            if len(hb) != n or _digest(hb) != head[12:_HEAD]:
                return None
            h = mp.loads(hb)
            if (not isinstance(h, dict) or h.get("version") != VERSION or h.get("py") != _PY or h.get("kind") != kind
                    or h.get("path") != (abs_b if abs_b is not None else os.fsencode(os.path.abspath(path)))
                    or not isinstance(h.get("sections"), dict)):
                return None
            return cls(dest, h, _HEAD + n, head if whole else None)
        except Exception:  # noqa: BLE001 - a corrupt header is an absent index
            return None

    def has(self, name: str) -> bool:
        return name in self.header["sections"]

    def raw_sections(self) -> dict[str, tuple[bytes, int]] | None:
        """Every section as stored (compressed bytes, uncompressed length), checked; None when one
        does not check."""
        out = {}
        try:
            with open(self.dest, "rb") as f:
                for name, (off, n, raw_n, digest) in self.header["sections"].items():
                    f.seek(self.base + off)
                    comp = f.read(n)
                    if len(comp) != n or blake2b(comp, digest_size=16).hexdigest() != digest:
                        return None
                    out[name] = (comp, raw_n)
        except (OSError, ValueError, TypeError):
            return None
        return out

    def with_section(self, name: str, obj: Any, kind: str, path: str) -> None:
        """Rewrite this index file with one more section, the identity unchanged (when the file
        on disk is still the one read: another writer may have replaced it)."""
        self.with_sections({name: obj}, kind, path)

    def with_sections(self, objs: dict[str, Any], kind: str, path: str) -> None:
        """`with_section` for several sections at once (one rewrite)."""
        cur = IndexFile.open(self.dest, kind, path)
        if cur is None or cur.identity != self.identity:
            return
        raw = cur.raw_sections()
        if raw is None:
            return
        write(self.dest, kind, path, self.identity, objs, cur.extra, raw_sections=raw)

    def section(self, name: str) -> Any:
        """The decoded section, or None when it is missing or does not check."""
        mp, zlib = _codec()
        ent = self.header["sections"].get(name)
        if ent is None:
            return None
        try:
            off, n, raw_n, digest = ent
            if self.data is not None:
                comp = self.data[self.base + off:self.base + off + n]
            else:
                with open(self.dest, "rb") as f:
                    f.seek(self.base + off)
                    comp = f.read(n)
            if len(comp) != n or blake2b(comp, digest_size=16).hexdigest() != digest:
                return None
            raw = zlib.decompress(comp)
            if len(raw) != raw_n:
                return None
            return mp.loads(raw)
        except Exception:  # noqa: BLE001 - a corrupt section is a missing one
            return None


def clear_all() -> tuple[int, int]:
    """Remove every index file (all versions; the ranked search's database, index/ranked.py, with
    them) and the empty directories; (files, bytes)."""
    top = cache_dir()
    n = freed = 0
    if not top.is_dir():
        return 0, 0
    for dirpath, dirnames, filenames in os.walk(top, topdown=False):
        for name in filenames:
            if name.endswith(".idx") or name in ("ranked.sqlite", "ranked.sqlite-wal", "ranked.sqlite-shm") or (
                    os.path.basename(dirpath) == "fulltext" and name.startswith("text-")
                    and name.endswith((".sqlite", ".sqlite-wal", ".sqlite-shm"))):
                p = os.path.join(dirpath, name)
                try:
                    sz = os.lstat(p).st_size
                    os.unlink(p)
                    n += 1
                    freed += sz
                except OSError:
                    pass
        try:
            os.rmdir(dirpath)
        except OSError:
            pass
    return n, freed
