"""The deleting component: capture a session's whole footprint into the archive, then (capture,
not protect) remove it -- as one unit, never half of it.

It never reads what it deletes: the only operations on a session's bytes are SHA-256 and zstd
(archive.py). Age, activity and kept come from the scan layer, which ran before; what arrives here
is a :class:`Plan` (paths, the scan root, the fingerprint, the gates' reasons).

The protocol for one session (each step is a :func:`step` point a test can crash at):

1. inventory the footprint (files, dirs, symlinks; each path must lie under the scan root);
2. stream every file into the archive (content-addressed by SHA-256), ``fsync``;
3. decompress every object and rehash it;
4. re-stat every source: size and mtime unchanged and no entry added or removed, else ABORT the
   session (a client is appending) -- nothing was changed at the source;
5. append the manifest entry (HMAC-SHA256, chained), then a ledger entry (``kind: capture``);
   ``protect`` ends here;
6. ``os.replace`` every top-level footprint entry to a hidden sibling
   ``.<name>.ssift-del-<capture id>`` (never matched by any client's session discovery);
7. verify every hidden entry again against the manifest (names, sizes, SHA-256); if what landed is
   not what was captured, link/rename every entry back under its own name (event ``rolled-back``);
8. event ``unlink-begin``, unlink the hidden entries, event ``removed``.

A crash at any point leaves each session intact at its path or verified in the archive with its
manifest entry; :func:`recover` (run first, under the archive lock) finishes an interrupted session:
after ``unlink-begin`` it verifies and unlinks what is left; before it, it puts every hidden entry
back under its own name (the next pass captures it again, reusing the stored objects).
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import shutil
import stat as S
from dataclasses import dataclass, field
from typing import Callable

from .. import __version__, ledger
from ..worktrees import procs as P
from .archive import CODEC, Archive, fsync_dir
from .paths import entry_problem

FAULT: Callable[[str], None] | None = None
"""Test hook: called with the step name at every step (fault injection raises or kills here)."""


def step(name: str) -> None:
    if FAULT is not None:
        FAULT(name)


class Abort(Exception):
    """This session cannot be captured now; nothing at its source was changed."""


@dataclass
class Plan:
    provider: str
    session_id: str
    scan_root: str
    top: list[str]
    fingerprint: str
    delete: bool
    waived_kept: bool = False
    gates: dict = field(default_factory=dict)
    last_at: str | None = None


@dataclass
class Result:
    provider: str
    session_id: str | None
    status: str
    """``removed`` | ``captured`` (protect) | ``aborted`` | ``rolled-back`` | ``failed``."""
    capture_id: str | None = None
    reason: str | None = None
    files: int = 0
    bytes: int = 0
    stored: int = 0
    path: str | None = None
    """Recovery of a hidden entry no capture entry names: where it is now (its session unknown)."""

    def to_json(self) -> dict:
        return {"provider": self.provider, "session_id": self.session_id, "status": self.status,
                "capture_id": self.capture_id, "reason": self.reason, "files": self.files, "bytes": self.bytes,
                "stored_bytes": self.stored, "path": self.path}


def hidden_name(path: str, cid: str) -> str:
    d, n = os.path.split(path.rstrip("/"))
    return os.path.join(d, f".{n}.ssift-del-{cid}")


def _rel(path: str, root: str) -> str:
    rp = os.path.normpath(path)
    rr = os.path.normpath(root)
    if not (rp == rr or rp.startswith(rr.rstrip("/") + "/")):
        raise Abort(f"{path} is not under the scan root {root}")
    real_parent, real_root = os.path.realpath(os.path.dirname(rp)), os.path.realpath(rr)
    if not (real_parent == real_root or real_parent.startswith(real_root.rstrip("/") + "/")):
        raise Abort(f"{path} resolves outside the scan root {root}")
    return os.path.relpath(rp, rr)


def inventory(top: list[str], root: str) -> list[dict]:
    """Every item of the footprint: {top, path, rel, type, mode, mtime_ns, size, ino, target}."""
    out: list[dict] = []
    for i, t in enumerate(top):
        _rel(t, root)
        for path in _walk(t):
            try:
                st = os.lstat(path)
            except FileNotFoundError:
                raise Abort(f"{path} vanished while being listed")
            m = st.st_mode
            typ = "dir" if S.S_ISDIR(m) else "file" if S.S_ISREG(m) else "symlink" if S.S_ISLNK(m) else None
            if typ is None:
                raise Abort(f"{path} is neither a file, a directory nor a symlink")
            it = {"top": i, "path": path, "rel": os.path.relpath(path, root), "type": typ, "mode": S.S_IMODE(m),
                  "mtime_ns": st.st_mtime_ns, "size": st.st_size if typ == "file" else 0, "ino": st.st_ino}
            if typ == "symlink":
                it["target"] = os.readlink(path)
            out.append(it)
    return out


def _walk(top: str):
    yield top
    try:
        if not S.S_ISDIR(os.lstat(top).st_mode):
            return
        names = sorted(os.listdir(top))
    except FileNotFoundError:
        return
    for n in names:
        yield from _walk(os.path.join(top, n))


def _shape(items: list[dict]) -> list[tuple]:
    return [(i["rel"], i["type"], i["size"], (i["mtime_ns"], i["ino"]) if i["type"] == "file" else None,
             i.get("target")) for i in items]


def capture_id(plan: Plan, instant: str) -> str:
    # names are bytes: a session id from a file name may hold undecodable bytes (surrogate escapes)
    h = hashlib.sha256("\0".join([plan.provider, plan.session_id, plan.fingerprint, instant])
                       .encode("utf-8", "surrogateescape"))
    return h.hexdigest()[:16]


def run(arch: Archive, plan: Plan) -> Result:
    """Capture (and with ``plan.delete`` remove) one session. Caller holds ``arch.locked()``."""
    res = Result(plan.provider, plan.session_id, "failed")
    try:
        items = inventory(plan.top, plan.scan_root)
        step("inventory")
        before = _shape(items)
        for it in items:
            if it["type"] != "file":
                continue
            info = arch.put(it["path"], step)
            size0, mt0, ino0, _dev = info["stat"]
            if (size0, mt0, ino0) != (it["size"], it["mtime_ns"], it["ino"]) or info["size"] != it["size"]:
                raise Abort(f"{it['path']} changed while being read (a client is appending?)")
            it.update(sha256=info["sha256"], stored_size=info["stored_size"])
        step("stored")
        for it in items:
            if it["type"] == "file":
                ok, why = arch.check(it["sha256"], it["size"])
                if not ok:
                    raise Abort(f"the archive copy of {it['path']} does not verify: {why}")
        step("verified")
        again = inventory(plan.top, plan.scan_root)
        if _shape(again) != before:
            raise Abort("the session's files changed during capture (a client is appending?): left as it was")
        step("restat")
        fingerprint = ledger.fingerprint(plan.top)  # of exactly the bytes captured (unchanged since)
        if _shape(inventory(plan.top, plan.scan_root)) != before:
            raise Abort("the session's files changed during capture (a client is appending?): left as it was")
    except Abort as exc:
        res.status, res.reason = "aborted", str(exc)
        return res
    instant = ledger.now_iso()
    cid = capture_id(plan, instant)
    entry = {"v": 1, "type": "capture", "id": cid, "action": "capture" if plan.delete else "protect",
             "provider": plan.provider, "session_id": plan.session_id, "scan_root": plan.scan_root,
             "fingerprint": fingerprint, "scan_fingerprint": plan.fingerprint, "instant": instant,
             "delete": plan.delete,
             "waived_kept": plan.waived_kept, "gates": plan.gates, "last_at": plan.last_at, "codec": CODEC,
             "reader_version": __version__, "top": plan.top,
             "items": [{k: v for k, v in it.items() if k != "ino"} for it in items]}
    arch.append(entry)
    step("manifest")
    files = [it for it in items if it["type"] == "file"]
    res.capture_id, res.files = cid, len(files)
    res.bytes = sum(it["size"] for it in files)
    res.stored = sum(it["stored_size"] for it in files)
    if files:
        ledger.record(kind="capture", provider=plan.provider, session_id=plan.session_id,
                      fingerprint=fingerprint, path=str(arch.object_path(files[0]["sha256"])),
                      format="zst-archive", extra={"capture_id": cid, "objects": len(files),
                                                   "archive": str(arch.root)}, root=arch.root.parent,
                      durable=False)  # the manifest entry (fsync'ed) is the authority for captures
    step("ledger")
    if not plan.delete:
        res.status = "captured"
        return res
    return remove(arch, entry, res)


def _writers(paths: list[str]) -> str | None:
    """Why the entries at ``paths`` may not be moved or unlinked now: a process holds one of them
    (or a file under one) open, or the open files cannot be checked. None: nobody holds them."""
    of = P.open_files()
    if not of.available:
        return f"which processes hold the session's files open cannot be read ({of.error})"
    held = of.holders(paths)
    if held:
        return "; ".join(f"pid {pid} ({P.argv0(pid) or '?'}) holds {path} open" for pid, path in held[:3]) + \
            ": a writer would lose what it writes after an unlink"
    if of.blind:
        return f"the open files of {len(of.blind)} process(es) of this user cannot be read: a writer cannot be ruled out"
    return None


def remove(arch: Archive, entry: dict, res: Result) -> Result:
    cid = entry["id"]
    moved: list[int] = []
    held = _writers([t for t in entry["top"] if os.path.lexists(t)])
    if held is not None:  # right before anything moves
        try:
            arch.append({"v": 1, "type": "event", "event": "rolled-back", "capture_id": cid,
                         "instant": ledger.now_iso(), "reason": held, "notes": ["nothing was moved"]}, durable=False)
        except OSError:
            pass
        res.status, res.reason = "aborted", f"{held}: nothing was moved (kept in the archive too)"
        return res
    try:
        for i, t in enumerate(entry["top"]):
            if not os.path.lexists(t):
                continue
            os.replace(t, hidden_name(t, cid))  # no fsync needed: at either name, recovery knows it
            moved.append(i)
            step("hidden")
        bad = _verify_hidden(arch, entry, moved)
        if bad is None:  # a writer that opened a file meanwhile holds it at its hidden name now
            bad = _writers([hidden_name(entry["top"][i], cid) for i in moved])
    except OSError as exc:
        bad = f"moving or re-checking the footprint failed ({exc.strerror or exc})"
    step("hidden_verified")
    if bad is None:
        try:
            arch.append({"v": 1, "type": "event", "event": "unlink-begin", "capture_id": cid,
                         "instant": ledger.now_iso()})
        except OSError as exc:  # not recorded whole: nothing may be unlinked
            bad = f"the manifest could not record unlink-begin ({exc.strerror or exc})"
    if bad is not None:
        notes = _put_back(entry, moved)
        try:
            arch.append({"v": 1, "type": "event", "event": "rolled-back", "capture_id": cid,
                         "instant": ledger.now_iso(), "reason": bad, "notes": notes}, durable=False)
        except OSError:
            pass  # nothing is hidden any more: recovery has nothing to do for it
        res.status, res.reason = "rolled-back", f"{bad}: every file was put back under its own name" + (
            f" ({'; '.join(notes)})" if notes else "")
        return res
    step("unlink_begin")
    notes = _unlink(entry, moved)
    res.status = "removed"
    try:
        arch.append({"v": 1, "type": "event", "event": "removed", "capture_id": cid, "instant": ledger.now_iso(),
                     "notes": notes}, durable=False)  # lost in a power cut: recovery finds nothing hidden
    except OSError as exc:
        notes = notes + [f"the `removed` event could not be written ({exc.strerror or exc}): the next "
                         "capture --apply records it"]
    step("removed")
    if notes:
        res.reason = "; ".join(notes)
    return res


def _verify_hidden(arch: Archive, entry: dict, moved: list[int]) -> str | None:
    """None when every hidden entry holds exactly what the manifest says; else why not."""
    cid = entry["id"]
    want: dict[int, list[dict]] = {}
    for it in entry["items"]:
        want.setdefault(it["top"], []).append(it)
    if sorted(moved) != sorted(want):
        return "a footprint entry was missing when it was to be moved"
    for i in moved:
        t = entry["top"][i]
        h = hidden_name(t, cid)
        got: list[tuple] = []
        for path in _walk(h):
            try:
                st = os.lstat(path)
            except FileNotFoundError:
                return f"{path} vanished"
            rel = os.path.join(os.path.relpath(t, entry["scan_root"]), os.path.relpath(path, h)) if path != h \
                else os.path.relpath(t, entry["scan_root"])
            typ = "dir" if S.S_ISDIR(st.st_mode) else "file" if S.S_ISREG(st.st_mode) else "symlink"
            got.append((os.path.normpath(rel), typ, st.st_size if typ == "file" else 0, path))
        exp = [(os.path.normpath(it["rel"]), it["type"], it["size"]) for it in want[i]]
        if [g[:3] for g in got] != exp:
            return f"{t} is not what was captured (a client wrote to it after the check)"
        for (_r, typ, _s, path), it in zip(got, want[i]):
            if typ == "file" and ledger.sha256_file(path)[0] != it["sha256"]:
                return f"{it['path']} changed after it was captured"
            if typ == "symlink" and os.readlink(path) != it.get("target"):
                return f"{it['path']} points elsewhere than when it was captured"
    return None


def _put_back(entry: dict, moved: list[int]) -> list[str]:
    """Every hidden entry back under its own name; a name taken meanwhile keeps both (conflict name)."""
    notes = []
    for i in moved:
        t = entry["top"][i]
        h = hidden_name(t, entry["id"])
        if not os.path.lexists(h):
            continue
        try:
            if S.S_ISDIR(os.lstat(h).st_mode):
                rename_noreplace(h, t)
            else:
                _link_back(h, t)
        except FileExistsError:
            c = t + f".ssift-conflict-{entry['id']}"
            rename_noreplace(h, c)
            notes.append(f"{t} was recreated meanwhile; the captured-then-changed copy is at {c}")
        fsync_dir(os.path.dirname(t))
    return notes


def _unlink(entry: dict, moved: list[int]) -> list[str]:
    """Unlink the hidden entries; one that differs from the manifest now (written to after its
    verification, or a leftover that is not ours) is kept under a visible conflict name instead."""
    notes = []
    for i in moved:
        t = entry["top"][i]
        h = hidden_name(t, entry["id"])
        if not os.path.lexists(h):
            continue
        odd = _changed_since_capture(entry, i, h)
        if odd is not None:
            c = t + f".ssift-conflict-{entry['id']}"
            rename_noreplace(h, c)
            notes.append(f"{odd}: kept at {c}")
        elif S.S_ISDIR(os.lstat(h).st_mode):
            shutil.rmtree(h)
        else:
            os.unlink(h)
        step("unlinked")
    return notes


def _changed_since_capture(entry: dict, i: int, h: str) -> str | None:
    """Cheap check before unlinking (stat, no rehash): every file under ``h`` is one the manifest
    holds, with its size and mtime; files already unlinked by an interrupted run may be missing."""
    t = entry["top"][i]
    items = {os.path.normpath(it["rel"]): it for it in entry["items"] if it["top"] == i}
    base = os.path.relpath(t, entry["scan_root"])
    for path in _walk(h):
        rel = os.path.normpath(base if path == h else os.path.join(base, os.path.relpath(path, h)))
        it = items.get(rel)
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            continue
        if it is None:
            return f"{path} is not in the capture"
        if S.S_ISREG(st.st_mode) and (it["type"] != "file" or st.st_size != it["size"] or st.st_mtime_ns != it["mtime_ns"]):
            return f"{it['path']} changed after it was captured"
    return None


HIDDEN = re.compile(r"^\.(.+)\.ssift-del-([0-9a-f]{16})$", re.S)


def hidden_entries(roots) -> list[tuple[str, str, str]]:
    """Every hidden sibling ``.<name>.ssift-del-<capture id>`` under the given roots, whatever any
    manifest says: (provider name, hidden path, capture id). ``roots``: (provider name, root)
    pairs. Hidden directories are not descended into; symlinks are not followed."""
    out: list[tuple[str, str, str]] = []
    seen: set[str] = set()
    for name, root in roots:
        r = os.path.realpath(os.fspath(root))
        if r in seen:
            continue
        seen.add(r)
        stack = [r]
        while stack:
            d = stack.pop()
            try:
                it = list(os.scandir(d))
            except OSError:
                continue
            for de in it:
                m = HIDDEN.match(de.name)
                if m:
                    out.append((name, de.path, m.group(2)))
                    continue
                try:
                    if de.is_dir(follow_symlinks=False):
                        stack.append(de.path)
                except OSError:
                    continue
    return sorted(out, key=lambda x: x[1])


def recover(arch: Archive, roots=()) -> list[Result]:
    """Finish every session a crash interrupted between its manifest entry and ``removed``; then
    put back under its own name every hidden sibling left under ``roots`` ((provider, root)
    pairs) that no authenticated capture entry accounts for (a capture line the disk tore, a
    manifest lost): a hidden entry is never left where discovery cannot see it."""
    out = _recover_manifest(arch)
    for prov, h, cid in hidden_entries(roots):
        d, n = os.path.split(h)
        orig = os.path.join(d, HIDDEN.match(n).group(1))
        dest = orig if not os.path.lexists(orig) else orig + f".ssift-conflict-{cid}"
        try:
            if S.S_ISDIR(os.lstat(h).st_mode):
                rename_noreplace(h, dest)
            else:
                _link_back(h, dest)
            fsync_dir(d)
        except OSError as exc:
            out.append(Result(prov, None, "failed", cid, f"{h} could not be put back: {exc.strerror or exc}", path=h))
            continue
        out.append(Result(prov, None, "rolled-back", cid, f"a hidden entry no authenticated capture entry accounts "
                                                            f"for was put back as {dest}", path=dest))
    return out


def _link_back(h: str, t: str) -> None:
    os.link(h, t, follow_symlinks=False)  # fails rather than overwrite
    os.unlink(h)


_RENAME_NOREPLACE = 1


def rename_noreplace(src: str, dst: str) -> None:
    """``rename`` that fails (FileExistsError) rather than replace ``dst`` -- for a directory too
    (a plain rename replaces an empty directory). Linux ``renameat2(RENAME_NOREPLACE)``; where it
    is not available, a check just before the rename (the window a client could race is tiny,
    and what it made is then renamed over only if it is an empty directory)."""
    global _renameat2
    if _renameat2 is None:
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            f = libc.renameat2
            f.argtypes = (ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint)
            _renameat2 = f
        except (OSError, AttributeError):
            _renameat2 = False
    if _renameat2:
        import ctypes

        AT_FDCWD = -100
        if _renameat2(AT_FDCWD, os.fsencode(src), AT_FDCWD, os.fsencode(dst), _RENAME_NOREPLACE) == 0:
            return
        err = ctypes.get_errno()
        if err not in (errno.ENOSYS, errno.EINVAL):
            raise OSError(err, os.strerror(err), dst)
    if os.path.lexists(dst):
        raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), dst)
    os.rename(src, dst)


_renameat2 = None


def _recover_manifest(arch: Archive) -> list[Result]:
    out: list[Result] = []
    m = arch.load()
    for e in m.captures():
        if not e.get("delete"):
            continue
        ev = m.events(e["id"])
        if any(x in ev for x in ("removed", "rolled-back", "restored", "recovered")):
            continue
        present = [i for i, t in enumerate(e["top"]) if os.path.lexists(hidden_name(t, e["id"]))]
        bad = entry_problem(e)
        if bad is not None:  # forged or damaged: nothing it names is moved or unlinked
            out.append(Result(e.get("provider"), e.get("session_id"), "failed", e.get("id"),
                              f"its manifest entry cannot be acted on: {bad}; nothing it names was touched"))
            continue
        try:
            r = _recover_one(arch, e, ev)
        except OSError as exc:  # e.g. a full disk: what is hidden stays known to the manifest entry
            r = Result(e["provider"], e["session_id"], "failed", e["id"],
                       f"recovery could not finish: {exc.strerror or exc}; the next run tries again")
        if r is not None:
            out.append(r)
    return out


def _recover_one(arch: Archive, e: dict, ev: list[str]) -> Result | None:
    present = [i for i, t in enumerate(e["top"]) if os.path.lexists(hidden_name(t, e["id"]))]
    if not present:
        if "unlink-begin" in ev:  # crashed after the last unlink, before `removed` was written
            arch.append({"v": 1, "type": "event", "event": "removed", "capture_id": e["id"],
                         "instant": ledger.now_iso(), "note": "finished after an interrupted run"}, durable=False)
            return Result(e["provider"], e["session_id"], "removed", e["id"],
                          "an interrupted removal had finished its unlinks")
        return None  # crashed before anything was moved: the source is intact, a new pass captures it
    r = Result(e["provider"], e["session_id"], "failed", e["id"])
    if "unlink-begin" in ev:
        # every entry was verified against the archive before unlink-begin: finish (what
        # changed since is kept under a conflict name, never unlinked)
        notes = _unlink(e, present)
        r.status, r.reason = "removed", "an interrupted removal was finished" + (f" ({'; '.join(notes)})" if notes else "")
        arch.append({"v": 1, "type": "event", "event": "removed", "capture_id": e["id"],
                     "instant": ledger.now_iso(), "note": "finished after an interrupted run", "notes": notes})
    else:
        notes = _put_back(e, present)
        r.status, r.reason = "rolled-back", "interrupted before unlinking: every file put back under its own name"
        arch.append({"v": 1, "type": "event", "event": "rolled-back", "capture_id": e["id"],
                     "instant": ledger.now_iso(), "reason": "interrupted before unlinking: put back", "notes": notes})
    return r

