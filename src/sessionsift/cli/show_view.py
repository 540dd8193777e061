"""`show SESSION` without an address: the whole session, turn by turn (show/session.py), as JSON rows
(`turn`) or text through a pager on a terminal."""

from __future__ import annotations

import json

from ..timefmt import instant, short_local
from .exit import ExitStatus
from .options import coverage_json, coverage_line, selection_header
from .output import Out, clip, esc, plural
from .table import COVERAGE_SEPS, cells, fit, prose, term_width, wrap

PROMPT_LINES = 20
REPLY_LINES = 40


def _tokens_text(t: dict) -> str:
    if not t:
        return ""
    parts = []
    if "input" in t or "cache_read" in t:
        parts.append(f"{t.get('input', 0) + t.get('cache_read', 0):,} in")
    if "output" in t:
        parts.append(f"{t['output']:,} out")
    return " · " + " / ".join(parts) + " tokens" if parts else ""


def _tool_line(prov, ref, item) -> tuple[str, str, str | None]:
    """The tool call's one line (what was called, what it got) and its style (a failed call stands
    out, the rest recedes)."""
    r = item.record
    what = ""
    if r.kind == "tool_call":
        sh = prov.shell_command(ref, r)
        if sh is not None:
            what = f" `{clip(sh[0], 100)}`"
        else:
            files = prov.file_calls(ref, r)
            if files:
                what = " " + ", ".join(esc(p) for p, _op in files[:3])
            elif r.tool_input is not None:
                try:
                    js = json.dumps(r.tool_input, ensure_ascii=False, default=str)
                except (TypeError, ValueError):
                    js = str(r.tool_input)
                what = " " + clip(js, 80)
    res = item.result
    if res is None:
        got = "no result on disk"
    elif res is r:
        got = "a result whose call is not on disk"
    else:
        n = item.result_chars
        got = ("empty result" if n == 0 else "1 char" if n == 1 else f"{n:,} chars") if n is not None else "result without text"
        if res.exit_code is not None:
            got += f", exit {res.exit_code}"
        if res.is_error:
            got += ", failed"
    failed = res is not None and res is not r and (res.is_error or res.exit_code not in (None, 0))
    return f"⏺ {esc(r.tool_name or '(no tool)')}{what}", f" → {got}", "bad" if failed else "dim"


def _lines(text: str | None, n: int) -> tuple[list[str], int]:
    lines = (text or "").split("\n")
    while lines and not lines[-1].strip():
        lines.pop()
    return lines[:n], max(0, len(lines) - n)


def _text_lane(out: Out, prov, ref, lv, indent: str) -> None:
    """Each turn of the lane; on a terminal every line within its width: a prompt's and a reply's
    lines broken across lines (nothing cut), a tool call's input cut with an ellipsis before its
    result's size (`show --turn N` gives the records whole). A reply on a colour terminal is its
    Markdown rendered (cli/reply_md.py: escaped first, in the width); else its source."""
    W = term_width(out)
    room = None if W is None else max(W - cells(indent), 20)

    def wrapped(line: str) -> list[str]:
        return wrap(esc(line), room, "  ")

    for t in lv.turns:
        head = "── turn " + (str(t.number) if t.number is not None else "(before the first prompt)")
        when = f" · {short_local(t.first_at)}" if t.first_at else ""
        out.spans([indent, (f"{head}{when}{_tokens_text(t.tokens)}", "header")])
        for it in t.items:
            r = it.record
            if it.kind == "prompt":
                lines, more = _lines(r.text, PROMPT_LINES)
                for i, ln in enumerate(lines or [""]):
                    for piece in wrapped(f"{'❯ ' if i == 0 else '  '}{ln}"):
                        out.spans([indent, (piece, "bold")])
                if more:
                    out.text(f"{indent}  … {plural(more, 'more line')}")
            elif it.kind == "reasoning":
                n = len(r.text or "")
                out.spans([indent, (f"  ✻ thinking ({n:,} chars)", "dim")])
            elif it.kind == "message":
                lines, more = _lines(r.text, REPLY_LINES)
                if room is not None and out.colour and lines:  # a colour terminal: the Markdown rendered
                    from .reply_md import rendered

                    for parts in rendered("\n".join(lines), room - 2):
                        out.styled([(f"{indent}  ", None), *parts] if parts else [])
                else:  # a pipe, or no colour: the Markdown source (stable for a program, marks for a person)
                    for ln in lines:
                        for piece in wrapped(f"  {ln}"):
                            out.text(f"{indent}{piece}")
                if more:
                    out.text(f"{indent}  … {plural(more, 'more line')} (show --turn {t.number} for the records)"
                             if t.number is not None else f"{indent}  … {plural(more, 'more line')}")
            else:
                called, got, style = _tool_line(prov, ref, it)
                if room is not None and cells(called) + cells(got) > room - 2:
                    called = fit(called, max(room - 2 - cells(got), 12))
                out.spans([f"{indent}  ", (called + got, style)])
        hidden = []
        if t.meta:
            hidden.append(plural(t.meta, "harness record"))
        if t.unknown:
            hidden.append(plural(t.unknown, "record") + " of kinds the reader does not know")
        if t.copies:
            hidden.append(plural(t.copies, "copied record") + " (shown where the original is)")
        if hidden:
            out.spans([f"{indent}  ", (f"({', '.join(hidden)} not shown)", "dim")])


def render(out: Out, sel, prov, view, display) -> int:
    """Rows and text of a SessionView; its exit status."""
    ref = view.ref
    covs = sel.coverage()
    out.header(**selection_header(sel), session={"provider": ref.provider, "session_id": ref.session_id,
                                                 "paths": [str(p) for p in ref.paths], "project": ref.project},
               view="session")
    n_turns = 0

    def rows(v, parent: str | None) -> None:
        nonlocal n_turns
        for lv in v.lanes:
            for t in lv.turns:
                n_turns += 1
                out.row("turn", {"provider": v.ref.provider, "session_id": v.ref.session_id, "lane": lv.lane,
                                 "is_subagent": lv.lane != "main" or v.ref.parent_session_id is not None,
                                 "parent_session_id": parent if lv.lane == "main" else v.ref.session_id,
                                 "turn": t.number, "first_at": instant(t.first_at), "last_at": instant(t.last_at),
                                 "tokens": t.tokens or None, "harness_records": t.meta, "unknown_records": t.unknown,
                                 "copied_records": t.copies, "items": [i.to_json() for i in t.items]})
        for c in v.children:
            rows(c, v.ref.session_id)

    rows(view, ref.parent_session_id)
    rep = view.report
    records = sum(lv.records for lv in view.lanes)
    out.summary(turns=n_turns, records=records, lanes=[lv.lane for lv in view.lanes],
                child_sessions=[c.ref.session_id for c in view.children], omissions=rep.omissions(),
                problems=[{"path": p.path, "why": p.why} for p in rep.problems], coverage=coverage_json(covs))
    if not out.json:
        span = f"{short_local(ref.first_at)} → {short_local(ref.last_at)}" if ref.first_at or ref.last_at else ""
        agent = f"  [{display(ref.provider)} {ref.version or '?'}]"
        where = f"{ref.project}  {span}  ({plural(records, 'record')})"
        W = term_width(out)
        if W is None or cells(f"session {ref.session_id}{agent}  {esc(where)}") <= W:
            out.spans(["session ", (ref.session_id, "id"), f"{agent}  {where}"])
        else:  # on a narrow terminal: the id and agent, then where and when, broken across lines
            out.spans(["session ", (ref.session_id, "id"), agent])
            prose(out, f"  {where}", indent="    ")

        def text(v, indent: str) -> None:
            for lv in v.lanes:
                if lv.lane != "main":
                    out.spans([indent, (f"── subagent {lv.lane} ({plural(lv.records, 'record')})", "header")])
                    _text_lane(out, prov, v.ref, lv, indent + "    ")
                else:
                    _text_lane(out, prov, v.ref, lv, indent)
            for c in v.children:
                kind = f"helper session, {esc(c.ref.helper)}" if c.ref.helper else "child session"
                n = sum(lv.records for lv in c.lanes)
                out.spans([indent, (f"── {kind} ", "header"), (c.ref.session_id, "id"),
                           (f" ({c.ref.title})" if c.ref.title else "") + f" ({plural(n, 'record')})"])
                text(c, indent + "    ")

        text(view, "")
        om = {k: v for k, v in rep.omissions().items() if v}
        if om:
            prose(out, "omissions: " + ", ".join(f"{k}={v}" for k, v in om.items()))
        for p in rep.problems[:5]:
            prose(out, f"unreadable: {esc(p.path)} ({esc(p.why)})")
        prose(out, coverage_line(covs), COVERAGE_SEPS)
    return ExitStatus.INCOMPLETE if rep.problems else ExitStatus.OK
