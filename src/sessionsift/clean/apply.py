"""`clean capture` / `clean protect`: which sessions of a scan are acted on, and the run.

- capture: the ELIGIBLE sessions (every gate proven, ``--waive-kept`` waiving *kept*) are captured
  and removed; a database session whose gates pass has its rows captured and is never deleted.
- protect: every session the activity gate proves idle (and the age gate old: ``protect`` scans
  with ``--older-than 0s`` unless told otherwise) and that is not already kept with its current
  bytes is captured; nothing is removed (a backup against the client's own deletion).

Dry run unless ``apply``. The run holds the archive lock, first finishes what an interrupted run
left (capture.recover), then takes one session at a time, re-checking its activity just before.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import activity as A
from . import capture as C
from .archive import Archive
from .scan import Report, Verdict


REFRESH = 1.0
"""Seconds a process/registry snapshot is trusted for the last-moment activity check."""


@dataclass
class Outcome:
    action: str
    applied: bool
    selected: list[Verdict]
    results: list[C.Result] = field(default_factory=list)
    recovered: list[C.Result] = field(default_factory=list)
    skipped: list[tuple[Verdict, str]] = field(default_factory=list)
    steps: list = field(default_factory=list)
    """:func:`plan`: every candidate once, with what the run does to it."""


def scan_roots(survey) -> list[tuple[str, Path]]:
    """(provider, root) of every provider a survey looked at: where recovery looks for hidden
    entries whatever the manifest says."""
    return [(e.name, e.root.path) for e in survey.entries if e.looked and e.root is not None and e.root.path]


def recover(data: Path | None = None, roots=()) -> list[C.Result]:
    """Finish what an interrupted run left (capture.recover, under the archive lock), and put back
    every hidden entry under ``roots`` ((provider, root) pairs, :func:`scan_roots`) that no
    authenticated capture entry accounts for. Run it BEFORE scanning: a session an interrupted
    run left at its hidden sibling is invisible to discovery until it is put back."""
    from .archive import archive_dir

    arch = Archive(archive_dir(data))
    if not arch.exists() and not C.hidden_entries(roots):
        return []
    with arch.locked():
        arch.check_key()  # a missing key where captures exist is refused here, before anything moves
        return C.recover(arch, roots)


def matches(v: Verdict, targets: tuple[str, ...]) -> bool:
    if not targets:
        return True
    for t in targets:
        if v.session_id == t or (len(t) >= 4 and v.session_id.startswith(t)):
            return True
        if os.sep in t:
            rt = os.path.realpath(t)
            if any(os.path.realpath(p) == rt for p in v.footprint) or (v.project and os.path.realpath(v.project) == rt):
                return True
    return False


def select(rep: Report, action: str, targets: tuple[str, ...] = ()) -> tuple[list[Verdict], list[tuple[Verdict, str]]]:
    """(the candidates the run acts on, the others each with why not). See :func:`plan` for what
    happens to each and the counts both the dry run and --apply give."""
    p = plan(rep, action, targets)
    return [s.verdict for s in p if s.does], [(s.verdict, s.why) for s in p if not s.does]


@dataclass
class Step:
    """What a run does with one candidate of the scan."""

    verdict: Verdict
    does: str | None
    """The status --apply gives it when all goes well (``removed``: captured and deleted;
    ``captured``: captured, nothing removed), or None: not acted on."""
    part: str
    """Where the scan counts it: ``eligible`` | ``blocked`` (capture); protect: ``capture`` |
    ``kept`` | ``left``."""
    why: str | None = None
    goes_with: bool = False
    """Its files lie inside another candidate's footprint that the run acts on: they go with it."""


def plan(rep: Report, action: str, targets: tuple[str, ...] = ()) -> list[Step]:
    """Every candidate ``targets`` name (all when empty), each once, with what the run does to it:
    one computation for the dry run and --apply, so the dry run lists exactly what --apply does."""
    from ..errors import TargetError

    gone = None
    for t in targets:
        if not any(matches(v, (t,)) for v in rep.verdicts):
            if gone is None:
                m = rep.archive.load()
                gone = {c["session_id"] for c in m.captures() if "removed" in m.events(c["id"])}
            if t in gone or (len(t) >= 4 and any(g.startswith(t) for g in gone)):
                continue  # captured and removed already (a re-run): nothing left to do for it
            looked = ", ".join(e.display for e in rep.survey.entries if e.looked) or "none"
            raise TargetError(f"no session of any provider looked at ({looked}) is {t!r} (a session id, a prefix of "
                              "4+ characters, one of its files or its project directory)")
    named = [v for v in rep.verdicts if matches(v, targets)]
    out: list[Step] = []
    for v in named:
        if action == "capture":
            gates_ok = all(g.proven or g.waived for g in v.gates.values())
            part = "eligible" if v.eligible else "blocked"
            if not gates_ok:
                out.append(Step(v, None, part, f"blocked by {v.blocked_by}"))
            else:
                out.append(Step(v, "removed" if v.deletable else "captured", part))
        else:
            if not v.gates["activity"].proven:
                out.append(Step(v, None, "left", f"activity: {v.gates['activity'].reason}"))
            elif not v.gates["age"].proven:
                out.append(Step(v, None, "left", f"age: {v.gates['age'].reason}"))
            elif v.gates["kept"].proven:
                out.append(Step(v, None, "kept", "already kept with its current bytes"))
            else:
                out.append(Step(v, "captured", "capture"))
    acted = {(s.verdict.provider, s.verdict.session_id) for s in out if s.does}
    for s in out:  # a candidate inside another's footprint is never acted on by itself
        v = s.verdict
        if v.contained_in is None:
            continue
        if (v.provider, v.contained_in) in acted:
            s.does, s.goes_with = None, True
            s.why = f"its files are inside session {v.contained_in}'s footprint: captured with it"
        elif s.does:
            s.does = None
            s.why = f"its files are inside session {v.contained_in}'s footprint, which this run does not act on"
    return out


def plan_counts(steps: list[Step]) -> dict:
    """The figures the dry run and --apply print, in the scan's units (candidates)."""
    c = {"candidates": len(steps), "remove": 0, "capture": 0, "goes_with": 0, "stays": 0, "left": 0,
         "already_kept": 0, "eligible": 0, "blocked": 0,
         "blocked_by": {"age": 0, "live": 0, "not kept": 0, "delete unsupported": 0}}
    for s in steps:
        if s.part == "eligible":
            c["eligible"] += 1
        elif s.part == "blocked":
            c["blocked"] += 1
            c["blocked_by"][s.verdict.blocked_by] += 1
        if s.does == "removed":
            c["remove"] += 1
        elif s.does == "captured":
            c["capture"] += 1
        elif s.goes_with:
            c["goes_with"] += 1
        elif s.part == "kept":
            c["already_kept"] += 1
        elif s.part == "eligible":
            c["stays"] += 1
        else:
            c["left"] += 1
    return c


def plan_of(v: Verdict, action: str, fingerprint: str) -> C.Plan:
    return C.Plan(v.provider, v.session_id, v.root or "", list(v.footprint), fingerprint,
                  delete=(action == "capture" and v.deletable), waived_kept=v.gates["kept"].waived,
                  gates={k: {"proven": g.proven, "waived": g.waived, "reason": g.reason} for k, g in v.gates.items()},
                  last_at=v.last_at)


def run(rep: Report, action: str, targets: tuple[str, ...] = (), apply: bool = False,
        recovered: list[C.Result] | None = None) -> Outcome:
    from .scan import fingerprint_of

    steps = plan(rep, action, targets)
    sel = [s.verdict for s in steps if s.does]
    skip = [(s.verdict, s.why) for s in steps if not s.does]
    out = Outcome(action, apply, sel, skipped=skip, recovered=list(recovered or []), steps=steps)
    if not apply:
        return out
    sv = rep.survey
    refs = {(e.name, r.session_id): (e.provider, r) for e in sv.entries if e.provider is not None for r in e.sessions}
    arch = rep.archive
    provs = {e.name: e.provider for e in sv.entries if e.provider is not None}
    roots = sorted({(v.provider, v.root) for v in sel if v.root})
    world, taken = None, 0.0
    with arch.locked():
        arch.check_key()  # KeyMissing (exit 4) before any session is touched
        seen = {(r.capture_id, r.status, r.path) for r in out.recovered}
        out.recovered += [r for r in C.recover(arch, scan_roots(sv)) if (r.capture_id, r.status, r.path) not in seen]
        for v in sel:
            prov, ref = refs[(v.provider, v.session_id)]
            # re-check the activity gate just before touching the session (a fresh snapshot at
            # most REFRESH seconds old)
            if world is None or time.monotonic() - taken > REFRESH:
                world, taken = A.observe(provs, roots), time.monotonic()
            g = A.gate(world, prov, ref, Path(v.root) if v.root else None)
            if not g.proven:
                out.results.append(C.Result(v.provider, v.session_id, "aborted", None,
                                            f"became active: {g.reason} ({g.detail})"))
                continue
            fp = fingerprint_of(prov, ref, v.footprint)
            if v.fingerprint is not None and fp != v.fingerprint and action == "capture" and v.gates["kept"].proven:
                out.results.append(C.Result(v.provider, v.session_id, "aborted", None,
                                            "its bytes changed since the scan proved it kept"))
                continue
            pl = plan_of(v, action, fp)
            try:
                if v.footprint:
                    r = C.run(arch, pl)
                else:
                    from . import rows

                    r = rows.run(arch, prov, ref, pl)
            except OSError as exc:
                r = C.Result(v.provider, v.session_id, "failed", None, f"{type(exc).__name__}: {exc}")
            out.results.append(r)
    return out


