"""Claude Code's sessions in the shared census shape (providers/census.py), from its lane census
(stats.py): the lanes of one session summed, so `stats` counts Claude Code's sessions with every
other agent's without reading them twice.

Held equal to the shared-records reading of the same sessions (records, tool calls and errors per
tool, tokens per model) by tests/test_stats_unified.py. Where the two readings differ the lane census
is the better one and the figure follows it: ``turns`` is the survival model's count of turns of
the main lane (a subagent lane's task is no turn of its session), ``prompts`` the prompts typed
into the main lane (a subagent's task is written by its parent agent, not typed), and
``file_changes`` and ``kinds`` are None (the lane census counts neither: its labels, several per
record, are in its own rows)."""

from __future__ import annotations

from ..base import SessionRef
from ..census import SessionStats
from .stats import USAGE_FIELDS

_FIELD = dict(zip(USAGE_FIELDS, ("input", "output", "cache_read", "cache_write")))


def session_census(ref: SessionRef, lanes: list) -> SessionStats:
    """One session's census from its lanes' LaneStats (main lane first)."""
    st = SessionStats(ref)
    for ls in lanes:
        st.records += ls.read.records - ls.copied_records
        st.copies += ls.copied_records
        st.tool_calls.update(ls.tool_calls)
        st.tool_errors.update(ls.tool_errors)
        for m, d in ls.tokens.items():
            agg = st.tokens_by_model.setdefault(m, {})  # type: ignore[union-attr]
            for k, v in d.items():
                f = _FIELD.get(k, k)
                agg[f] = agg.get(f, 0) + v
        st.usage_units_by_model.update(ls.messages_by_model)
        st.report.files += ls.read.files
        st.report.bytes += ls.read.bytes
        st.report.records += ls.read.records
        st.report.zero_filled_lines += ls.read.zero_filled_lines
        st.report.invalid_utf8_lines += ls.read.invalid_utf8_lines
        st.report.torn_tail_bytes += ls.read.torn_tail_bytes
        st.report.malformed_lines.extend(f"{ls.lane.path}:{n}" for n in ls.read.malformed_lines)
        st.report.unknown_kinds.update(ls.unknown_line_types)
        if not ls.lane.is_subagent:
            st.turns = ls.turns
            st.prompts = sum(ls.prompts.values()) if ls.prompts else 0
    st.kinds = None  # the lane census counts labels (several per record), not records per kind
    st.file_changes = None
    if any(ls.tokens_missing for ls in lanes):
        missing = {m: d for ls in lanes for m, d in ls.tokens_missing.items()}
        st.tokens_unknown = "some API messages lack a usage field: " + "; ".join(
            f"{m}: " + ", ".join(f"{_FIELD.get(k, k)} missing on {v}" for k, v in d.items()) for m, d in missing.items())
    return st
