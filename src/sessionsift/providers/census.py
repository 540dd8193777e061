"""The census of one session in the shared shape (what `stats` counts of every agent), and the
default way to take it: every record of the session read in order (`session_stats`). A reader
with a deeper model gives the same figures from it (Provider.census: Claude Code's from its lane
census, providers/claude/census.py).

- An error is a tool result (or the call itself) with ``is_error`` true or a non-zero
  ``exit_code``; it is counted once per call id, under the tool its call id names
  (``(unpaired)`` when no call in the session has that id).
- Tokens: records whose ``Tokens.dedup_key`` is the same repeat one usage object, so per (model,
  key) each field is the maximum seen (a key-less usage object counts alone); per model the
  fields are then summed over keys -- a field no record wrote stays absent, never 0. A session in
  which the model answered but no record carries usage (a client that records none, e.g. Crush)
  has ``tokens_by_model`` None with the reason in ``tokens_unknown``.
- ``Tokens.cumulative`` marks running totals: they are never summed with per-response usage nor
  with each other inside a session. Per (session, model) the last running total (per-field
  maximum) is the session's figure; ``tokens_cumulative_by_model`` sums those over sessions.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace

from .base import Problem, Provider, ReadReport, SessionRef, Tokens

TOKEN_FIELDS = ("input", "output", "cache_read", "cache_write", "reasoning", "total")


@dataclass
class SessionStats:
    ref: SessionRef
    report: ReadReport = field(default_factory=ReadReport)
    records: int = 0
    copies: int = 0
    kinds: Counter | None = field(default_factory=Counter)
    """Records per shared kind (None: the census that gave these figures does not count them)."""
    prompts: int = 0
    tool_calls: Counter = field(default_factory=Counter)
    tool_errors: Counter = field(default_factory=Counter)
    tokens_by_model: dict[str, dict[str, int]] | None = field(default_factory=dict)
    """None when the model answered in this session but no record carries usage (unknown, not 0)."""
    tokens_unknown: str | None = None
    """Why ``tokens_by_model`` is None."""
    usage_units_by_model: Counter = field(default_factory=Counter)
    """Distinct usage objects (dedup keys) per model."""
    tokens_cumulative_by_model: dict[str, dict[str, int]] = field(default_factory=dict)
    turns: int = 0
    file_changes: int | None = 0
    """Recorded file changes (None: the census that gave these figures does not count them)."""


def _fields(t: Tokens) -> dict[str, int]:
    return {f: getattr(t, f) for f in TOKEN_FIELDS if getattr(t, f) is not None}


def session_stats(prov: Provider, ref: SessionRef) -> SessionStats:
    st = SessionStats(ref)
    per_key: dict[tuple[str, str], dict[str, int]] = {}
    cum: dict[str, dict[str, int]] = {}
    call_tool: dict[str, str] = {}
    errors: dict[str, str | None] = {}
    anon = 0
    answered = False
    top_turn = 0
    for r in prov.read(ref, st.report):
        if r.copy_of is not None:
            st.copies += 1
            continue
        st.records += 1
        if r.turn is not None and r.turn > top_turn:
            top_turn = r.turn
        st.kinds[r.kind] += 1
        answered = answered or (r.role == "assistant" and r.kind in ("message", "reasoning", "tool_call"))
        st.file_changes += len(r.file_changes)
        if r.kind == "prompt":
            st.prompts += 1
        if r.kind == "tool_call":
            name = r.tool_name or "(no tool)"
            st.tool_calls[name] += 1
            if r.call_id:
                call_tool.setdefault(r.call_id, name)
        failed = r.is_error is True or (r.exit_code is not None and r.exit_code != 0)
        if failed and r.kind in ("tool_call", "tool_result"):
            key = r.call_id or f"\0{r.locator}"
            errors.setdefault(key, r.tool_name if r.kind == "tool_call" else None)
        t = r.tokens
        if t is not None:
            model = r.model or "(unknown model)"
            f = _fields(t)
            if t.cumulative:
                cur = cum.setdefault(model, {})
                for k, v in f.items():
                    cur[k] = max(cur.get(k, v), v)
            else:
                if t.dedup_key is None:
                    anon += 1
                    k2 = (model, f"\0{anon}")
                else:
                    k2 = (model, t.dedup_key)
                cur = per_key.setdefault(k2, {})
                for k, v in f.items():
                    cur[k] = max(cur.get(k, v), v)
    for key, name in errors.items():
        st.tool_errors[name or call_tool.get(key, "(unpaired)")] += 1
    for (model, _k), f in per_key.items():
        st.usage_units_by_model[model] += 1
        agg = st.tokens_by_model.setdefault(model, {})
        for k, v in f.items():
            agg[k] = agg.get(k, 0) + v
    st.tokens_cumulative_by_model = cum
    if answered and not per_key and not cum:
        st.tokens_by_model = None
        st.tokens_unknown = getattr(prov, "usage_unrecorded", None) or "no record of this session carries usage"
    # a child session's turn opens at the task its parent delegated (no prompt): the reader numbers it
    st.turns = max(st.prompts, top_turn)
    return st




def _one(pair: tuple[Provider, SessionRef]) -> SessionStats | Problem:
    prov, ref = pair
    try:
        return session_stats(prov, ref)
    except Exception as exc:  # a reader's bug: this session is unreadable, the census goes on
        return Problem(str(ref.paths[0]) if ref.paths else ref.session_id,
                       f"reader failed: {type(exc).__name__}: {exc}")


def _one_taken(pair: tuple[Provider, SessionRef]) -> tuple[SessionStats | Problem, tuple | None]:
    from ..index.kept import taken

    return taken(pair[1], lambda: _one(pair))


KEPT = "census"
"""The question's name among the answers kept per session (index/kept.py)."""


def read_census(pairs: list[tuple[Provider, SessionRef]], kept=None) -> tuple[list[SessionStats], list[Problem]]:
    """Every session's census from its shared records, in order (two processes over many bytes).
    `kept`: the index's answers kept per session (index/kept.py Kept, where the index is on): a
    session whose census is kept and whose inputs are as they were is not read; every other one
    is read, and its census kept."""
    from ..read.fanout import map_halves, no_gc

    out: list[SessionStats] = []
    problems: list[Problem] = []
    pairs = list(pairs)
    got: dict[int, object] = kept.get(KEPT, [r for _, r in pairs]) if kept is not None else {}
    todo = [i for i in range(len(pairs)) if i not in got]
    with no_gc():
        if kept is None:
            read = map_halves(_one, pairs, [r.size for _, r in pairs])
            results: list = read
        else:
            taken_ = map_halves(_one_taken, [pairs[i] for i in todo], [pairs[i][1].size for i in todo])
            keep = []
            for i, (s, ident) in zip(todo, taken_):
                got[i] = s
                if ident is not None and isinstance(s, SessionStats) and not s.report.problems:
                    # kept without its ref (a pickled Path is slow to load): the ref is put back on reading
                    keep.append((pairs[i][1], ident, replace(s, ref=None)))  # type: ignore[arg-type]
            kept.put(KEPT, keep)
            results = [got[i] for i in range(len(pairs))]
            for i, s in enumerate(results):
                if isinstance(s, SessionStats):
                    s.ref = pairs[i][1]  # the session as discovered now (its digest equals the kept one's)
    for s in results:
        if isinstance(s, Problem):
            problems.append(s)
            continue
        problems.extend(s.report.problems)
        out.append(s)
    return out, problems


@dataclass
class Census:
    """What Provider.census gives: each session's census in the shared shape, the reader's own
    deeper census where it has one (``detail``), and what could not be read."""

    sessions: list[SessionStats]
    problems: list[Problem] = field(default_factory=list)
    detail: object = None


def lineage_of(prov: Provider, refs: list[SessionRef], seen: list[SessionRef]) -> dict[str, dict]:
    """``Provider.lineage``'s default: each session of `seen` that ``prov.forked_from`` names a fork
    of, or forked from, one of `refs` (its parent's ``path`` filled from `seen` where the client
    records none); nothing when the client records no lineage."""
    if not prov.records_forks:
        return {}
    paths = {r.session_id: str(r.paths[0]) if r.paths else None for r in seen}
    wanted = {r.session_id for r in refs}
    out: dict[str, dict] = {}
    for r in seen:
        f = prov.forked_from(r)
        if f is None or not (r.session_id in wanted or f.get("session_id") in wanted):
            continue
        if f.get("path") is None:
            f = {**f, "path": paths.get(f["session_id"])}
        out[r.session_id] = f
    return out
