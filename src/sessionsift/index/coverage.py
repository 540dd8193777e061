"""What the index holds for each provider in a selection (`index status|update|clear`).

The index keeps the lane facts of the transcripts a deep lane model reads (the selection's deep
scope, ``Selection.claude``: Claude Code's). A provider whose sessions the selection reads through
the shared records (``Selection.refs``) has nothing in it: :func:`not_indexed` names each one with
its session count and that reason, so no index answer leaves an agent out in silence.
"""

from __future__ import annotations

from collections import Counter


def not_indexed(sel) -> list[dict]:
    """``[{provider, display, sessions, child_sessions, why}]`` (top-level sessions; its subagents' and
    helpers' sessions apart) for every provider with sessions in `sel` that the
    index holds nothing for (survey order)."""
    counts = Counter(r.provider for r in sel.refs if r.parent_session_id is None)
    kids = Counter(r.provider for r in sel.refs if r.parent_session_id is not None)
    out = []
    for e in sel.survey.entries:
        n, k = counts.get(e.name, 0), kids.get(e.name, 0)
        if n or k:
            out.append({"provider": e.name, "display": e.display, "sessions": n, "child_sessions": k,
                        "why": (f"not indexed: the index holds the lane facts of Claude Code's transcripts; "
                                f"{e.display}'s sessions are read from their own files at every run "
                                f"(a search's full-text index holds their records' text: `fulltext` in the summary)")})
    return out
