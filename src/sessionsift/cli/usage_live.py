"""`usage blocks --live`: the refresh loop that renders the five-hour windows as Claude Code
transcripts grow (presentation; the incremental reading is sessionsift.usage.live.Incremental)."""

from __future__ import annotations

import os
import sys
import time


LIVE_ONLY = "--live follows Claude Code transcripts only (without --live, blocks read it)"
IMPLIED = "blocks cover Claude Code unless --provider names others"


def live_coverage(sel, implied: bool) -> list:
    """The coverage of a live view, in what it read: Claude Code; a provider that --provider
    named is not read live (not_looked, saying so, never its discovery count as if read); with
    no --provider typed the others are left out by blocks' own rule (said as the non-live view
    says it, not 'not in --provider')."""
    from dataclasses import replace

    from ..providers import load

    out = []
    for c in sel.coverage():
        if c.state not in ("not_looked", "no_adapter") and not getattr(load(c.provider), "usage_live", False):
            c = replace(c, state="not_looked", sessions=None, subagents=None, reason=LIVE_ONLY)
        elif implied and c.state == "not_looked" and c.reason == "not in --provider":
            c = replace(c, reason=IMPLIED)
        out.append(c)
    return out


def run(out, sel, provs, z, since, until, pricer, align, active_only, live_for, subagents, implied=False) -> int:
    from ..read.watch import change_waiter
    from ..usage.blocks import place_unpaid, windows
    from ..usage.live import HEARTBEAT, Incremental
    from ..usage.report import in_range
    from . import usage_view as V
    from .exit import ExitStatus
    from .output import esc
    from .options import coverage_json, coverage_line, problems_json

    if sel.claude is None:
        from ..errors import UsageError

        raise UsageError("--live follows Claude Code transcripts: no Claude Code data root with sessions in scope")
    inc = Incremental(sel.claude, tuple(), subagents)
    inc.refresh()
    root = os.path.realpath(os.path.join(str(sel.claude.home.path), "projects"))
    waiter, how = change_waiter([root], lambda p: p.endswith(".jsonl"), inc.fingerprint)
    out.header(report="blocks", live=True, watcher=how, timezone={"name": z.name, "source": z.source, "now": z.describe()},
               since=None if since is None else since.isoformat(), until=None if until is None else until.isoformat(),
               claude_home=inc.col.claude_home, claude_home_source=inc.col.claude_home_source,
               price_table=pricer.table.describe())
    notes = []
    if [p for p in provs if p != sel.deep_provider]:
        notes.append("--live follows Claude Code only; other providers were not read")
    covs = live_coverage(sel, implied)
    refreshes = 0
    t0 = time.monotonic()

    def emit(reason: str) -> None:
        nonlocal refreshes
        refreshes += 1
        now = time.time()
        evs = [e for e in inc.col.events if in_range(e.ts, z, since, until)]
        ws = windows(evs, pricer, align=align, now=now)
        place_unpaid(ws, inc.col.without_usage, lambda m: in_range(m.ts, z, since, until))
        if active_only:
            ws = [w for w in ws if w.active]
        if out.json:
            msgs = sum(w.totals.messages for w in ws)
            toks = sum(w.totals.total or 0 for w in ws)
            out.row("refresh", {"at": V.instant(now), "reason": reason, "files_read": inc.reads,
                                "windows": [V.window_json(w, pricer.used) for w in ws],
                                "totals": {"messages": msgs, "total_tokens": toks},
                                "sessions_stale": inc.stale, "problems": len(inc.problems)})
            out.stream.flush()
            return
        if out.stream.isatty():
            out.stream.write("\x1b[H\x1b[2J")
        out.text(f"usage blocks --live ({how}), {z.describe()}, refreshed {time.strftime('%H:%M:%S')} ({reason})")
        if ws:
            V.text_windows(out, ws, z.tz, now)
        else:
            out.text("no active window" if active_only else "no usage yet")
        if inc.stale:
            out.text(f"note: {esc(inc.stale)}")
        for pr in list(inc.problems.values())[:5]:
            out.text(f"unreadable: {esc(pr.path)} ({esc(pr.why)})")
        out.stream.flush()

    emit("start")
    interrupted = False
    try:
        while True:
            left = HEARTBEAT
            if live_for is not None:
                left = min(left, live_for - (time.monotonic() - t0))
                if left <= 0:
                    break
            seen = waiter(left)
            if seen:
                if inc.refresh():
                    emit("change")
            else:  # no event: redraw (the clock moved), and read anyway in case an event was lost
                inc.refresh()
                emit("heartbeat")
    except KeyboardInterrupt:
        interrupted = True
    finally:
        st = getattr(waiter, "stop", None)
        if st is not None:
            st.set()
    problems = list(inc.problems.values())
    out.summary(refreshes=refreshes, files=len(inc.files), coverage=coverage_json(covs),
                coverage_line=coverage_line(covs), notes=notes, interrupted=interrupted, watcher=how,
                problems=problems_json(problems), files_unreadable=len(problems))
    if not out.json:
        for n in notes:
            out.text(f"note: {n}")
        out.text(coverage_line(covs))
    sys.stdout.flush()
    return ExitStatus.INCOMPLETE if problems else ExitStatus.OK
