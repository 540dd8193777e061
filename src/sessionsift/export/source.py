"""The sessions an export or an audit reads: every provider with a reader, Claude Code included,
through the providers layer (``Provider.read``), plus Claude Code's deep labels where they exist.

A ``Selection`` (``providers.scope.select``) keeps Claude Code's sessions in its deep ``Scope``
and every other provider's as SessionRefs; :func:`pairs` flattens both into ``(Provider,
SessionRef)`` in survey order, so one loop reads every session of every provider.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Iterator

from ..providers.base import Provider, ReadReport, Record, SessionRef


def claude_refs(sel, subagents: bool = True) -> list[SessionRef]:
    """The selected Claude Code sessions as SessionRefs (main lane first, then its lanes)."""
    if sel.claude is None:
        return []
    e = sel.survey.entry("claude-code")
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


@dataclass
class DeepFacts:
    """What Claude Code's deep model says of one line: labels, turn, survival."""

    labels: tuple[str, ...]
    turn: int | None
    survival: str | None


class DeepView:
    """(path, line) -> DeepFacts, read from each lane's LaneIndex columns when asked for (a dict
    of every line's facts cost ~250 bytes a record)."""

    def __init__(self) -> None:
        self._lanes: dict[str, object] = {}

    def add(self, path: str, idx) -> None:
        self._lanes[path] = idx

    def __bool__(self) -> bool:
        return bool(self._lanes)

    def __len__(self) -> int:
        return sum(len(idx.columns) for idx in self._lanes.values())

    def get(self, key: tuple[str, int], default=None):
        idx = self._lanes.get(key[0])
        if idx is None:
            return default
        i = idx._line_index(key[1])
        if i is None:
            return default
        c = idx.columns
        t = c.turn[i]
        return DeepFacts(c.kinds[c.kind[i]][2], None if t < 0 else t, c.survival(i))


def claude_deep(ref: SessionRef) -> "DeepView | dict[tuple[str, int], DeepFacts]":
    """(path, line) -> DeepFacts for every lane of a Claude Code session (the deep model's labels,
    turn numbers and survival, docs/labels.md). Empty for any other provider."""
    if ref.provider != "claude-code":
        return {}
    from ..providers.claude.model.lane import LaneIndex
    from ..providers.claude import lane_name
    from ..providers.claude.discover import Lane

    out = DeepView()
    for p in ref.paths:
        ln = lane_name(p, ref.session_id)
        if ln == "main":
            lane = Lane(p, ref.session_id, "main", "main")
        elif "/" in ln:
            run, stem = ln.split("/", 1)
            lane = Lane(p, ref.session_id, stem, "workflow", run)
        else:
            lane = Lane(p, ref.session_id, ln, "subagent")
        try:
            idx = LaneIndex.build(lane)
        except OSError:
            continue
        out.add(str(p), idx)
    return out


def read_session(prov: Provider, ref: SessionRef, report: ReadReport, *, raw: bool = False,
                 deep: bool = True) -> Iterator[tuple[Record, tuple[str, ...]]]:
    """The session's records with their labels: Claude Code's deep labels where the deep model has
    the line (and its turn number, which every Claude command means by "turn N"); for any other
    provider the shared kind is the label. A reader that raises is reported, not propagated."""
    facts = claude_deep(ref) if deep else {}
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
