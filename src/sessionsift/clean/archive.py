"""The archive: content-addressed compressed objects and an authenticated manifest.

Layout under ``<data dir>/archive/`` (``ledger.data_dir()``; every dir 0700, every file 0600):

- ``objects/<aa>/<sha256>.zst``: one file's bytes, zstd level ``LEVEL``, named by the SHA-256 of the
  UNCOMPRESSED bytes (so identical files are stored once);
- ``tmp/``: objects being written (a crash leaves them here; removed under the lock by the next run);
- ``manifest.jsonl``: append-only JSON Lines, each line authenticated with HMAC-SHA256 under ``key``
  over its canonical JSON (sorted keys, without ``hmac``) and chained: ``prev`` is the previous
  line's ``hmac``, so an edited, removed or reordered line fails ``verify`` (a removed LAST line
  cannot be told from one never written: ``verify`` says so);
- ``key``: 32 random bytes, created once with O_EXCL, 0600;
- ``lock``: ``flock``\\ ed by every run that writes (one capture at a time).

This module handles bytes only: it never parses what it stores.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import hmac
import os
import secrets
import shutil
import stat as S
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

import orjson

from .. import ledger
from ..errors import StoreError
from .paths import HEX64

LEVEL = 3
CODEC = f"zstd-{LEVEL}"
KEY_BYTES = 32
CHUNK = 1 << 20


def archive_dir(data: Path | None = None) -> Path:
    return (data if data is not None else ledger.data_dir()) / "archive"


def _canon(entry: dict) -> bytes:
    return orjson.dumps({k: v for k, v in entry.items() if k != "hmac"}, option=orjson.OPT_SORT_KEYS)


@dataclass
class Line:
    no: int
    entry: dict | None
    ok: bool
    why: str | None = None


@dataclass
class Manifest:
    lines: list[Line] = field(default_factory=list)
    state: str = "ok"
    """``ok`` | ``absent`` | ``unreadable: <why>``."""

    @property
    def entries(self) -> list[dict]:
        """Authenticated entries, in order (a line failing its HMAC or chain is not among them)."""
        return [ln.entry for ln in self.lines if ln.ok and ln.entry is not None]

    @property
    def bad(self) -> list[Line]:
        return [ln for ln in self.lines if not ln.ok]

    def captures(self) -> list[dict]:
        return [e for e in self.entries if e.get("type") == "capture"]

    def events(self, cid: str) -> list[str]:
        return [e.get("event") for e in self.entries if e.get("type") == "event" and e.get("capture_id") == cid]

    def capture(self, cid: str) -> dict | None:
        for e in self.captures():
            if e.get("id") == cid:
                return e
        return None


class Archive:
    def __init__(self, root: Path):
        self.root = root
        self._tail: tuple[int, str] | None = None
        """(manifest size, last line's hmac) after our own last append: the next append (under the
        same lock) need not re-read the whole manifest."""

    # -- places --------------------------------------------------------------------------------
    @property
    def manifest_path(self) -> Path:
        return self.root / "manifest.jsonl"

    def object_path(self, sha: str) -> Path:
        return self.root / "objects" / sha[:2] / f"{sha}.zst"

    def exists(self) -> bool:
        return self.manifest_path.exists()

    def ensure(self) -> None:
        for d in (self.root, self.root / "objects", self.root / "tmp"):
            ledger.ensure_private_dir(d)

    def key(self, create: bool = False) -> bytes | None:
        """The 32-byte manifest key; None when there is none (and ``create`` is False).

        A key is made only for an archive that holds nothing yet: where a manifest or stored
        objects exist, a missing or damaged key is refused (:class:`KeyMissing`), never replaced --
        a new key would make every earlier capture unauthenticated, hidden from ``list`` and
        unrestorable."""
        p = self.root / "key"
        try:
            k = p.read_bytes()
        except FileNotFoundError:
            k = None
        if k is not None:
            if len(k) != KEY_BYTES:
                raise KeyMissing(self, f"the archive key {p} is damaged ({len(k)} bytes, not {KEY_BYTES})")
            return k
        if not create:
            return None
        held = self._holds()
        if held:
            raise KeyMissing(self, f"the archive key {p} is missing while {held}")
        self.ensure()
        try:
            fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            return self.key()
        try:
            write_all(fd, secrets.token_bytes(KEY_BYTES))
            os.fsync(fd)
        except OSError:
            os.close(fd)
            os.unlink(p)  # never leave a short key behind
            raise
        os.close(fd)
        fsync_dir(self.root)
        return self.key()

    def check_key(self) -> None:
        """Raise :class:`KeyMissing` when the key is damaged, or missing while the archive holds
        captures; make nothing."""
        if self.key() is None and self._holds():
            self.key(create=True)  # raises: it never makes a key where captures exist

    def _holds(self) -> str | None:
        """What says this archive already holds captures (then no key may be made), or None."""
        try:
            if self.manifest_path.stat().st_size:
                return f"its manifest {self.manifest_path} holds captures"
        except FileNotFoundError:
            pass
        except OSError as exc:
            return f"its manifest {self.manifest_path} cannot be read ({exc.strerror})"
        led = ledger.read_all(self.root.parent)
        n = sum(1 for x in led.rows if x.get("kind") == "capture")
        if n:
            return f"the ledger {ledger.ledger_path(self.root.parent)} records {n} capture(s) into it"
        return None

    @contextmanager
    def locked(self) -> Iterator[None]:
        self.ensure()
        fd = os.open(self.root / "lock", os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            for t in os.listdir(self.root / "tmp"):  # crash leftovers: no other writer holds the lock
                p = self.root / "tmp" / t
                try:
                    if p.is_dir() and not p.is_symlink():
                        shutil.rmtree(p)  # a restore's staging dir
                    else:
                        os.unlink(p)
                except OSError:
                    pass
            yield
        finally:
            os.close(fd)

    # -- objects -------------------------------------------------------------------------------
    def put(self, src: str, step: Callable[[str], None]) -> dict:
        """Stream one file into the store. Returns {sha256, size, stored_size, stat} where ``stat``
        is the source's (size, mtime_ns, ino, dev) taken BEFORE reading."""
        import zstandard

        st0 = os.lstat(src)
        tmp = self.root / "tmp" / f"{os.getpid()}-{secrets.token_hex(6)}"
        h = hashlib.sha256()
        n = 0
        cctx = zstandard.ZstdCompressor(level=LEVEL, write_checksum=True)
        with open(src, "rb") as f, open(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as out:
            with cctx.stream_writer(out, closefd=False) as w:
                while True:
                    b = f.read(CHUNK)
                    if not b:
                        break
                    h.update(b)
                    n += len(b)
                    w.write(b)
                    step("stream_chunk")
            out.flush()
            os.fsync(out.fileno())
        sha = h.hexdigest()
        dest = self.object_path(sha)
        if not dest.parent.is_dir():
            ledger.ensure_private_dir(dest.parent)
            _fsync_dir(dest.parent.parent)
        if dest.exists() and self.check(sha, n)[0]:
            os.unlink(tmp)  # already stored (same bytes)
        else:
            os.replace(tmp, dest)
            _fsync_dir(dest.parent)
        step("object_stored")
        return {"sha256": sha, "size": n, "stored_size": os.stat(dest).st_size,
                "stat": (st0.st_size, st0.st_mtime_ns, st0.st_ino, st0.st_dev)}

    def check(self, sha: str, size: int | None) -> tuple[bool, str]:
        """Decompress an object and rehash it: (ok, why)."""
        import zstandard

        if not isinstance(sha, str) or not HEX64.match(sha):
            return False, f"{sha!r} is not a SHA-256 (a damaged or forged manifest entry)"
        p = self.object_path(sha)
        h = hashlib.sha256()
        n = 0
        cap = size + 1 if isinstance(size, int) and size >= 0 else None  # a bomb is stopped past its size
        try:
            with open(p, "rb") as f, zstandard.ZstdDecompressor().stream_reader(f, read_across_frames=True) as r:
                while True:
                    b = r.read(CHUNK if cap is None else min(CHUNK, cap - n))
                    if not b:
                        break
                    h.update(b)
                    n += len(b)
                    if cap is not None and n >= cap:
                        return False, f"object {sha[:16]}... decompresses to more than the {size} bytes recorded"
        except FileNotFoundError:
            return False, f"object {sha[:16]}... is missing"
        except (OSError, zstandard.ZstdError) as exc:
            return False, f"object {sha[:16]}... unreadable: {exc}"
        if h.hexdigest() != sha:
            return False, f"object {sha[:16]}... decompresses to other bytes (sha256 {h.hexdigest()[:16]}...)"
        if size is not None and n != size:
            return False, f"object {sha[:16]}... holds {n} bytes, the manifest says {size}"
        return True, "decompressed and rehashed"

    def present(self, sha: str, stored_size: int | None) -> tuple[bool, str]:
        """Cheap presence check (no decompression): exists with its stored size."""
        if not isinstance(sha, str) or not HEX64.match(sha):
            return False, f"{sha!r} is not a SHA-256 (a damaged or forged manifest entry)"
        try:
            st = os.stat(self.object_path(sha))
        except OSError:
            return False, f"object {sha[:16]}... is missing"
        if stored_size is not None and st.st_size != stored_size:
            return False, f"object {sha[:16]}... is {st.st_size} bytes, stored as {stored_size}"
        return True, "present"

    def open_object(self, sha: str):
        import zstandard

        f = open(self.object_path(sha), "rb")
        return f, zstandard.ZstdDecompressor().stream_reader(f, read_across_frames=True)

    # -- manifest ------------------------------------------------------------------------------
    def load(self) -> Manifest:
        m = Manifest()
        try:
            key, why = self.key(), None
        except KeyMissing as exc:
            key, why = None, str(exc).split(": refusing", 1)[0]
        try:
            raw = self.manifest_path.read_bytes()
        except FileNotFoundError:
            m.state = "absent"
            return m
        except OSError as exc:
            m.state = f"unreadable: {exc.strerror or exc}"
            return m
        if key is None and raw.strip():
            m.state = f"unreadable: {why or 'the archive key ' + str(self.root / 'key') + ' is missing'}: no line can be authenticated"
        prev = ""
        for i, line in enumerate(raw.split(b"\n"), 1):
            if not line.strip():
                continue
            try:
                e = orjson.loads(line)
                if not isinstance(e, dict):
                    raise ValueError
            except (orjson.JSONDecodeError, ValueError):
                m.lines.append(Line(i, None, False, "not a JSON object (a torn or damaged line)"))
                continue
            if key is None:
                m.lines.append(Line(i, e, False, "no key file: the line cannot be authenticated"))
                continue
            want = hmac.new(key, _canon(e), hashlib.sha256).hexdigest()
            if not hmac.compare_digest(want, str(e.get("hmac", ""))):
                m.lines.append(Line(i, e, False, "HMAC does not match: the line was changed or not written by this archive"))
                continue
            if e.get("prev", "") != prev:
                m.lines.append(Line(i, e, False, "chain broken: a line before it was removed, changed or reordered"))
                prev = e["hmac"]
                continue
            prev = e["hmac"]
            m.lines.append(Line(i, ledger.names_in(e), True))
        return m

    def append(self, entry: dict, durable: bool = True) -> dict:
        """Authenticate and append one entry (caller holds the lock). Returns the written entry.
        ``durable=False`` for a line whose loss in a power cut changes nothing recovery does."""
        key = self.key(create=True)
        assert key is not None
        try:
            size = os.stat(self.manifest_path).st_size
        except FileNotFoundError:
            size = 0
        if self._tail is not None and self._tail[0] == size:
            prev = self._tail[1]
        else:
            prev = ""
            for ln in self.load().lines:
                if ln.entry is not None and isinstance(ln.entry.get("hmac"), str):
                    prev = ln.entry["hmac"]
        e = ledger.names_out(dict(entry))  # names are bytes: any of them is stored, as {"bytes": b64}
        e.pop("hmac", None)
        e["prev"] = prev
        e["hmac"] = hmac.new(key, _canon(e), hashlib.sha256).hexdigest()
        line = orjson.dumps(e)
        self._tail = None
        off = ledger.append_line(self.manifest_path, line, durable)
        self._read_back(off, line, e, key)
        self._tail = (off + len(line) + 1, e["hmac"])
        return ledger.names_in(e)

    def _read_back(self, off: int, line: bytes, e: dict, key: bytes) -> None:
        """The line as it is on disk now, at ``off``: exactly the bytes of ``e`` as written (so the
        disk holds ``e`` whole), and ``e`` authenticates under ``key`` -- else
        :class:`ManifestWriteFailed`. Nothing is parsed: the bytes are compared."""
        try:
            with open(self.manifest_path, "rb") as f:
                f.seek(off)
                got = f.read(len(line) + 2)
        except OSError as exc:
            raise ManifestWriteFailed(exc.errno or errno.EIO, f"the manifest line just written cannot be read back: "
                                                              f"{exc.strerror or exc}") from exc
        if got != line + b"\n":
            raise ManifestWriteFailed(errno.EIO, "the manifest line just written does not read back as written")
        if not hmac.compare_digest(hmac.new(key, _canon(e), hashlib.sha256).hexdigest(), e["hmac"]):
            raise ManifestWriteFailed(errno.EIO, "the manifest line just written does not authenticate")


class KeyMissing(StoreError):
    """The archive holds captures and its key is missing or damaged: nothing is written (exit 4)."""

    def __init__(self, arch: "Archive", what: str):
        super().__init__(f"{what}: refusing to make a new key (every earlier capture would become "
                         "unauthenticated, hidden from `clean list` and unrestorable)")
        self.hint = (f"put the key back from a backup of {arch.root} (the file `key`, 32 bytes, mode 0600); "
                     f"the captured objects are still under {arch.root / 'objects'}. To start an archive anew "
                     f"instead, move {arch.root} aside (its captures stay readable with their own key)")


write_all = ledger.write_all


class ManifestWriteFailed(OSError):
    """A manifest line could not be written whole and read back as written: nothing that
    depends on it may happen (the caller moves no file)."""


def _fsync_dir(d: Path) -> None:
    try:
        fd = os.open(d, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def fsync_dir(d: Path | str) -> None:
    _fsync_dir(Path(d))


def mode_of(st: os.stat_result) -> int:
    return S.S_IMODE(st.st_mode)
