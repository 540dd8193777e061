"""The sessions an export or an audit reads: every provider with a reader, Claude Code included,
through the providers layer (``Provider.read``), plus Claude Code's deep labels where they exist.

A ``Selection`` (``providers.scope.select``) keeps Claude Code's sessions in its deep ``Scope``
and every other provider's as SessionRefs; :func:`pairs` flattens both into ``(Provider,
SessionRef)`` in survey order, so one loop reads every session of every provider.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Iterator

from ..providers.base import Provider, ReadReport, Record, SessionRef
from ..providers import deep_name
from ..providers.deep import DeepFacts  # noqa: F401 - re-exported (the shape of a deep fact)


def claude_refs(sel, subagents: bool = True) -> list[SessionRef]:
    """The selected Claude Code sessions as SessionRefs (main lane first, then its lanes)."""
    if sel.claude is None:
        return []
    e = sel.survey.entry(deep_name())
    want = {s.session_id for s in sel.claude.sessions}
    refs = [r for r in (e.sessions if e else []) if r.session_id in want]
    full = getattr(e.provider, "full", None) if e else None
    if full is not None:  # a light discovery's refs get their lanes and size
        refs = [full(r) for r in refs]
    if not subagents:
        refs = [replace(r, paths=r.paths[:1]) for r in refs]
    return refs


def pairs(sel, subagents: bool = True) -> list[tuple[Provider, SessionRef]]:
    """Every selected session of every provider with a reader, as (provider, ref), survey order."""
    provs = {e.name: e.provider for e in sel.survey.entries if e.provider is not None}
    refs = claude_refs(sel, subagents) + list(sel.refs)
    order = {e.name: i for i, e in enumerate(sel.survey.entries)}
    refs.sort(key=lambda r: order.get(r.provider, len(order)))
    return [(provs[r.provider], r) for r in refs if r.provider in provs]


def read_session(prov: Provider, ref: SessionRef, report: ReadReport, *, raw: bool = False,
                 deep: bool = True) -> Iterator[tuple[Record, tuple[str, ...]]]:
    """The session's records with their labels: Claude Code's deep labels where the deep model has
    the line (and its turn number, which every Claude command means by "turn N"); for any other
    provider the shared kind is the label. A reader that raises is reported, not propagated."""
    facts = prov.deep_facts(ref) if deep else {}
    try:
        for r in prov.read(ref, report, raw=raw):
            f = facts.get((r.path, r.line)) if (facts and r.path is not None and r.line is not None) else None
            if f is not None:
                r.turn = f.turn
                yield r, f.labels or (r.kind,)
            else:
                yield r, (r.kind,)
    except Exception as exc:  # noqa: BLE001 - a reader's bug must not take the export down: say so
        from ..providers.base import Problem

        report.problems.append(Problem(str(ref.paths[0]) if ref.paths else ref.session_id,
                                       f"reader failed: {type(exc).__name__}: {exc}"))
