"""`clean scan`: every session of every provider with its age, size and the three gates.

This is the layer that reads (discovery's first/last instants, a Claude lane's tail, a database
session's rows for its fingerprint). It runs before and apart from the deleting component
(capture.py), which receives only paths, a fingerprint and the verdict.

Gates (docs/clean.md): **age** (the last record's instant older than ``--older-than``; mtime only
where no record carries an instant, and the verdict says which), **activity** (activity.py),
**kept** (a verified capture in our archive or an export in our ledger whose fingerprint equals
the session's current bytes). A session is eligible when all three are proven (``--waive-kept``
waives the third, recorded in the manifest) and its footprint can be deleted (files of its own
under its provider's root; rows in a shared database cannot: ``delete_unsupported_for_this_provider``).
"""

from __future__ import annotations

import os
import stat as S
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from .. import ledger
from ..providers.base import ReadReport
from ..timefmt import instant, parse_ts
from . import activity as A
from .archive import Archive, archive_dir

BLOCK_ORDER = ("age", "live", "not kept", "delete unsupported")
WARN_WITHIN = timedelta(days=7)


@dataclass
class Verdict:
    provider: str
    display: str
    session_id: str
    project: str | None
    root: str | None
    footprint: list[str]
    size: int | None
    size_note: str | None
    last_at: str | None
    age_source: str
    newest_mtime: float | None
    gates: dict[str, A.Gate]
    deletable: bool
    delete_reason: str | None
    fingerprint: str | None = None
    retention: Any = None
    """The client's projected deletion of this session (its Provider's ``retention().project``); None: not modelled."""
    parent_session_id: str | None = None
    problems: list[str] = field(default_factory=list)
    contains: list[str] = field(default_factory=list)
    """Sessions of the same provider whose files lie inside this one's footprint (a Gemini main
    session's subagents dir): captured and deleted with it, so their gates are its gates too."""
    contained_in: str | None = None
    helper: str | None = None
    """``SessionRef.helper``: a helper session (e.g. Crush's title generation), not a subagent."""

    @property
    def eligible(self) -> bool:
        return self.deletable and all(g.proven or g.waived for g in self.gates.values())

    @property
    def blocked_by(self) -> str | None:
        g = self.gates
        if not g["age"].proven:
            return "age"
        if not g["activity"].proven:
            return "live"
        if not (g["kept"].proven or g["kept"].waived):
            return "not kept"
        if not self.deletable:
            return "delete unsupported"
        return None

    @property
    def protectable(self) -> bool:
        """May be captured without deleting (`protect`): the activity gate is the only one that
        matters for a copy, and a live session is still never touched."""
        return self.gates["activity"].proven

    def to_json(self) -> dict:
        return {"provider": self.provider, "session_id": self.session_id,
                "is_subagent": self.parent_session_id is not None and self.helper is None,
                "parent_session_id": self.parent_session_id, "helper": self.helper,
                "project": self.project, "root": self.root, "footprint": self.footprint,
                "size_bytes": self.size, "size_note": self.size_note, "last_at": instant(self.last_at),
                "age_source": self.age_source,
                "newest_mtime": _iso(self.newest_mtime) if self.newest_mtime is not None else None,
                "gates": {k: g.to_json() for k, g in self.gates.items()}, "deletable": self.deletable,
                "delete_reason": self.delete_reason, "eligible": self.eligible, "blocked_by": self.blocked_by,
                "fingerprint": self.fingerprint,
                "retention": self.retention.to_json() if self.retention is not None else None,
                "problems": self.problems, "contains": self.contains, "contained_in": self.contained_in}


@dataclass
class RootRetention:
    root: str
    period: Any
    policy_read: bool
    rules: Any = None
    """The provider's retention capability (``Provider.retention()``) this root's period is from."""
    due: int = 0
    soon: int = 0

    def to_json(self) -> dict:
        return {"root": self.root, **self.period.to_json(), "policy_read": self.policy_read,
                "invisible": list(self.rules.invisible) + ([] if self.policy_read else [
                    "policySettings files were not read: the data root was named explicitly (a corpus, not "
                    "this machine's client)"]),
                "due_at_next_start": self.due, "due_within_7_days": self.soon}


@dataclass
class Report:
    verdicts: list[Verdict]
    survey: object
    world: A.World
    cutoff: datetime
    now: datetime
    retention: list[RootRetention]
    archive: Archive
    waive_kept: bool
    problems: list[tuple[str, str]] = field(default_factory=list)

    def tally(self) -> dict:
        blocked = {k: 0 for k in BLOCK_ORDER}
        for v in self.verdicts:
            b = v.blocked_by
            if b is not None:
                blocked[b] += 1
        known = [v.size for v in self.verdicts if v.size is not None]
        # one unit for every count but `sessions`/`child_sessions`: the candidate (one verdict: a
        # top-level session, or another provider's child session, a row of its own; Claude Code's
        # subagent lanes are inside their session's footprint)
        return {"sessions": sum(1 for v in self.verdicts if v.parent_session_id is None),
                "child_sessions": sum(1 for v in self.verdicts if v.parent_session_id is not None),
                "candidates": len(self.verdicts), "eligible": sum(1 for v in self.verdicts if v.eligible),
                "blocked": sum(blocked.values()), "blocked_by": blocked, "bytes_held": sum(known),
                "sized": len(known), "size_unknown": sum(1 for v in self.verdicts if v.size is None)}


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _ago(s: float) -> str:
    return f"{s / 60:.0f} min" if s < 3600 else f"{s / 3600:.1f} h" if s < 172800 else f"{s / 86400:.1f} days"


def resolved(p) -> Path:
    """A root as the manifest records it: absolute, every symlink on the way resolved (a relative
    ``--home`` must not make a restore from another directory act on another tree)."""
    return Path(os.path.realpath(os.path.abspath(p)))


def resolved_entry(p) -> str:
    """A footprint entry under a :func:`resolved` root: its parent resolved, the entry itself not
    followed (a symlink in a footprint is captured as a symlink)."""
    a = os.path.abspath(p)
    return os.path.join(os.path.realpath(os.path.dirname(a)), os.path.basename(a))


def _walk_size(paths: list[str]) -> tuple[int, float | None, list[tuple[str, str]]]:
    """(bytes, newest mtime, unreadable) over the footprint. An entry that does not exist is not
    there (a footprint names what the client may write); one that exists and cannot be stat'ed
    or listed is unreadable: the size is then a lower bound and the newest mtime not known to be
    the newest (never read as "nothing there")."""
    total, newest = 0, None
    bad: list[tuple[str, str]] = []
    stack = list(paths)
    while stack:
        p = stack.pop()
        try:
            st = os.lstat(p)
        except FileNotFoundError:
            continue
        except OSError as exc:
            bad.append((p, exc.strerror or str(exc)))
            continue
        newest = st.st_mtime if newest is None else max(newest, st.st_mtime)
        if S.S_ISDIR(st.st_mode):
            try:
                stack += [os.path.join(p, n) for n in os.listdir(p)]
            except FileNotFoundError:
                pass
            except OSError as exc:
                bad.append((p, exc.strerror or str(exc)))
        else:
            total += st.st_size
    return total, newest, bad


def _inside(p: str, root: str) -> bool:
    rp, rr = os.path.realpath(os.path.dirname(p) or "."), os.path.realpath(root)
    return rp == rr or rp.startswith(rr.rstrip("/") + "/")


def last_activity(prov, ref) -> tuple[datetime | None, str, list[dict]]:
    """The session's last activity: the NEWEST evidence across every file that holds its records
    (``Provider.last_activity``): a file's last record instant where every record after it was
    read whole, else that file's mtime (which bounds when it was last written) -- never an older
    part's instant standing in for a part that could not be read. (instant, source, evidence)."""
    try:
        parts = prov.last_activity(ref)
    except Exception as exc:  # a reader's bug: every part falls back to its mtime (younger, never older)
        parts = [(p, None) for p in ref.paths]
        why = f"{type(exc).__name__}: {exc}"
    else:
        why = None
    if not parts:  # no file of its own holds its records (rows of a database): the reader's instant
        t = parse_ts(ref.last_at)
        return t, ("last record instant" if t is not None else "unknown"), []
    best, ev, by_mtime, unknown = None, [], 0, 0
    for p, inst in parts:
        t = parse_ts(inst)
        src = "last record instant"
        if t is None:
            try:
                t = datetime.fromtimestamp(os.stat(p).st_mtime, timezone.utc)
                src, by_mtime = "mtime", by_mtime + 1
            except OSError:
                src, unknown = "unknown", unknown + 1
        ev.append({"path": str(p), "instant": t.strftime("%Y-%m-%dT%H:%M:%S.%fZ") if t else None, "source": src}
                  | ({"note": f"reader failed: {why}"} if why else {}))
        if t is not None and (best is None or t > best):
            best = t
    if unknown:
        return None, "unknown", ev  # a part whose age cannot be taken may be the newest
    if best is None:
        return None, "unknown", ev
    if not by_mtime:
        return best, "last record instant", ev
    if by_mtime == len(parts):
        return best, "mtime (no record carries an instant)", ev
    return best, f"newest of the last record instants and, where a file's last record could not be read whole, " \
                 f"its mtime ({by_mtime} of {len(parts)} files)", ev


def fingerprint_of(prov, ref, fp_paths: list[str]) -> str:
    if fp_paths:
        return ledger.fingerprint(fp_paths)
    return ledger.fingerprint_rows(prov.read(ref, ReadReport(), raw=True))


def scan(survey, *, older_than: str = "30d", waive_kept: bool = False, now: datetime | None = None,
         data: Path | None = None, env=None) -> Report:
    from ..timefmt import parse_when

    now = now or datetime.now(timezone.utc)
    cutoff = parse_when(older_than, now)
    arch = Archive(archive_dir(data))
    manifest = arch.load()
    led = ledger.read_all(data)
    entries = [e for e in survey.entries if e.provider is not None and e.looked]
    provs = {e.name: e.provider for e in entries}
    world = A.observe(provs, [(e.name, resolved(e.root.path)) for e in entries if e.root and e.root.path], env)
    rets: list[RootRetention] = []
    out: list[Verdict] = []
    problems: list[tuple[str, str]] = []
    if manifest.state.startswith("unreadable"):
        problems.append((str(arch.manifest_path), manifest.state))
    if led.state.startswith("unreadable"):
        problems.append((str(ledger.ledger_path(data)), led.state))
    problems += interrupted(manifest, [(e.name, e.root.path) for e in entries if e.root and e.root.path])
    for e in entries:
        prov = e.provider
        root = resolved(e.root.path) if e.root is not None and e.root.path is not None else None
        rr = None
        rules = prov.retention() if prov is not None and root is not None else None
        if rules is not None:
            policy = rules.reads_policy(e.root.source)
            rr = RootRetention(str(root), rules.period(root, None, policy), policy, rules)
            rets.append(rr)
        for ref in e.sessions:
            out.append(_verdict(prov, e, ref, root, world, cutoff, now, manifest, led, arch, waive_kept, rr, data))
    _nest(out)
    return Report(out, survey, world, cutoff, now, rets, arch, waive_kept, problems)


def _nest(vs: list[Verdict]) -> None:
    """A session whose files lie inside another's footprint goes with it: the outer session's
    gates are proven only if the inner one's are too."""
    by: dict[str, list[Verdict]] = {}
    for v in vs:
        by.setdefault(v.provider, []).append(v)
    for group in by.values():
        dirs = [(v, [p.rstrip("/") + "/" for p in v.footprint if os.path.isdir(p) and not os.path.islink(p)])
                for v in group]
        for v, ds in dirs:
            if not ds:
                continue
            for t in group:
                if t is v or not t.footprint:
                    continue
                if all(any(p.startswith(d) for d in ds) for p in t.footprint):
                    v.contains.append(t.session_id)
                    t.contained_in = v.session_id
                    for k in ("age", "activity", "kept"):
                        g, h = v.gates[k], t.gates[k]
                        if (g.proven or g.waived) and not (h.proven or h.waived):
                            v.gates[k] = A.Gate(k, False, h.reason, f"contains session {t.session_id}, whose {k} "
                                                                    f"gate is not proven: {h.detail}", h.evidence)


def interrupted(manifest, roots=()) -> list[tuple[str, str]]:
    """Captures a crash left between their manifest entry and ``removed``, whose entries sit at
    their hidden siblings: discovery cannot see those sessions until the next apply run puts them
    back or finishes them (they are in the archive, verified); and every other hidden sibling
    under ``roots`` ((provider, root) pairs), whatever the manifest says (a capture line the disk
    tore, a manifest lost): the next apply run puts it back under its own name."""
    from .capture import hidden_entries, hidden_name

    out = []
    known: set[str] = set()
    for c in manifest.captures():
        for t in c.get("top", []):
            known.add(os.path.normpath(hidden_name(t, c["id"])))
        if not c.get("delete") or any(x in manifest.events(c["id"]) for x in ("removed", "rolled-back", "restored")):
            continue
        for t in c.get("top", []):
            h = hidden_name(t, c["id"])
            if os.path.lexists(h):
                out.append((h, f"interrupted capture {c['id']} of {c['provider']} {c['session_id']}: this entry sits at "
                               "its hidden sibling (verified in the archive); the next `clean capture --apply` or "
                               "`clean protect --apply` finishes or puts it back"))
    named = {p for p, _ in out}
    for _prov, h, cid in hidden_entries(roots):
        if h in named:
            continue
        why = ("its capture is finished, yet it is still here" if os.path.normpath(h) in known else
               "no authenticated manifest entry names it (a torn capture line, a lost manifest)")
        out.append((h, f"a hidden entry of capture {cid}: {why}; discovery cannot see it; the next "
                       "`clean capture --apply` or `clean protect --apply` puts it back under its own name"))
    return out


def _verdict(prov, e, ref, root, world, cutoff, now, manifest, led, arch, waive_kept, rr, data) -> Verdict:
    problems: list[str] = []
    try:
        fp = [resolved_entry(p) for p in prov.footprint(ref)]
    except Exception as exc:  # a reader's bug: nothing of it is deleted
        fp, problems = [], [f"footprint failed: {type(exc).__name__}: {exc}"]
    if fp:
        size, newest, unread = _walk_size(fp)
        size_note = None
        if unread:
            size_note = (f"lower bound: {len(unread)} entr{'y' if len(unread) == 1 else 'ies'} of the footprint "
                         f"could not be read ({unread[0][0]}: {unread[0][1]})")
            problems.append(size_note)
            newest = None  # not known to be the newest: never an age from part of the files
    else:
        size, newest = None, None
        size_note = "rows in a shared database: no file of its own, size not attributable"
    # age: the newest evidence across every file of the session
    t, src, aev = last_activity(prov, ref)
    if t is None and not ref.paths and newest is not None:
        t, src = datetime.fromtimestamp(newest, timezone.utc), "mtime (no record carries an instant)"
    last = t.strftime("%Y-%m-%dT%H:%M:%S.%fZ") if t is not None else None
    ago = _ago((now - t).total_seconds()) if t is not None else None
    if t is None:
        age = A.Gate("age", False, "age_unknown", "a file of the session has neither a readable last record instant "
                                                  "nor a file time", aev)
    elif t < cutoff:
        age = A.Gate("age", True, "older_than_threshold", f"last activity {ago} ago ({src})", aev)
    else:
        age = A.Gate("age", False, "younger_than_threshold",
                     f"last activity {ago} ago ({src}), after the cutoff {cutoff:%Y-%m-%d %H:%M}Z", aev)
    act = A.gate(world, prov, ref, root)
    if act.proven:
        act = A.held_open(world.open_files, fp) or act
    kept, fingerprint = _kept(prov, ref, fp, manifest, led, arch, data)
    if not kept.proven and waive_kept:
        kept.waived = True
        kept.detail += " -- waived (--waive-kept): recorded in the manifest of any capture"
    if not fp:
        deletable, why = False, "delete_unsupported_for_this_provider: the session is rows in a database the client " \
                                "writes; sessionsift never writes to it (capture exports the rows instead)"
    elif root is None or not all(_inside(p, str(root)) for p in fp):
        deletable, why = False, "footprint_outside_root: a file of the session lies outside its provider's root"
    else:
        deletable, why = True, None
    proj = None
    if rr is not None and ref.paths:
        own = rr.rules.period(root, ref.project, rr.policy_read) if ref.project else None
        proj = rr.rules.project(ref.paths[0], rr.period, own, now)
        if proj.due:
            rr.due += 1
        elif proj.deletion_at is not None and proj.deletion_at <= now + WARN_WITHIN:
            rr.soon += 1
    return Verdict(prov.name, prov.display, ref.session_id, ref.project, str(root) if root else None, fp, size,
                   size_note, last, src, newest, {"age": age, "activity": act, "kept": kept}, deletable, why,
                   fingerprint, proj, ref.parent_session_id, problems, helper=ref.helper)


def _kept(prov, ref, fp, manifest, led, arch, data) -> tuple[A.Gate, str | None]:
    caps = [c for c in manifest.captures() if c.get("provider") == prov.name and c.get("session_id") == ref.session_id]
    exps = [x for x in led.rows if x.get("provider") == prov.name and x.get("session_id") == ref.session_id
            and x.get("kind") == "export"]
    if manifest.state.startswith("unreadable") or led.state.startswith("unreadable"):
        return A.Gate("kept", False, "kept_unknown_store_unreadable",
                      f"archive manifest {manifest.state}, ledger {led.state}"), None
    if not caps and not exps:
        return A.Gate("kept", False, "not_provably_kept",
                      "no export of this session in the ledger and no capture of it in the archive "
                      "(what other tools or people kept is invisible here)"), None
    try:
        fpr = fingerprint_of(prov, ref, fp)
    except Exception as exc:
        return A.Gate("kept", False, "kept_coverage_unknown_for_this_provider",
                      f"its current bytes cannot be fingerprinted: {type(exc).__name__}: {exc}"), None
    ev: list[dict] = []
    for c in reversed(caps):
        if c.get("fingerprint") != fpr:
            ev.append({"capture_id": c.get("id"), "check": "fingerprint differs from the session's current bytes"})
            continue
        bad = [why for ok, why in (arch.present(o["sha256"], o.get("stored_size")) for o in _objects(c)) if not ok]
        if bad:
            ev.append({"capture_id": c.get("id"), "check": bad[0]})
            continue
        ev.append({"capture_id": c.get("id"), "check": "verified at capture; objects present with their stored sizes "
                                                        "(`clean verify` rehashes)"})
        return A.Gate("kept", True, "kept_provably", f"captured in the archive ({c.get('id')}) with these exact bytes",
                      ev), fpr
    ok, lev, why = ledger.is_kept(prov.name, ref.session_id, fpr, all_entries=led)
    ev += [{"ledger": x.get("format"), "path": x.get("path"), "check": x.get("check")} for x in lev]
    if ok:
        return A.Gate("kept", True, "kept_provably", "exported (ledger) with these exact bytes", ev), fpr
    return A.Gate("kept", False, "not_provably_kept",
                  why.split(": ", 1)[-1] if why.startswith("not_provably_kept") else why, ev), fpr


def _objects(c: dict) -> list[dict]:
    objs = [i for i in c.get("items", []) if i.get("type") == "file"]
    if isinstance(c.get("rows"), dict):
        objs.append(c["rows"])
    return objs
