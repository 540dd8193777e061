"""`status`, `wait`, `whoami`, `agents` (docs/live.md)."""

from __future__ import annotations

import time
from pathlib import Path

import click

from ..providers.claude.discover import claude_home
from ..errors import UsageError
from ..providers.claude.live.verdict import Verdict, assess
from ..timefmt import instant, short_local
from .exit import ExitStatus
from .invocation import targeting
from .options import make_scope, problems_json, scope_header
from .output import Out, clip, esc


def _bg_row(t, now: float) -> dict:
    return {"tool_use_id": t.tool_use_id, "task_id": t.task_id, "kind": t.kind, "tool_name": t.tool_name,
            "lane": t.lane, "line": t.line, "launched_at": instant(t.launched_at), "command": t.command,
            "description": t.description, "state": t.state, "status": t.status, "closed_by": t.closed_by,
            "closed_at": instant(t.closed_at), "events": t.events, "persistent": t.persistent,
            "carriers": t.carriers, **t.output_stat(now)}


def _lane_fields(lane) -> dict:
    from .options import lane_fields

    return lane_fields(lane)


def verdict_row(v: Verdict, now: float) -> dict:
    s = v.session
    return {
        "session_id": s.session_id, "is_subagent": False, "parent_session_id": None, "path": str(s.path),
        "verdict": v.verdict, "reason": v.reason, "settled": v.settled,
        "evidence": v.evidence, "notes": v.notes,
        "background": [_bg_row(t, now) for t in v.open_background],
        "background_launches": len(v.background),
        "background_closed": len(v.background) - len(v.open_background),
        "tasks": v.tasks.open, "tasks_completed": v.tasks.completed, "task_dirs": v.tasks.dirs,
        "todos": _todos_row(v.todos),
        "last_turn_api_error": v.tail.api_error,
        "owner_ended": v.owner_ended,
        "unreadable": v.unreadable,
        "children": [{**_lane_fields(c.lane), "live": c.live, "why": c.why, "last_record_at": instant(c.last_ts),
                      "age_secs": c.age_secs, "last_stop_reason": c.last_stop_reason} for c in v.children],
    }


def _todos_row(td) -> dict | None:
    """null: no TodoWrite list took effect in the transcript (see `evidence` todos for why)."""
    if td is None or td.line is None:
        return None
    return {"line": td.line, "timestamp": instant(td.timestamp), "open": td.open, "completed": td.completed,
            "total": len(td.items), "calls": td.calls, "failed_calls": td.failed}


_CODE = None


def plain_note(n: str) -> str:
    """A note as a person reads it: the catalog codes that tie it to the claims catalog (REG-006/013,
    TAIL-010, ELI-008) left out of text (JSON keeps them)."""
    global _CODE
    import re

    if _CODE is None:
        _CODE = re.compile(r"(?:,\s*)?\b[A-Z]{2,6}-\d{3}(?:/\d{3})*\b(?:,\s*)?")
    t = _CODE.sub(lambda m: ", " if m.group(0).startswith(",") and m.group(0).rstrip().endswith(",") else "", n)
    t = re.sub(r"\s*\(\s*\)", "", t)
    t = re.sub(r"\(\s*,\s*", "(", t)
    t = re.sub(r",\s*\)", ")", t)
    return re.sub(r"\s{2,}", " ", t).strip()


VERDICT_STYLE = {"running": "warn", "waiting": "bad", "waiting-children": "warn", "stale-dead": "bad",
                 "idle-eot": "good", "idle-background-open": "warn", "unknown": "dim"}


def _short_verdict(out: Out, v: Verdict, now: float, width: int) -> None:
    """`status`'s short answer for one session: its verdict and why, then what is still open."""
    verdict = v.verdict + (f" ({v.settled})" if v.settled else "")
    out.spans([(v.session.session_id, "id"), "  ", (f"{verdict:<{width}}", VERDICT_STYLE.get(v.verdict)), "  ",
               v.reason])
    for e in v.evidence:  # a surface that could not be read bounds the verdict: said under it, never hidden
        if e.get("unreadable"):
            out.text(f"  [{e['surface']}] {clip(e['value'], 160)}")
    _open_items(out, v, now)


def _text_verdict(out: Out, v: Verdict, now: float) -> None:
    out.text(f"{v.session.session_id}  {v.verdict}" + (f" ({v.settled})" if v.settled else ""))
    out.text(f"  why: {esc(v.reason)}")
    for e in v.evidence:
        out.text(f"  [{e['surface']}] {clip(e['value'], 160)}")
    _open_items(out, v, now)
    for n in v.notes:
        out.text(f"  note: {esc(n)}")


def _open_items(out: Out, v: Verdict, now: float) -> None:
    if v.open_background:
        out.text("  background (open):")
        for t in v.open_background:
            o = t.output_stat(now)
            size = o["output_size"] if o["output_size"] is not None else "?"
            age = f"{o['output_age_secs']:.0f}s" if o["output_age_secs"] is not None else "?"
            out.text(f"    {t.kind} {esc(t.task_id or t.tool_use_id)} launched {short_local(t.launched_at)} "
                     f"[{esc(t.lane)} L{t.line}] {clip(t.description or t.command, 80)}; output {size} B, "
                     f"age {age} ({esc(o['output_state'])})")
    # the [todos] and [tasks] evidence lines above say what each list holds; only its open items follow
    td = v.todos
    if td is not None and td.line is not None and td.open:
        out.text(f"  open todos (TodoWrite, transcript L{td.line}):")
        for t in td.open:
            out.text(f"    [{esc(t.get('status'))}] {clip(t.get('content'), 100)}")
    if v.tasks.open:
        out.text("  open tasks:")
        for t in v.tasks.open:
            out.text(f"    #{esc(t['id'])} [{esc(t['status'])}] {clip(t['subject'], 100)}")


@click.command("status")
@targeting(limit=True)
@click.option("-v", "--verbose", is_flag=True, help="Every surface's evidence row and every note under each session.")
def status_cmd(inv, verbose):
    """One verdict per session: stale-dead > waiting > running > waiting-children >
    idle-background-open > idle-eot > unknown, with why, what is still open, and the notes that
    bound every verdict said once; --verbose: the evidence of every surface under each session.

    Example: sessionsift status --home examples/home
    Example: sessionsift status 3f2a --verbose
    Example: sessionsift status 3f2a --format json
    """
    scope = make_scope(inv)
    home = scope.home.path
    out = Out(inv.fmt, "status")
    out.header(**scope_header(inv, scope))
    counts: dict[str, int] = {}
    now = time.time()
    unread = 0
    notes: dict[str, list[str]] = {}
    width = 0
    verdicts = []
    for s in scope.sessions:
        v = assess(s, home, now=now)
        counts[v.verdict] = counts.get(v.verdict, 0) + 1
        unread += len(v.unreadable)
        out.row("session", verdict_row(v, now))
        if verbose:
            _text_verdict(out, v, now)
        elif not out.json:
            verdicts.append(v)
            width = max(width, len(v.verdict) + (len(v.settled) + 3 if v.settled else 0))
            for n in v.notes:
                notes.setdefault(n, []).append(v.session.session_id)
    for v in verdicts:
        _short_verdict(out, v, now, width)
    out.summary(sessions=len(scope.sessions), verdicts=counts, problems=problems_json(scope.problems),
                surfaces_unreadable=unread)
    if verdicts:
        n = len(verdicts)
        out.text(f"{n} session{'' if n == 1 else 's'}: " + ", ".join(f"{c} {k}" for k, c in sorted(
            counts.items(), key=lambda kv: (-kv[1], kv[0]))))
        for note, ids in notes.items():
            k = len(ids)
            who = ("" if n == 1 else " (every session)" if k == n else
                   f" ({', '.join(i[:8] for i in ids)})" if k <= 3 else f" ({k} of {n} sessions)")
            out.paint(f"note{who}: {plain_note(note)}", "dim")
        out.text("(--verbose: every surface's evidence under each session)")
    if not scope.sessions:
        out.text("no sessions in scope")
        return ExitStatus.INCOMPLETE if scope.problems else ExitStatus.NO_MATCH
    if scope.problems or unread:
        out.text(f"{len(scope.problems)} problem(s), {unread} unreadable surface(s): verdicts rest on what "
                 "could be read")
        return ExitStatus.INCOMPLETE
    return ExitStatus.OK


@click.command("wait")
@targeting(targets="one")
@click.option("--for", "condition", default=None, metavar="CONDITION",
              help="stop | idle | human | write:<path-regex>[:<line-regex>] (the old spelling `--until "
                   "CONDITION` is still read).")
@click.option("--timeout", type=float, required=True, help="Seconds; on expiry exit 124 with the at-exit report.")
def wait_cmd(inv, condition, timeout):
    """Block until the session reaches a condition (`idle-background-open` never satisfies `stop`).

    Example: sessionsift wait 3f2a --for stop --timeout 600
    """
    import dataclasses

    from ..providers.claude.live import wait as W

    until = condition
    if until is None and inv.until is not None:
        # `--until stop`: the condition's old spelling, from before --until named a time bound
        # on every command; a value that is no condition is that time bound
        try:
            W.parse_condition(inv.until)
        except UsageError:
            pass
        else:
            until, inv = inv.until, dataclasses.replace(inv, until=None,
                                                        named=tuple(n for n in inv.named if n != "--until"))
    if until is None:
        raise UsageError("wait needs --for CONDITION (stop | idle | human | write:<path-regex>[:<line-regex>])")
    cond = W.parse_condition(until)
    if timeout <= 0:
        raise UsageError("--timeout must be positive")
    target = inv.targets[0]
    scope = make_scope(inv)
    if len(scope.sessions) != 1:
        raise UsageError(f"wait needs exactly one session; {target!r} names {len(scope.sessions)}")
    s = scope.sessions[0]
    fmt = inv.fmt
    out = Out(fmt, "wait")

    def ready(base: dict[str, int]) -> None:
        out.err(f"sessionsift: wait: ready: baselines taken for {len(base)} file(s) of "
                f"{s.session_id}; waiting until {until} (timeout {timeout:g}s)")

    res = W.wait_for(s, scope.home.path, cond, timeout, ready=ready)
    now = time.time()
    out.header(**scope_header(inv, scope), until=until, timeout_secs=timeout)
    row = verdict_row(res.verdict, now)
    hit = None
    if res.hit:
        h = res.hit
        hit = {"lane": h.lane, "line": h.line, "tool": h.tool, "path": h.path, "matched_line": h.matched_line,
               "timestamp": instant(h.timestamp)}
    out.row("session", row)
    out.summary(satisfied=res.satisfied, timed_out=not res.satisfied, until=until, write=hit,
                waited_secs=round(res.waited_secs, 2), polls=res.polls, watcher=res.watcher,
                baselines=res.baselines, discovered=res.discovered)
    if res.satisfied:
        out.text(f"satisfied: {esc(until)} after {res.waited_secs:.1f}s")
        if res.verdict.verdict == "idle-background-open":
            out.text(f"  the session stopped with {len(res.verdict.open_background)} background launch(es) open and no "
                     "owner process on record: they died with it, or run on unable to report to the transcript")
        if hit:
            out.text(f"  write: {hit['tool']} {esc(hit['path'])} [{esc(hit['lane'])} L{hit['line']}]"
                     + (f" line: {clip(hit['matched_line'], 120)}" if hit['matched_line'] is not None else ""))
    else:
        out.text(f"timed out after {res.waited_secs:.1f}s waiting until {esc(until)}; state at exit:")
    _text_verdict(out, res.verdict, now)
    return ExitStatus.OK if res.satisfied else ExitStatus.TIMEOUT


@click.command("whoami")
@targeting(targets=None)
def whoami_cmd(inv):
    """The calling Claude Code session, from $CLAUDE_CODE_SESSION_ID only (never a guess).

    Example: sessionsift whoami --format json
    """
    from ..providers.claude.live.whoami import whoami
    from .options import claude_choice

    hc = claude_choice(inv).path

    w = whoami(Path(hc))
    out = Out(inv.fmt, "whoami")
    out.header(claude_home=str(hc))
    out.row("whoami", {"session_id": w.session_id, "is_subagent": False, "parent_session_id": None,
                       "source": w.source, "well_formed": w.well_formed, "transcript": w.transcript,
                       "note": w.note})
    out.summary(known=w.session_id is not None)
    if w.session_id is None:
        out.text(esc(w.note))
        return ExitStatus.NO_MATCH
    out.text(esc(w.session_id))
    out.text(f"  transcript: {esc(w.transcript) if w.transcript else '(not found under ' + esc(str(hc)) + ')'}")
    out.text(f"  note: {esc(w.note)}")
    return ExitStatus.OK


@click.command("agents")
@targeting()
@click.option("--tree", is_flag=True, help="Indent lanes under the lane (or workflow run) that spawned them.")
@click.option("--with-files", is_flag=True, help="List the files each lane wrote (Write/Edit/MultiEdit/NotebookEdit).")
def agents_cmd(inv, tree, with_files):
    """Subagent topology: each lane joined to its spawning Agent/Task/Workflow call.

    Example: sessionsift agents 3f2a --tree
    """
    from ..providers.claude.live.agents import topology

    scope = make_scope(inv)
    out = Out(inv.fmt, "agents")
    out.header(**scope_header(inv, scope))
    total = 0
    counts: dict[str, int] = {}
    now = time.time()
    for s in scope.sessions:
        nodes = topology(s, now=now, with_files=with_files)
        if not nodes:
            continue
        out.text(f"{s.session_id}  {len(nodes)} subagent lane(s)")
        rows = []
        for n in nodes:
            total += 1
            counts[n.status] = counts.get(n.status, 0) + 1
            sp = n.spawn
            row = {**_lane_fields(n.lane), "agent_type": n.agent_type, "description": n.description,
                   "meta": n.meta_state, "join": n.join, "parent_lane": n.parent_lane,
                   "spawn": None if sp is None else {
                       "tool_use_id": sp.tool_use_id, "tool_name": sp.tool_name, "lane": sp.lane.display,
                       "line": sp.line, "async": sp.async_ack,
                       "run_in_background": sp.input.get("run_in_background") is True,
                       "notified_status": sp.notified_status},
                   "triggered_at": instant(sp.timestamp) if sp else None,
                   "started_at": instant(n.started_at), "ended_at": instant(n.ended_at),
                   "duration_secs": n.duration_secs, "status": n.status, "status_why": n.status_why,
                   "returned": n.returned, "returned_via": n.returned_via,
                   "workflow_run": n.lane.workflow_run}
            if with_files:
                row["files"] = n.files
            rows.append((n, row))
            out.row("agent", row)
        # text rendering
        def line_for(n, depth):
            sp = n.spawn
            j = f"{sp.tool_name} {sp.tool_use_id} [{sp.lane.display} L{sp.line}] at {short_local(sp.timestamp)}" if sp else "unjoined"
            dur = f"{n.duration_secs:.1f}s" if n.duration_secs is not None else "?"
            ind = "  " * depth
            out.text(f"{ind}  {esc(n.lane.display)}  {n.status}  {dur}  <- {esc(j)}")
            out.text(f"{ind}    {clip(n.description, 100) if n.description else '(no description)'}"
                     f"  [{esc(n.agent_type) if n.agent_type else 'type unknown'}]")
            out.text(f"{ind}    started {short_local(n.started_at)}, ended {short_local(n.ended_at)}; {esc(n.status_why)}")
            if n.returned is not None:
                out.text(f"{ind}    returned ({n.returned_via}): {clip(n.returned, 140)}")
            if with_files:
                for f in n.files:
                    out.text(f"{ind}    wrote {esc(f)}")
        if tree:
            by_parent: dict[str, list] = {}
            for n, _ in rows:
                key = n.parent_lane or "main"
                if n.lane.workflow_run:
                    key = f"workflow {n.lane.workflow_run}"
                by_parent.setdefault(key, []).append(n)

            def walk(key, depth, seen):
                for n in by_parent.get(key, []):
                    if n.lane.display in seen:
                        continue
                    seen.add(n.lane.display)
                    line_for(n, depth)
                    walk(n.lane.display, depth + 1, seen)
            out.text("  main")
            seen: set[str] = set()
            walk("main", 1, seen)
            for key in sorted(k for k in by_parent if k.startswith("workflow ")):
                out.text(f"    {esc(key)}")
                walk(key, 2, seen)
            for n, _ in rows:
                if n.lane.display not in seen:
                    line_for(n, 1)
        else:
            for n, _ in rows:
                line_for(n, 0)
    out.summary(sessions=len(scope.sessions), agents=total, statuses=counts, problems=problems_json(scope.problems))
    for p in scope.problems[:10]:
        out.text(f"could not read: {p.path} ({p.why})")
    if not scope.sessions:
        out.text("no sessions in scope")
        return ExitStatus.INCOMPLETE if scope.problems else ExitStatus.NO_MATCH
    if total == 0:  # a definitive zero: every session in scope was read and ran no subagent
        n = len(scope.sessions)
        which = f" ({scope.sessions[0].session_id})" if n == 1 else ""
        out.text(f"no subagent lanes in the {n} session{'' if n == 1 else 's'} read{which}"
                 + ("; some inputs could not be read (the count is a lower bound)" if scope.problems else ""))
    return ExitStatus.INCOMPLETE if scope.problems else ExitStatus.OK
