"""`stats`: the census of every session of every agent, written once.

Each provider gives its sessions' census in the shared shape (providers/census.py
``SessionStats``) through ``Provider.census``: by default every record of each session read in
order; Claude Code's reader gives the same figures from its deep lane census (and that census
itself as the answer's detail: line types, labels, survival, compactions). Totals are taken over
every session alike.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from ..providers.base import Problem, Provider, SessionRef
from ..providers.census import TOKEN_FIELDS, SessionStats, session_stats  # noqa: F401

@dataclass
class SharedStats:
    """Sessions' censuses and their totals."""

    sessions: list[SessionStats]
    problems: list[Problem]

    def totals(self) -> dict:
        kinds: Counter = Counter()
        calls: Counter = Counter()
        errs: Counter = Counter()
        units: Counter = Counter()
        om: Counter = Counter()
        unknown: Counter = Counter()
        tok: dict[str, dict[str, int]] = {}
        cum: dict[str, dict[str, int]] = {}
        rec = prompts = copies = unknown_tok = kinds_unknown = 0
        for s in self.sessions:
            unknown_tok += s.tokens_by_model is None
            rec += s.records
            copies += s.copies
            prompts += s.prompts
            if s.kinds is None:
                kinds_unknown += 1
            else:
                kinds.update(s.kinds)
            calls.update(s.tool_calls)
            errs.update(s.tool_errors)
            units.update(s.usage_units_by_model)
            om.update(s.report.omissions())
            unknown.update(s.report.unknown_kinds)
            for src, dst in ((s.tokens_by_model or {}, tok), (s.tokens_cumulative_by_model, cum)):
                for m, f in src.items():
                    agg = dst.setdefault(m, {})
                    for k, v in f.items():
                        agg[k] = agg.get(k, 0) + v
        return {"sessions": len(self.sessions), "records": rec, "copies": copies, "kinds": dict(kinds),
                "kinds_unknown_sessions": kinds_unknown,
                "prompts": prompts, "tool_calls": dict(calls), "tool_errors": dict(errs),
                # sessions whose usage is unknown: the sums leave them out (a lower bound); none
                # known at all is null, never {}
                "tokens_by_model": None if unknown_tok and not tok and not cum else tok,
                "tokens_unknown_sessions": unknown_tok, "usage_units_by_model": dict(units),
                "tokens_cumulative_by_model": cum, "unknown_kinds": dict(unknown), "omissions": dict(om)}


def stats(pairs: list[tuple[Provider, SessionRef]]) -> SharedStats:
    """Every session's census read from its shared records, in order (the default census of every
    provider; two processes over many bytes: fanout.map_halves)."""
    from ..providers.census import read_census

    out, problems = read_census(pairs)
    return SharedStats(out, problems)


@dataclass
class StatsResult:
    """Every session's census in the shared shape (every agent), the providers' own detail (Claude
    Code's lane census: ``detail["claude-code"]`` its providers.claude.stats.StatsResult) and what
    could not be read."""

    shared: SharedStats
    detail: dict = field(default_factory=dict)
    kept: dict | None = None
    """``{"from_kept", "read"}``: the sessions read through shared records whose census was given
    back from the index's kept answers, and those read (index/kept.py); None when none was kept or
    asked (the index off, no such session)."""


def stats_of(sel, *, subagents: bool = True, strict: bool = False, read_claude: bool = False,
             cache=None) -> StatsResult:
    """The census of every session of the Selection `sel`: each provider's own `census` of its
    sessions (`read_claude`: a provider with its own deep census is read from its shared records too,
    as every other agent's: the shared totals from those, its detail from the deep census, a cross-check); `cache` is the index's per-file census where the index is on (passed to the
    readers that keep one)."""
    provs = {e.name: e.provider for e in sel.survey.entries if e.provider is not None}
    by: dict[str, list[SessionRef]] = {}
    for r in sel.session_refs():
        if not subagents and r.parent_session_id is not None:
            continue
        by.setdefault(r.provider, []).append(r)
    sessions: list[SessionStats] = []
    problems: list[Problem] = []
    detail: dict = {}
    from ..index.kept import Kept

    # the answers kept per session serve the providers whose census reads the records (the default
    # census); a deep census (Claude Code's lane facts) keeps its own
    shared = any(type(provs[n]).census is Provider.census for n in by if n in provs)
    kept = Kept.for_selection(sel) if shared else None
    try:
        for name, refs in by.items():
            prov = provs.get(name)
            if prov is None:
                problems += [Problem(str(r.paths[0]) if r.paths else r.session_id, f"no reader for {name}")
                             for r in refs]
                continue
            c = prov.census(refs, subagents=subagents, strict=strict, cache=cache, scope=sel.claude, kept=kept)
            if c.detail is not None:
                detail[name] = c.detail
            if read_claude and c.detail is not None:
                # the cross-check: the shared totals from the shared records, beside the provider's own
                # deep census (its detail), so the two independent readings can be compared
                c = prov.census(refs, subagents=subagents, strict=strict, from_records=True)
            sessions += c.sessions
            problems += c.problems
    finally:
        if kept is not None:
            kept.close()
    asked = None if kept is None or not (kept.hits or kept.misses) else {"from_kept": kept.hits, "read": kept.misses}
    return StatsResult(SharedStats(sessions, problems), detail, asked)
