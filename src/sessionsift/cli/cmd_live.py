"""`status`, `wait`, `whoami`, `agents` (docs/live.md): thin renderers of ``sessionsift.live``'s
results, for every agent."""

from __future__ import annotations

import click

from ..errors import UsageError
from ..timefmt import instant, short_local
from .exit import ExitStatus
from .invocation import targeting
from .options import coverage_json, coverage_line, make_selection, problems_json, selection_header
from .output import Out, clip, esc


def _state_lines(out: Out, v) -> None:
    """Every evidence row, list and note of one session (``--verbose``, and a wait's at-exit report)."""
    from .table import prose

    st = v.state
    out.text(f"{v.unit.ref.session_id}  {st.verdict}" + (f" ({st.settled})" if st.settled else ""))
    prose(out, f"  why: {esc(st.reason)}", indent="    ")
    for e in st.evidence:
        prose(out, f"  [{e['surface']}] {clip(e['value'], 160)}", indent="    ")
    for sec in st.sections:
        prose(out, f"  {sec.title}:", indent="    ")
        for it in sec.items:
            prose(out, f"    {it}", indent="      ")
    for n in st.notes:
        prose(out, f"  note: {esc(n)}", indent="    ")


_CODE = None


def plain_note(n: str) -> str:
    """A note as a person reads it: the claims-catalog codes that tie it to docs (REG-006/013,
    TAIL-010, BASH-018, ELI-008) left out of text; JSON keeps them."""
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


def _short_line(out: Out, v, shared: set[str]) -> None:
    """One session's verdict line and what bounds it; on a terminal each line broken across lines
    of its width (table.wrap: nothing cut), the id and verdict coloured on the first."""
    from .table import prose, term_width, wrap

    st = v.state
    sid, verdict = v.unit.ref.session_id, st.verdict + (f" ({st.settled})" if st.settled else "")
    head = f"{esc(sid)}  {esc(verdict)}"
    lines = wrap(f"{head}  {esc(v.unit.display)}: {clip(st.reason, 200)}", term_width(out), "    ")
    if lines[0].startswith(head):
        out.spans([(sid, "id"), "  ", (verdict, VERDICT_STYLE.get(st.verdict)), lines[0][len(head):]])
    else:  # a terminal too narrow for the id and the verdict on one line
        out.text(lines[0])
    for ln in lines[1:]:
        out.text(ln)
    for e in st.evidence:  # a surface that could not be read bounds the verdict: said under it, never hidden
        if e.get("unreadable"):
            prose(out, f"  [{e['surface']}] {clip(e['value'], 160)}", indent="    ")
    for sec in st.sections:  # what is still open (background work, tasks, todos)
        prose(out, f"  {sec.title}:", indent="    ")
        for it in sec.items:
            prose(out, f"    {it}", indent="      ")
    for n in st.notes:
        if n not in shared and n not in st.invisible:  # what the disk cannot show is said once at the end
            prose(out, f"  note: {plain_note(n)}", indent="    ")


def _summary_exit(out: Out, sel, n_rows: int, unread: int, **fields) -> int:
    problems = sel.problems()
    out.summary(problems=problems_json(problems), coverage=coverage_json(sel.coverage()), **fields)
    covs = sel.coverage()
    from .table import COVERAGE_SEPS, prose

    if not n_rows and not out.json:
        from .newcomer import found_nothing, nothing_note

        if found_nothing(covs):
            prose(out, "no sessions: " + nothing_note(covs, out.command))
    prose(out, coverage_line(covs), COVERAGE_SEPS)
    if not n_rows:
        out.text("no sessions in scope")
        return ExitStatus.INCOMPLETE if (problems or sel.incomplete()) else ExitStatus.NO_MATCH
    if problems or unread or sel.incomplete():
        out.text(f"{len(problems)} problem(s), {unread} unreadable surface(s): the answer rests on what could be read")
        return ExitStatus.INCOMPLETE
    return ExitStatus.OK


@click.command("status")
@targeting(limit=True)
@click.option("-v", "--verbose", is_flag=True, help="Every evidence row, list and note under each session.")
def status_cmd(inv, verbose):
    """One verdict per session of every agent: stale-dead > waiting > running > waiting-children >
    idle-background-open > idle-eot > unknown, with its strongest evidence (every evidence row with
    --verbose, and in --format json).

    Example: sessionsift status 3f2a --format json
    """
    from ..live.status import status

    sel = make_selection(inv)
    res = status(sel)
    out = Out(inv.fmt, "status")
    out.header(**selection_header(sel))
    shared = {n for n, _k in res.shared_notes()}
    for v in res.verdicts:
        out.row("session", v.to_json())
        if verbose:
            _state_lines(out, v)
        else:
            _short_line(out, v, shared)
    from .table import prose

    if not verbose:
        for n, k in res.shared_notes():
            prose(out, f"note ({k} sessions): {plain_note(n)}", style="dim")
    for display, items in res.invisible():
        for it in items:
            if it not in shared:
                prose(out, f"invisible on {esc(display)}'s disk: {esc(it)}")
    by_why: dict[str, list[str]] = {}
    for v in res.verdicts:
        if v.unit.name in res.lacking and v.unit.display not in by_why.setdefault(res.lacking[v.unit.name], []):
            by_why[res.lacking[v.unit.name]].append(v.unit.display)
    for why, names in by_why.items():
        prose(out, f"no live state from {esc(', '.join(names))}: {esc(why)} (their sessions are unknown)")
    kids = sum(1 for v in res.verdicts if v.unit.ref.parent_session_id is not None)
    return _summary_exit(out, sel, len(res.verdicts), res.unreadable, sessions=sel.top_level(), child_sessions=kids,
                         verdicts=res.counts, surfaces_unreadable=res.unreadable,
                         no_live_state=[{"provider": p, "why": w} for p, w in res.lacking.items()])


@click.command("wait")
@targeting(targets="one")
@click.option("--for", "condition", default=None, metavar="CONDITION",
              help="stop | idle | human | write:<path-regex>[:<line-regex>] (the old spelling `--until "
                   "CONDITION` is still read).")
@click.option("--timeout", type=float, required=True, help="Seconds; on expiry exit 124 with the at-exit report.")
def wait_cmd(inv, condition, timeout):
    """Block until the session reaches a condition (`idle-background-open` satisfies `stop` only when
    no owner process is on record).

    Example: sessionsift wait 3f2a --for stop --timeout 600
    """
    import dataclasses

    from ..live import wait as W
    from ..live.status import SessionVerdict

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
    sel = make_selection(inv)
    us = W.target(sel)
    if len(us) != 1:
        raise UsageError(f"wait needs exactly one session; {target!r} names {len(us)}")
    u = us[0]
    out = Out(inv.fmt, "wait")

    def ready(base: dict[str, int]) -> None:
        out.err(f"sessionsift: wait: ready: baselines taken for {len(base)} file(s) of "
                f"{u.ref.session_id}; waiting until {until} (timeout {timeout:g}s)")

    res = W.wait(sel, u, cond, timeout, ready=ready).outcome
    out.header(**selection_header(sel), until=until, timeout_secs=timeout)
    v = SessionVerdict(u, res.state)
    hit = None
    if res.hit:
        h = res.hit
        hit = {"lane": h.lane, "line": h.line, "tool": h.tool, "path": h.path, "matched_line": h.matched_line,
               "timestamp": instant(h.timestamp), "locator": h.locator}
    out.row("session", v.to_json())
    out.summary(satisfied=res.satisfied, timed_out=not res.satisfied, until=until, write=hit,
                waited_secs=round(res.waited_secs, 2), polls=res.polls, watcher=res.watcher,
                baselines=res.baselines, discovered=res.discovered, coverage=coverage_json(sel.coverage()))
    if res.satisfied:
        out.text(f"satisfied: {esc(until)} after {res.waited_secs:.1f}s")
        if res.state.verdict == "idle-background-open":
            n = len(res.state.fields.get("background") or [])
            out.text(f"  the session stopped with {n} background launch(es) open and no owner process on record: "
                     "they died with it, or run on unable to report to the transcript")
        if hit:
            where = f"{hit['lane']} L{hit['line']}" if hit["line"] is not None else (hit["locator"] or "?")
            out.text(f"  write: {hit['tool']} {esc(hit['path'])} [{esc(where)}]"
                     + (f" line: {clip(hit['matched_line'], 120)}" if hit['matched_line'] is not None else ""))
    else:
        out.text(f"timed out after {res.waited_secs:.1f}s waiting until {esc(until)}; state at exit:")
    _state_lines(out, v)
    return ExitStatus.OK if res.satisfied else ExitStatus.TIMEOUT


@click.command("whoami")
@targeting(targets=None)
def whoami_cmd(inv):
    """The calling session, from what its client exports to its tool subprocesses only (never a
    guess): Claude Code's $CLAUDE_CODE_SESSION_ID, Codex CLI's $CODEX_THREAD_ID, hook commands'
    $GEMINI_SESSION_ID / $CRUSH_SESSION_ID; an agent that exports none is said.

    Example: sessionsift whoami --format json
    """
    from ..live.whoami import whoami

    sel = make_selection(inv)
    res = whoami(None, sel)
    out = Out(inv.fmt, "whoami")
    hdr = selection_header(sel)
    out.header(claude_home=hdr["claude_home"], claude_home_source=hdr["claude_home_source"], roots=hdr["roots"])
    a = res.answer
    claims = [{"provider": c.claim.provider, "session_id": c.claim.session_id, "source": c.claim.source,
               "well_formed": c.claim.well_formed, "transcript": c.transcript, "note": c.claim.note,
               "ancestor_depth": c.depth} for c in res.claims]
    ref = a.ref if a is not None else None
    out.row("whoami", {"session_id": a.claim.session_id if a else None, "provider": a.claim.provider if a else None,
                       "is_subagent": bool(getattr(ref, "is_subagent", False)),
                       "parent_session_id": getattr(ref, "parent_session_id", None),
                       "source": a.claim.source if a else (res.claims[0].claim.source if res.claims else None),
                       "well_formed": a.claim.well_formed if a else None,
                       "transcript": a.transcript if a else None, "note": res.note, "claims": claims,
                       "cannot_say": [{"provider": d, "why": w} for d, w in res.lacking.items()],
                       "not_looked": res.not_looked})
    out.summary(known=a is not None)
    if a is None:
        out.text(esc(res.note))
        return ExitStatus.NO_MATCH
    out.text(esc(a.claim.session_id))
    out.text(f"  agent: {esc(a.display)} (${esc(a.claim.source)})")
    out.text(f"  transcript: {esc(a.transcript) if a.transcript else '(not found among the sessions looked at)'}")
    out.text(f"  note: {esc(a.claim.note)}")
    for c in res.claims[1:]:
        out.text(f"  also: {esc(c.display)}: {esc(c.claim.session_id)} (${esc(c.claim.source)}): {esc(c.claim.note)}")
    return ExitStatus.OK


def _agent_line(out: Out, a, depth: int, with_files: bool) -> None:
    sp = a.spawn
    j = (f"{sp['tool_name']} {sp['call_id']} [{sp['where']}] at {short_local(sp['timestamp'])}" if sp else "unjoined")
    dur = f"{a.duration_secs:.1f}s" if a.duration_secs is not None else "?"
    ind = "  " * depth
    from .table import prose

    def say(line: str) -> None:  # on a terminal, broken across lines of its width
        prose(out, line, indent=ind + "      ")
    say(f"{ind}  {esc(a.name or a.ref.session_id)}  {a.status}  {dur}  <- {esc(j)}")
    say(f"{ind}    {clip(a.description, 100) if a.description else '(no description)'}"
             f"  [{esc(a.agent_type) if a.agent_type else 'type unknown'}]")
    say(f"{ind}    started {short_local(a.started_at)}, ended {short_local(a.ended_at)}; {esc(a.status_why)}")
    if a.returned is not None:
        say(f"{ind}    returned ({a.returned_via}): {clip(a.returned, 140)}")
    if with_files:
        for f in a.files:
            say(f"{ind}    wrote {esc(f)}")


@click.command("agents")
@targeting()
@click.option("--tree", is_flag=True, help="Indent subagents under the one (or the workflow run) that spawned them.")
@click.option("--with-files", is_flag=True, help="List the files each subagent wrote.")
def agents_cmd(inv, tree, with_files):
    """Subagents of every agent, each joined to the tool call that spawned it (Claude Code's lanes,
    other agents' child sessions).

    Example: sessionsift agents 3f2a --tree
    """
    from ..live.agents import agents, row

    sel = make_selection(inv)
    res = agents(sel, files=with_files)
    out = Out(inv.fmt, "agents")
    out.header(**selection_header(sel))
    for s in res.sessions:
        if not s.agents:
            continue
        out.text(f"{s.unit.ref.session_id}  {len(s.agents)} subagent lane(s)")
        for a in s.agents:
            out.row("agent", row(s.unit, a))
        if tree:
            by_parent: dict[str, list] = {}
            for a in s.agents:
                by_parent.setdefault(a.group or a.parent or "main", []).append(a)
            seen: set[int] = set()

            def walk(key: str, depth: int) -> None:
                for a in by_parent.get(key, []):
                    if id(a) in seen:
                        continue
                    seen.add(id(a))
                    _agent_line(out, a, depth, with_files)
                    walk(a.name or "", depth + 1)
            out.text("  main")
            walk("main", 1)
            for key in sorted(k for k in by_parent if k.startswith("workflow ")):
                out.text(f"    {esc(key)}")
                walk(key, 2)
            for a in s.agents:
                if id(a) not in seen:
                    _agent_line(out, a, 1, with_files)
        else:
            for a in s.agents:
                _agent_line(out, a, 0, with_files)
    problems = sel.problems()
    tops = [s for s in res.sessions if s.unit.ref.parent_session_id is None]
    out.summary(sessions=len(tops), agents=res.total, statuses=res.statuses, problems=problems_json(problems),
                no_subagents=[{"provider": d, "why": w} for d, w in res.without.items()],
                coverage=coverage_json(sel.coverage()))
    from .table import prose

    for d, w in res.without.items():
        prose(out, f"{esc(d)} has no subagents: {esc(w)}")
    for p in problems[:10]:
        out.text(f"could not read: {p.path} ({p.why})")
    if not res.sessions:
        out.text("no sessions in scope")
        return ExitStatus.INCOMPLETE if problems else ExitStatus.NO_MATCH
    if res.total == 0:  # a definitive zero: every session in scope was read and ran no subagent
        n = len(res.sessions)
        which = f" ({res.sessions[0].unit.ref.session_id})" if n == 1 else ""
        out.text(f"no subagent lanes in the {n} session{'' if n == 1 else 's'} read{which}"
                 + ("; some inputs could not be read (the count is a lower bound)" if problems else ""))
    return ExitStatus.INCOMPLETE if problems or sel.incomplete() else ExitStatus.OK
