"""`search --rank`'s rendering: the best turns, best first (library: search/rank.py; JSON:
docs/json.md "search --rank")."""

from __future__ import annotations

import shlex

from .exit import ExitStatus
from .options import coverage_json, coverage_line, make_selection, selection_header
from .output import Out, clip


REFUSED = (("regexps", "-e"), ("ignore_case", "-i"), ("fixed", "-F"), ("include", "-t"), ("exclude", "-T"),
           ("attachments", "--attachments"), ("additional_context", "--additional-context"),
           ("max_count", "-m"), ("no_context", "--no-context"), ("sessions_only", "-l"), ("count", "-c"),
           ("count_by", "--count-by"), ("resolve_persisted", "--resolve-persisted"),
           ("count_lines", "--count-lines"))
"""search's options that select or count records: a ranked answer is whole turns, so each is
refused with --rank rather than silently ignored."""


def snippet_parts(s: str) -> tuple[str, list[list[int]]]:
    """(the plain text, the [start, end) of each matched word) of an FTS5 snippet marked with
    \\x02 ... \\x03."""
    out: list[str] = []
    spans: list[list[int]] = []
    at = 0
    start = None
    for ch in s:
        if ch == "\x02":
            start = at
        elif ch == "\x03":
            if start is not None:
                spans.append([start, at])
            start = None
        else:
            out.append(ch)
            at += 1
    return "".join(out), spans


def _show_cmd(sel, h) -> str:
    from .shared import root_args

    lane = f" --lane {shlex.quote(h.lane)}" if h.lane != "main" else ""
    root = root_args(sel, h.provider)
    return f"sessionsift show {shlex.quote(h.session_id)} --turn {h.number}{lane}{root}"


def run(inv, a) -> int:
    """`search --rank WORDS [TARGET...] [-n N]`."""
    from ..errors import UsageError
    from ..search.rank import rank
    from ..timefmt import instant, short_local
    from .options import display_name

    given = [flag for name, flag in REFUSED if getattr(a, name)]
    if given:
        raise UsageError(f"--rank ranks whole turns by words: {', '.join(given)} cannot be combined with it")
    if inv.dataset:
        raise UsageError("--rank reads the data roots (its index is kept from them), not a --dataset")
    if inv.since or inv.until:
        raise UsageError("--rank ranks whole turns: --since/--until are not taken with it (yet)")
    if not a.args:
        raise UsageError("search --rank needs WORDS (the words of the turn to find)")
    text, targets = a.args[0], tuple(a.args[1:])
    limit = 10 if a.limit is None else a.limit
    if limit < 1:
        raise UsageError("-n/--limit must be at least 1")
    sel = make_selection(inv.with_targets(targets), subagents=not a.no_subagents, narrowed=False)
    ans = rank(sel, text, limit, index_off=inv.index_off(), subagents=not a.no_subagents)
    out = Out(inv.fmt, "search")
    out.header(**selection_header(sel), rank=True, words=ans.words, limit=limit)
    for i, h in enumerate(ans.hits, 1):
        ref = ans.refs.get(h.skey)
        sub = h.lane != "main" or (ref is not None and ref.is_subagent)
        parent = h.session_id if h.lane != "main" else (ref.parent_session_id if ref is not None else None)
        snip, marks = snippet_parts(h.snippet)
        show = _show_cmd(sel, h)
        out.row("turn", {"rank": i, "score": round(h.score, 6), "provider": h.provider, "session_id": h.session_id,
                         "lane": h.lane, "is_subagent": sub, "parent_session_id": parent, "turn": h.number,
                         "first_at": instant(h.first_at), "last_at": instant(h.last_at), "project": h.project,
                         "path": h.path, "prompt": h.prompt, "snippet": snip, "snippet_matches": marks,
                         "snippet_column": h.column, "show": show})
        lane = "" if h.lane == "main" else f" lane {h.lane}"
        out.text(f"{i}. score {h.score:.2f}  {h.session_id} turn {h.number}{lane}  [{display_name(h.provider)}]  "
                 f"{short_local(h.last_at or h.first_at)}  {h.project or '-'}")
        out.text("   prompt: " + (clip(h.prompt.replace(chr(10), ' '), 200) if h.prompt else "(none in this turn)"))
        if snip and h.column != "prompt":
            parts: list = ["   " + (h.column or "") + ": "]
            at = 0
            for s, e in marks:
                parts.append(snip[at:s].replace("\n", " "))
                parts.append((snip[s:e], "match"))
                at = e
            parts.append(snip[at:].replace("\n", " "))
            out.spans(parts)
        out.text(f"   show: {show}")
    covs = sel.coverage()
    out.summary(rank=True, words=ans.words, limit=limit, hits=len(ans.hits), matched_turns=ans.matched,
                ranked_by=ans.how, index_off=ans.index_off, index={"path": ans.index_path, "bytes": ans.index_bytes},
                sessions=ans.sessions, child_sessions=ans.child_sessions, turns=ans.turns, sessions_read=ans.sessions_read,
                turns_added=ans.turns_added, turns_removed=ans.turns_removed, unreadable=ans.unreadable,
                coverage=coverage_json(covs))
    how = ("ranked by the index" if ans.how == "index" else f"ranked by a scan (index off: {ans.index_off})")
    words = ", ".join(ans.words)
    if not ans.hits:
        out.text(f"no turn holds any of the words {words} in {ans.sessions} sessions ({ans.turns} turns); {how}")
    else:
        read = ""
        if ans.how == "index" and ans.sessions_read:
            read = f", {ans.sessions_read} sessions read to bring it up to date"
        out.text(f"{len(ans.hits)} of {ans.matched} matching turns (BM25 over {ans.turns} turns of {ans.sessions} "
                 f"sessions, words: {words}); {how}{read}")
    if ans.unreadable:
        from .output import esc

        out.text(f"{len(ans.unreadable)} unreadable (not ranked): " + "; ".join(
            f"{esc(str(u['path']))} ({esc(str(u['why']))})" for u in ans.unreadable[:5])
            + (" …" if len(ans.unreadable) > 5 else ""))
    out.text(coverage_line(covs))
    if ans.unreadable or sel.incomplete():
        return ExitStatus.INCOMPLETE
    return ExitStatus.NO_MATCH if not ans.hits else ExitStatus.OK
