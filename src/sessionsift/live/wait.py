"""`wait`: block until one session reaches a condition, or time out (docs/live.md).

Conditions (``providers.liveness.Condition``): ``stop`` (idle-eot or stale-dead; idle-background-open
only when no owner process is on record and the turn ended), ``idle`` (any idle verdict, or
stale-dead), ``human`` (waiting), ``write:<path-regex>[:<line-regex>]`` (a NEW file-changing tool
call whose path matches and, when given, one line of whose content matches).

A provider with a waiting mechanism of its own (``Provider.wait_for``: Claude Code's byte cursors)
waits its way. For every other one the question waits here: the state is asked of the provider
(``live_state``) at start, on every change of the files its state names (``LiveState.watch``:
watchfiles, else stat() fingerprints), and at least every ``heartbeat`` seconds (a dead process
changes no file); a ``write:`` condition reads the session's records again on each change and
looks at the ones it had not seen (their locators).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Callable

from ..providers.base import ReadReport, Record
from ..providers.liveness import HEARTBEAT_SECS, Condition, LiveState, WaitOutcome, WriteHit, parse_condition, satisfied  # noqa: F401
from ..read.watch import change_waiter
from .status import assess, bind
from .world import Unit, fresh, units, world as make_world


@dataclass
class WaitResult:
    unit: Unit
    outcome: WaitOutcome
    extra: dict = field(default_factory=dict)


def target(sel) -> list[Unit]:
    """The sessions a wait's target named (its children, brought along by the target, left out)."""
    return [u for u in units(sel) if not u.child]


def wait(sel, unit: Unit, cond: Condition, timeout: float,
         ready: Callable[[dict[str, int]], None] | None = None, heartbeat: float = HEARTBEAT_SECS) -> WaitResult:
    us = units(sel)
    w = make_world(sel, us=us)
    bind(w, us, sel)
    prov = unit.provider
    if prov is not None:
        got = prov.wait_for(unit.ref, cond, timeout, w, ready)
        if got is not None:
            return WaitResult(unit, got)
    return WaitResult(unit, _generic(sel, us, unit, cond, timeout, ready, heartbeat, w))


def _assess(sel, us, unit: Unit, w) -> LiveState:
    w2 = fresh(w)
    bind(w2, us, sel)
    return assess(unit, w2)


def _fingerprint(paths: list[str]) -> Callable[[], tuple]:
    def fp() -> tuple:
        out = []
        for p in paths:
            try:
                st = os.stat(p)
                out.append((p, st.st_size, st.st_mtime_ns))
            except OSError:
                out.append((p, None, None))
        return tuple(out)
    return fp


def _generic(sel, us, unit: Unit, cond: Condition, timeout: float, ready, heartbeat: float, w) -> WaitOutcome:
    t0 = time.monotonic()
    st = assess(unit, w)
    watch = [p for p in st.watch if p]
    files = [p for p in watch if not os.path.isdir(p)]
    dirs = [p for p in watch if os.path.isdir(p)]
    roots = sorted({os.path.realpath(d) for d in dirs} | {os.path.realpath(os.path.dirname(f)) for f in files
                                                          if os.path.isdir(os.path.dirname(f))})
    wanted = {os.path.realpath(f) for f in files}
    under = tuple(os.path.realpath(d) + os.sep for d in dirs)
    waiter, how = change_waiter(roots, lambda p: p in wanted or p.startswith(under), _fingerprint(files + dirs))
    base: dict[str, int] = {}
    for f in files:
        try:
            base[f] = os.stat(f).st_size
        except OSError:
            pass
    seen = _write_locators(unit) if cond.kind == "write" else set()
    if ready:
        ready(base)
    polls = 0
    try:
        while True:
            polls += 1
            hit = None
            if cond.kind == "write":
                hit, seen = _new_write(unit, cond, seen)
            if hit is not None or satisfied(cond, st):
                return WaitOutcome(True, st, hit, time.monotonic() - t0, polls, how, base)
            left = timeout - (time.monotonic() - t0)
            if left <= 0:
                return WaitOutcome(False, st, None, time.monotonic() - t0, polls, how, base)
            waiter(min(heartbeat, left))
            st = _assess(sel, us, unit, w)
    finally:
        stop = getattr(waiter, "stop", None)
        if stop is not None:
            stop.set()


def _records(unit: Unit) -> list[Record]:
    if unit.provider is None:
        return []
    try:
        return list(unit.provider.read(unit.ref, ReadReport()))
    except Exception:  # a reader's failure: nothing new is seen this time
        return []


def _writes(unit: Unit, rec: Record) -> list[tuple[str, list[str]]]:
    """(path, the lines it writes) of each file a record changes: its FileChanges, or a change call
    of the provider's file tools."""
    out = []
    for fc in rec.file_changes:
        if fc.action == "read":
            continue
        text = fc.new_content if fc.new_content is not None else fc.diff
        lines = text.splitlines() if isinstance(text, str) else []
        if fc.new_content is None and fc.diff is not None:
            lines = [ln[1:] for ln in lines if ln.startswith("+") and not ln.startswith("+++")]
        out.append((fc.path, lines))
    if not out and rec.kind == "tool_call" and unit.provider is not None:
        try:
            calls = unit.provider.file_calls(unit.ref, rec)
        except Exception:
            calls = []
        inp = rec.tool_input if isinstance(rec.tool_input, dict) else {}
        vals = [v for v in inp.values() if isinstance(v, str)]
        for path, op in calls:
            if op != "read":
                out.append((path, [ln for v in vals for ln in v.splitlines()]))
    return out


def _write_locators(unit: Unit) -> set[str]:
    return {r.locator for r in _records(unit) if _writes(unit, r)}


def _new_write(unit: Unit, cond: Condition, seen: set[str]) -> tuple[WriteHit | None, set[str]]:
    now = set(seen)
    for r in _records(unit):
        ws = _writes(unit, r)
        if not ws or r.locator in seen:
            continue
        now.add(r.locator)
        for path, lines in ws:
            if cond.path_re is None or not cond.path_re.search(path):
                continue
            if cond.line_re is None:
                return WriteHit(r.lane, r.line, r.tool_name or r.native, path, None, r.instant, r.locator), now
            for ln in lines:
                if cond.line_re.search(ln):
                    return WriteHit(r.lane, r.line, r.tool_name or r.native, path, ln, r.instant, r.locator), now
    return None, now
