"""`clean restore`, `clean verify`, `clean list`: reading the archive back.

restore ID: refuses to overwrite anything (every target is checked before one byte is written, and
each file lands with ``link()``, which fails on an existing name); every target must lie under the
scan root recorded at capture (or ``--into DIR``), through real directories only (a symlinked
parent pointing elsewhere is refused); every file is decompressed into a temp file beside its
target and rehashed before it is linked in; modes and mtimes are set back (directories last). A
Claude Code session then says whether the client's retention will delete it again at its next
start (its mtime is the original one). A database session's rows are written as a JSON Lines file
with ``--into DIR`` only: sessionsift never writes a client's database.
"""

from __future__ import annotations

import hashlib
import os
import secrets
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from .. import ledger
from ..errors import TargetError, UsageError
from .archive import CHUNK, Archive, Manifest, fsync_dir


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


def _under(path: str, root: str) -> bool:
    p, r = os.path.normpath(path), os.path.normpath(root)
    return p == r or p.startswith(r.rstrip("/") + "/")


def _real_parent_ok(target: str, root: str) -> bool:
    """The deepest existing ancestor of ``target`` resolves under ``root`` resolved (no symlinked
    directory leads elsewhere); when ``root`` itself is gone, that ancestor is an ancestor of it
    reached through no symlink."""
    d = os.path.dirname(target)
    while not os.path.lexists(d) and d != os.path.dirname(d):
        d = os.path.dirname(d)
    if os.path.lexists(root):
        return _under(os.path.realpath(d), os.path.realpath(root))
    return _under(root, d) and os.path.realpath(d) == os.path.normpath(os.path.abspath(d))


def restore(arch: Archive, ident: str, into: str | None = None, now: datetime | None = None) -> Restored:
    m = arch.load()
    c = find(m, ident)
    out = Restored(c)
    root = os.path.abspath(into) if into else c["scan_root"]
    if c.get("rows"):
        if not into:
            raise UsageError("this capture is a database session's rows; sessionsift never writes a client's "
                             "database: pass --into DIR to get them as a JSON Lines file")
        return _restore_rows(arch, c, root, out)
    items = c.get("items", [])
    targets = []
    for it in items:
        rel = it["rel"]
        if os.path.isabs(rel) or ".." in Path(rel).parts:
            raise TargetError(f"manifest entry {c['id']}: relative path {rel!r} escapes its root: refused")
        t = os.path.join(root, rel)
        if not into and os.path.normpath(t) != os.path.normpath(it["path"]):
            raise TargetError(f"manifest entry {c['id']}: {it['path']} is not under its recorded scan root {root}: refused")
        if not _under(t, root) or not _real_parent_ok(t, root):
            raise TargetError(f"{t} would land outside {root} (through a symlinked directory?): refused")
        if os.path.lexists(t):
            raise TargetError(f"{t} exists: restore never overwrites (move it away, or --into DIR)")
        targets.append((t, it))
    for t, it in targets:  # directories first, files, then symlinks; mtimes of dirs at the end
        if it["type"] == "dir":
            os.makedirs(t, exist_ok=False, mode=0o700)
    for t, it in targets:
        if it["type"] == "file":
            os.makedirs(os.path.dirname(t), exist_ok=True)
            _write(arch, it, t)
            out.files += 1
            out.bytes += it["size"]
        elif it["type"] == "symlink":
            os.makedirs(os.path.dirname(t), exist_ok=True)
            os.symlink(it["target"], t)
    for t, it in sorted(targets, key=lambda x: -len(x[0])):
        if it["type"] == "dir":
            os.chmod(t, it["mode"])
            os.utime(t, ns=(it["mtime_ns"], it["mtime_ns"]))
    tops = {os.path.normpath(p) for p in c.get("top", [])}
    out.targets = [t for t, it in targets if os.path.normpath(it["path"]) in tops]
    with arch.locked():
        arch.append({"v": 1, "type": "event", "event": "restored", "capture_id": c["id"], "instant": ledger.now_iso(),
                     "root": root})
    out.retention = _retention(c, root, now)
    return out


def _write(arch: Archive, it: dict, t: str) -> None:
    tmp = os.path.join(os.path.dirname(t), f".ssift-restore-{secrets.token_hex(6)}")
    h = hashlib.sha256()
    n = 0
    f, r = arch.open_object(it["sha256"])
    try:
        with open(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as w:
            while True:
                b = r.read(CHUNK)
                if not b:
                    break
                h.update(b)
                n += len(b)
                w.write(b)
            w.flush()
            os.fsync(w.fileno())
    finally:
        r.close()
        f.close()
    if h.hexdigest() != it["sha256"] or n != it["size"]:
        os.unlink(tmp)
        raise TargetError(f"the archive copy of {it['path']} does not verify (sha256 or size differs): not restored")
    os.chmod(tmp, it["mode"])
    os.utime(tmp, ns=(it["mtime_ns"], it["mtime_ns"]))
    try:
        os.link(tmp, t)  # fails if the name exists: never overwrites
    finally:
        os.unlink(tmp)
    fsync_dir(os.path.dirname(t))


def _restore_rows(arch: Archive, c: dict, root: str, out: Restored) -> Restored:
    os.makedirs(root, exist_ok=True)
    safe = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in c["session_id"])
    t = os.path.join(root, f"{c['provider']}-{safe}.rows.jsonl")
    if os.path.lexists(t):
        raise TargetError(f"{t} exists: restore never overwrites")
    it = dict(c["rows"], path=t, mode=0o600, mtime_ns=int(datetime.now(timezone.utc).timestamp() * 1e9))
    _write(arch, it, t)
    out.targets, out.files, out.bytes = [t], 1, c["rows"]["size"]
    out.note = "the rows as JSON Lines ({locator, native, instant, raw}); the client's database was not touched"
    with arch.locked():
        arch.append({"v": 1, "type": "event", "event": "exported-rows", "capture_id": c["id"],
                     "instant": ledger.now_iso(), "path": t})
    return out


def _retention(c: dict, root: str, now: datetime | None) -> dict:
    if c["provider"] != "claude-code":
        return {"known": False, "note": "no client-side retention of this provider is modelled: it is not known "
                                        "to delete its sessions by age"}
    from . import retention as RT

    home = Path(root)
    main = next((i for i in c["items"] if i["top"] == 0), None)
    if main is None:
        return {"known": False, "note": "no transcript in this capture"}
    p = RT.period(home, None, None)
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
