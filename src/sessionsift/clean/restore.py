"""`clean restore`, `clean verify`, `clean list`: reading the archive back.

restore ID, all or nothing: every item of the capture is validated first (a path is built only
from validated relative parts under the root -- the scan root recorded at capture, or ``--into
DIR`` -- and no item may lie under a symlink or a file of the capture); every object is then
decompressed into a staging dir in the archive's own ``tmp/`` (never in a client's folders),
bounded by its recorded size (a compression bomb stops there) and rehashed; only then is every
target checked (one that exists must be the captured item itself -- a retry is idempotent --
anything else is never overwritten) and each lands with ``link()``/``symlink()``/``mkdir()``
relative to parents opened without following a symlink; a failure takes back exactly what this
run placed. Modes and mtimes are set back (directories last). A Claude Code session then says
whether the client's retention will delete it again at its next start (its mtime is the original
one). A database session's rows are written as a JSON Lines file with ``--into DIR`` only:
sessionsift never writes a client's database.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import shutil
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from .. import ledger
from ..errors import StoreError, TargetError, UsageError
from .archive import CHUNK, Archive, Manifest, write_all
from .paths import CID, HEX64, PROVIDER, normal_abs, rel_parts


def status_of(m: Manifest, e: dict) -> str:
    ev = m.events(e["id"])
    for s in ("restored", "removed", "rolled-back"):
        if s in ev:
            return s
    if not e.get("delete"):
        return "protected" if e.get("action") == "protect" else "captured"
    return "interrupted" if "unlink-begin" in ev else "captured"


def find(m: Manifest, ident: str) -> dict:
    caps = m.captures()
    hit = [c for c in caps if c["id"] == ident]
    if not hit and len(ident) >= 4:
        hit = [c for c in caps if c["id"].startswith(ident)]
    if not hit:
        bysid = [c for c in caps if c.get("session_id") == ident or (len(ident) >= 4 and c.get("session_id", "").startswith(ident))]
        removed = [c for c in bysid if status_of(m, c) == "removed"]
        hit = removed[-1:] or bysid[-1:]
    ids = {c["id"] for c in hit}
    if len(ids) > 1:
        raise TargetError(f"capture id {ident!r} is ambiguous: {', '.join(sorted(ids))}")
    if not hit:
        raise TargetError(f"no capture {ident!r} in the archive (see `sessionsift clean list`)")
    return hit[0]


@dataclass
class Restored:
    capture: dict
    targets: list[str] = field(default_factory=list)
    files: int = 0
    bytes: int = 0
    retention: dict | None = None
    note: str | None = None
    already: int = 0
    """Files that were at their targets already with their captured bytes (a retry after an
    interrupted restore): taken as restored, not written again."""


TYPES = ("dir", "file", "symlink")


def _refuse(c: dict, why: str) -> TargetError:
    return TargetError(f"manifest entry {c.get('id')!r}: {why}: refused, nothing written")


def _parts(c: dict, rel) -> tuple[str, ...]:
    """The validated relative parts of a manifest path (the only manifest text a path is built
    from)."""
    parts = rel_parts(rel)
    if parts is None:
        raise _refuse(c, f"relative path {rel!r} is not a relative path of names (it escapes its root or is "
                         "not normal)")
    return parts


def _root_of(c: dict, into: str | None) -> str:
    """The root every target is placed under: ``--into DIR`` resolved, or the scan root recorded at
    capture -- absolute, normal, and reached through no symlink (every component is opened
    without following one when the files are placed)."""
    if into:
        return os.path.realpath(os.path.abspath(into))
    r = c.get("scan_root")
    if not normal_abs(r):
        raise _refuse(c, f"its scan root {r!r} is not an absolute normal path")
    if os.path.realpath(r) != r:
        raise TargetError(f"the recorded scan root {r} is reached through a symlink now ({os.path.realpath(r)}): "
                          "refused, nothing written", hint="restore it with --into DIR")
    return r


@dataclass
class _Item:
    parts: tuple[str, ...]
    it: dict
    staged: str | None = None


def _plan(c: dict, root: str, into: str | None) -> list[_Item]:
    """Every item validated before anything is read or written: its parts, its type and fields,
    that it is where the manifest says (``scan_root/rel``), no two alike, and that no item lies
    under a symlink or a file of the capture."""
    items = c.get("items")
    if not isinstance(items, list):
        raise _refuse(c, "it lists no items")
    out: list[_Item] = []
    kinds: dict[tuple[str, ...], str] = {}
    for it in items:
        if not isinstance(it, dict) or it.get("type") not in TYPES:
            raise _refuse(c, f"an item of unknown type {it.get('type') if isinstance(it, dict) else it!r}")
        parts = _parts(c, it.get("rel"))
        if not into and it.get("path") != os.path.join(root, *parts):
            raise _refuse(c, f"{it.get('path')!r} is not its relative path under its recorded scan root {root}")
        if parts in kinds:
            raise _refuse(c, f"{'/'.join(parts)!r} is listed twice")
        if not isinstance(it.get("mode"), int) or not isinstance(it.get("mtime_ns"), int):
            raise _refuse(c, f"{'/'.join(parts)!r} has no mode or mtime")
        if it["type"] == "file" and not (isinstance(it.get("sha256"), str) and HEX64.match(it["sha256"])
                                         and isinstance(it.get("size"), int) and it["size"] >= 0):
            raise _refuse(c, f"{'/'.join(parts)!r} has no valid sha256 and size")
        if it["type"] == "symlink" and not (isinstance(it.get("target"), str) and it["target"] and "\0" not in it["target"]):
            raise _refuse(c, f"{'/'.join(parts)!r} is a symlink without a target")
        kinds[parts] = it["type"]
        out.append(_Item(parts, it))
    for x in out:
        for k in range(1, len(x.parts)):
            above = kinds.get(x.parts[:k])
            if above is not None and above != "dir":
                raise _refuse(c, f"{'/'.join(x.parts)!r} lies under {'/'.join(x.parts[:k])!r}, a {above} of the "
                                 "capture (a path through a symlink is never followed)")
    order = {"dir": 0, "file": 1, "symlink": 2}
    out.sort(key=lambda x: (order[x.it["type"]], len(x.parts), x.parts))
    return out


def _stage(arch: Archive, c: dict, plan: list[_Item], sdir: str) -> None:
    """Decompress every file of the capture into ``sdir`` (the archive's own tmp/, outside every
    client's folders), each bounded by its recorded size (a compression bomb stops there) and
    rehashed, before anything is written at a target. One staged file per item (never shared)."""
    import zstandard

    need = sum(x.it["size"] for x in plan if x.it["type"] == "file")
    st = os.statvfs(sdir)
    if need > st.f_bavail * st.f_frsize:
        raise StoreError(f"restoring capture {c['id']} needs {need} bytes in {sdir}; "
                         f"{st.f_bavail * st.f_frsize} are free: nothing written")
    for n, x in enumerate(plan):
        if x.it["type"] != "file":
            continue
        sha, size = x.it["sha256"], x.it["size"]
        path = os.path.join(sdir, str(n))
        try:
            f = open(arch.object_path(sha), "rb")
        except FileNotFoundError:
            raise StoreError(f"capture {c['id']}: the object of {'/'.join(x.parts)} ({sha[:16]}...) is missing: "
                             "nothing restored") from None
        h = hashlib.sha256()
        got = 0
        try:
            with f, zstandard.ZstdDecompressor().stream_reader(f, read_across_frames=True) as r:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
                try:
                    while True:
                        b = r.read(min(CHUNK, size + 1 - got))
                        if not b:
                            break
                        got += len(b)
                        if got > size:
                            raise StoreError(f"capture {c['id']}: the object of {'/'.join(x.parts)} decompresses to "
                                             f"more than the {size} bytes recorded: damaged or forged, nothing restored")
                        h.update(b)
                        write_all(fd, b)
                    os.fsync(fd)
                finally:
                    os.close(fd)
        except zstandard.ZstdError as exc:
            raise StoreError(f"capture {c['id']}: the object of {'/'.join(x.parts)} does not verify "
                             f"(it does not decompress: {exc}): nothing restored") from None
        if h.hexdigest() != sha or got != size:
            raise StoreError(f"capture {c['id']}: the object of {'/'.join(x.parts)} does not verify (sha256 or size "
                             "differs from the manifest): nothing restored")
        os.chmod(path, x.it["mode"])
        os.utime(path, ns=(x.it["mtime_ns"], x.it["mtime_ns"]))
        x.staged = path


def _open_dir(base: int, name: str, create: bool, made: list | None) -> int:
    """``name`` under the directory ``base`` opened without following a symlink (created 0700
    when missing and ``create``; each one made is recorded in ``made`` as (parent fd dup, name))."""
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
    try:
        return os.open(name, flags, dir_fd=base)
    except FileNotFoundError:
        if not create:
            raise
    os.mkdir(name, 0o700, dir_fd=base)
    if made is not None:
        made.append((os.dup(base), name))
    return os.open(name, flags, dir_fd=base)


def _walk_root(root: str, made: list) -> int:
    """An fd of ``root``, every component from ``/`` opened without following a symlink (a
    missing one is made): a symlink anywhere on the way fails (ELOOP/ENOTDIR)."""
    fd = os.open("/", os.O_RDONLY | os.O_DIRECTORY)
    for part in [p for p in root.split("/") if p]:
        try:
            nfd = _open_dir(fd, part, True, made)
        finally:
            os.close(fd)
        fd = nfd
    return fd


def _same(it: dict, st: os.stat_result, pfd: int, name: str) -> bool:
    """What is at a target already is exactly the captured item (a retry after an interrupted
    restore): the same type, and a file's size and SHA-256 or a symlink's target."""
    import stat as S

    if it["type"] == "dir":
        return S.S_ISDIR(st.st_mode)
    if it["type"] == "symlink":
        return S.S_ISLNK(st.st_mode) and os.readlink(name, dir_fd=pfd) == it["target"]
    if not S.S_ISREG(st.st_mode) or st.st_size != it["size"]:
        return False
    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW, dir_fd=pfd)
    h = hashlib.sha256()
    with open(fd, "rb") as f:
        while True:
            b = f.read(CHUNK)
            if not b:
                break
            h.update(b)
    return h.hexdigest() == it["sha256"]


def _place(c: dict, root: str, plan: list[_Item], rfd: int, made: list) -> tuple[list, int, int]:
    """Put every item at its target. First every target is checked (an existing one must be the
    captured item itself: a retry is idempotent; anything else is never overwritten); then each
    one lands (``link``/``symlink``/``mkdir`` relative to a parent opened without following a
    symlink), recorded in ``placed`` so a failure takes back exactly what this run put."""
    placed: list = []
    dirs: dict[tuple[str, ...], int] = {(): rfd}

    def parent(parts: tuple[str, ...], create: bool) -> int | None:
        pp = parts[:-1]
        if pp in dirs:
            return dirs[pp]
        base = parent(pp, create)
        if base is None:
            return None
        try:
            fd = _open_dir(base, pp[-1], create, made)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise TargetError(f"{os.path.join(root, *pp)} is not a directory reached without a symlink "
                              f"({exc.strerror}): a target there could land outside {root}: refused, nothing "
                              "written") from None
        dirs[pp] = fd
        return fd

    todo: list[_Item] = []
    for x in plan:  # check every target before anything is placed
        pfd = parent(x.parts, False)
        if pfd is None:
            todo.append(x)
            continue
        try:
            st = os.lstat(x.parts[-1], dir_fd=pfd)
        except FileNotFoundError:
            todo.append(x)
            continue
        if not _same(x.it, st, pfd, x.parts[-1]):
            raise TargetError(f"{os.path.join(root, *x.parts)} exists and is not what was captured: restore never "
                              "overwrites (move it away, or --into DIR)")
    try:
        for x in todo:
            pfd = parent(x.parts, True)
            name = x.parts[-1]
            t = x.it["type"]
            if t == "dir":
                try:
                    os.mkdir(name, 0o700, dir_fd=pfd)
                    placed.append(("dir", os.dup(pfd), name, None))
                except FileExistsError:
                    pass  # made meanwhile as a parent of an earlier item
            elif t == "file":
                os.link(x.staged, name, dst_dir_fd=pfd)  # fails on an existing name: never overwrites
                placed.append(("file", os.dup(pfd), name, os.stat(x.staged).st_ino))
            else:
                os.symlink(x.it["target"], name, dir_fd=pfd)
                placed.append(("symlink", os.dup(pfd), name, x.it["target"]))
                os.utime(name, ns=(x.it["mtime_ns"],) * 2, dir_fd=pfd, follow_symlinks=False)
        for x in sorted(plan, key=lambda x: -len(x.parts)):  # directories last, deepest first
            if x.it["type"] == "dir":
                pfd = parent(x.parts, True)
                dfd = os.open(x.parts[-1], os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=pfd)
                try:
                    os.fchmod(dfd, x.it["mode"])
                    os.utime(dfd, ns=(x.it["mtime_ns"],) * 2)
                finally:
                    os.close(dfd)
        for fd in set(dirs.values()):
            try:
                os.fsync(fd)
            except OSError:
                pass
    except BaseException:
        _take_back(placed, made)
        raise
    finally:
        for k, fd in dirs.items():
            if k:
                os.close(fd)
    return placed, sum(1 for x in todo if x.it["type"] == "file"), sum(x.it["size"] for x in todo
                                                                       if x.it["type"] == "file")


def _take_back(placed: list, made: list) -> None:
    """Undo exactly what this run placed (a file only while it is still our staged inode)."""
    for kind, pfd, name, what in reversed(placed):
        try:
            if kind == "file":
                if os.lstat(name, dir_fd=pfd).st_ino == what:
                    os.unlink(name, dir_fd=pfd)
            elif kind == "symlink":
                if os.readlink(name, dir_fd=pfd) == what:
                    os.unlink(name, dir_fd=pfd)
            else:
                os.rmdir(name, dir_fd=pfd)
        except OSError:
            pass
    for pfd, name in reversed(made):
        try:
            os.rmdir(name, dir_fd=pfd)
        except OSError:
            pass


def _release(placed: list, made: list) -> None:
    for _k, pfd, _n, _w in placed:
        os.close(pfd)
    for pfd, _n in made:
        os.close(pfd)


def restore(arch: Archive, ident: str, into: str | None = None, now: datetime | None = None) -> Restored:
    """Put capture ``ident`` back, all or nothing (docs/clean.md "Restore"): every item validated,
    every object decompressed (bounded by its recorded size) and rehashed into the archive's own
    staging dir before any target is touched; every target checked; then each lands through
    parents opened without following a symlink; a failure takes back what this run placed. A
    retry after an interrupted restore takes what is already there with its captured bytes as
    restored."""
    m = arch.load()
    c = find(m, ident)
    if not (isinstance(c.get("id"), str) and CID.match(c["id"])):
        raise _refuse(c, "its capture id is not 16 hex digits")
    out = Restored(c)
    root = _root_of(c, into)
    if c.get("rows"):
        if not into:
            raise UsageError("this capture is a database session's rows; sessionsift never writes a client's "
                             "database: pass --into DIR to get them as a JSON Lines file")
        plan = _rows_plan(c)
    else:
        plan = _plan(c, root, into)
    with arch.locked():  # one writer of the archive's tmp/ at a time
        sdir = os.path.join(arch.root, "tmp", f"restore-{c['id']}-{os.getpid()}-{secrets.token_hex(4)}")
        os.mkdir(sdir, 0o700)
        made: list = []
        try:
            _stage(arch, c, plan, sdir)
            rfd = _walk_root(root, made)
            try:
                placed, out.files, out.bytes = _place(c, root, plan, rfd, made)
                out.already = sum(1 for x in plan if x.it["type"] == "file") - out.files
            except BaseException:
                _take_back([], made)
                raise
            finally:
                os.close(rfd)
            _release(placed, made)
        finally:
            shutil.rmtree(sdir, ignore_errors=True)
        tops = {os.path.normpath(p) for p in c.get("top", []) if isinstance(p, str)}
        out.targets = [os.path.join(root, *x.parts) for x in plan
                       if c.get("rows") or os.path.normpath(x.it.get("path", "")) in tops]
        if c.get("rows"):
            out.note = "the rows as JSON Lines ({locator, native, instant, raw}); the client's database was not touched"
        try:
            arch.append({"v": 1, "type": "event", "event": "exported-rows" if c.get("rows") else "restored",
                         "capture_id": c["id"], "instant": ledger.now_iso(), "root": root,
                         "placed_files": out.files})
        except OSError as exc:
            out.note = ((out.note + "; ") if out.note else "") + (
                f"every file is back, but the `restored` event could not be written ({exc.strerror or exc})")
    if not c.get("rows"):
        out.retention = _retention(c, root, now)
    return out


def _rows_plan(c: dict) -> list[_Item]:
    """A database session's rows as one file ``<provider>-<session>.rows.jsonl`` under --into: the
    provider name must be one (no path in it), the session id is reduced to safe characters."""
    prov = c.get("provider")
    if not isinstance(prov, str) or not PROVIDER.match(prov):
        raise _refuse(c, f"provider {prov!r} is not a provider name")
    rows = c["rows"]
    if not (isinstance(rows, dict) and isinstance(rows.get("sha256"), str) and HEX64.match(rows["sha256"])
            and isinstance(rows.get("size"), int) and rows["size"] >= 0):
        raise _refuse(c, "its rows object has no valid sha256 and size")
    sid = c.get("session_id") if isinstance(c.get("session_id"), str) else ""
    safe = "".join(ch if ch.isascii() and (ch.isalnum() or ch in "-_") else "_" for ch in sid)[:128] or "session"
    it = {"type": "file", "sha256": rows["sha256"], "size": rows["size"], "mode": 0o600,
          "mtime_ns": int(datetime.now(timezone.utc).timestamp() * 1e9)}
    return [_Item((f"{prov}-{safe}.rows.jsonl",), it)]


def _retention(c: dict, root: str, now: datetime | None) -> dict:
    from ..providers import load

    cls = load(c["provider"])
    rules = cls().retention() if cls is not None else None
    if rules is None:
        return {"known": False, "note": "no client-side retention of this provider is modelled: it is not known "
                                        "to delete its sessions by age"}
    home = Path(root)
    main = next((i for i in c["items"] if i["top"] == 0), None)
    if main is None:
        return {"known": False, "note": "no transcript in this capture"}
    p = rules.period(home, None, policy=False)
    mt = main["mtime_ns"] / 1e9
    now = now or datetime.now(timezone.utc)
    if p.days is None:
        return {"known": True, "deleted_again_at_next_start": False, "period_days": None, "note": p.skipped}
    from datetime import timedelta

    at = datetime.fromtimestamp(mt, timezone.utc) + timedelta(days=p.days)
    again = at <= now
    return {"known": True, "deleted_again_at_next_start": again, "period_days": p.days, "period_source": p.source,
            "projected_deletion": at.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "note": ("its original mtime is older than cleanupPeriodDays: Claude Code deletes it again at its next "
                     "start unless you `touch` the transcript or raise cleanupPeriodDays" if again else
                     "within the retention period") + f" (cleanupPeriodDays {p.days} from {p.source}; project, "
                                                       "flag and policy layers not consulted here)"}


# -- verify -------------------------------------------------------------------------------------


@dataclass
class Check:
    line: int | None
    capture_id: str | None
    ok: bool
    what: str
    problems: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"line": self.line, "capture_id": self.capture_id, "ok": self.ok, "what": self.what,
                "problems": self.problems}


def verify(arch: Archive) -> tuple[list[Check], Manifest]:
    m = arch.load()
    out: list[Check] = _archive_checks(arch, m)
    for ln in m.lines:
        e = ln.entry or {}
        if not ln.ok:
            out.append(Check(ln.no, e.get("id") or e.get("capture_id"), False, "manifest line", [ln.why or "bad"]))
            continue
        if e.get("type") != "capture":
            out.append(Check(ln.no, e.get("capture_id"), True, f"event {e.get('event')}"))
            continue
        probs = []
        objs = [i for i in e.get("items", []) if i.get("type") == "file"] + ([e["rows"]] if e.get("rows") else [])
        for o in objs:
            ok, why = arch.check(o["sha256"], o.get("size"))
            if not ok:
                probs.append(f"{o.get('path') or 'rows'}: {why}")
        out.append(Check(ln.no, e["id"], not probs, f"capture of {e['provider']} {e['session_id']} "
                                                    f"({len(objs)} object(s) decompressed and rehashed)", probs))
    return out, m


def _archive_checks(arch: Archive, m: Manifest) -> list[Check]:
    """What must hold of the archive as a whole: a manifest that can be read, and one that is
    there whenever anything says captures were made into it (the ledger's capture entries, the
    key, stored objects); every capture the ledger records has its authenticated entry (a lost
    LAST line is seen here, where the chain alone cannot tell it from one never written)."""
    if m.state.startswith("unreadable"):
        return [Check(None, None, False, "manifest", [f"{arch.manifest_path} is {m.state}"])]
    led = ledger.read_all(arch.root.parent)
    caps = [x for x in led.rows if x.get("kind") == "capture" and isinstance(x.get("extra"), dict)
            and x["extra"].get("capture_id")]
    if m.state == "absent":
        probs = []
        if caps:
            probs.append(f"the ledger records {len(caps)} capture(s) into this archive")
        if (arch.root / "key").exists():
            probs.append("its key exists")
        try:
            objs = sum(len(os.listdir(d)) for d in (arch.root / "objects").iterdir() if d.is_dir())
        except OSError:
            objs = 0
        if objs:
            probs.append(f"{objs} object(s) are stored")
        if probs:
            return [Check(None, None, False, "manifest", [
                f"{arch.manifest_path} is missing, yet " + ", ".join(probs) + (
                    "" if caps else " (a run stopped before its first manifest line leaves a key and objects "
                                    "and nothing else: the next capture writes the manifest)")])]
        return []
    known = {c.get("id") for c in m.captures()}
    lost = sorted({x["extra"]["capture_id"] for x in caps} - known)
    if lost:
        return [Check(None, None, False, "manifest",
                      [f"the ledger records {len(lost)} capture(s) the manifest holds no authenticated entry for "
                       f"(lines removed?): {', '.join(lost[:5])}"])]
    return []
