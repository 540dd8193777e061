"""Every lane's file events of a Claude Code scope: from the index's facts where it can answer (the
data root's files summary, providers/claude/cache/filesummary.py; each lane's index otherwise), else read from the
lane; fork copies of an in-scope parent's records marked (``copy_of``)."""

from __future__ import annotations

from ....timefmt import parse_ts
from ..discover import Scope
from .events import LaneEvents, lane_events

_TS: dict = {}


def _ts(x: str | None) -> float | None:
    """The instant of a timestamp string (memoised: a store's events read each several times)."""
    r = _TS.get(x, _TS)
    if r is _TS:
        d = parse_ts(x) if x else None
        r = d.timestamp() if d else None
        if len(_TS) >= 1 << 17:
            _TS.clear()
        if type(x) is str or x is None:
            _TS[x] = r
    return r


def collect(scope: Scope, subagents: bool = True, use_index: bool = False,
            outcomes: list | None = None, grammar=None) -> tuple[list[LaneEvents], list]:
    """Every lane's file events. `use_index`: from each lane's index where it can answer
    (sessionsift/index; indexed now when it has none), `outcomes` collects how each lane was read
    ("index", "built", "scanned"). `grammar`: the shell grammar Bash commands are read with
    (``FileQuery.shell``)."""
    evs, problems = [], []
    root = None
    fast = None
    if use_index:
        from ....index import config
        from ..cache.filesummary import FilesSummary

        home = getattr(scope.home, "path", None)
        if config.why_off(scope.index_off) is None and home is not None and scope.sessions:
            root = FilesSummary.load(home)
            from ..cache import lanes as IL
            from .facts import from_summary, rules

            rs = rules(grammar)
            fast = lambda ln: from_summary(ln, root, rs, grammar)  # noqa: E731
    for s in scope.sessions:
        lanes = [scope.explicit_lanes[s.session_id]] if s.session_id in scope.explicit_lanes else s.lanes(subagents)
        for ln in lanes:
            try:
                le = fast(ln) if fast is not None else None
                if le is not None:  # the summary's facts answer: nothing else read for this lane
                    if outcomes is not None:
                        outcomes.append("index")
                    if IL.PROGRESS is not None:
                        _progress(le, "index")
                else:
                    le = _lane_events(ln, use_index, outcomes, root, grammar)
                evs.append(le)
            except OSError as exc:
                from ..discover import Problem

                problems.append(Problem(str(ln.path), exc.strerror or str(exc)))
    if root is not None:
        root.save()
        from ..model.lineage import known_heads

        with known_heads(root.heads):  # the heads of the transcripts the summary answered for
            _mark_copies(scope, evs)
    else:
        _mark_copies(scope, evs)
    # the scope's problems last: listing the sessions' lanes (subagents/) adds to them
    return evs, list(scope.problems) + [p for p in problems if p not in scope.problems]


def _lane_events(ln, use_index: bool, outcomes: list | None, root=None, grammar=None) -> LaneEvents:
    if use_index:
        from ....index import config

        # the index off (`--no-index`, SESSIONSIFT_NO_INDEX): the census of `lane_stats` would be a
        # whole scan of the lane thrown away before it is read again for its events
        use_index = config.why_off(ln.index_off) is None
    if use_index:
        from .events import lane_events_indexed

        le = lane_events_indexed(ln, root, grammar)
        how = "index"
        if le is None:
            from ..cache import lanes as IL

            _ls, o = IL.lane_stats(ln)
            le = lane_events_indexed(ln, root, grammar) if o.how != "scanned" else None
            how = o.how
        if le is not None:
            if outcomes is not None:
                outcomes.append(how)
            _progress(le, how)
            return le
    if outcomes is not None:
        outcomes.append("scanned")
    return lane_events(ln, keep_view=False, grammar=grammar)


def _progress(le: LaneEvents, how: str) -> None:
    from ..cache import lanes as IL

    if IL.PROGRESS is not None and le.index is not None:
        IL.PROGRESS.step(le.index.stats.bytes, how in ("built", "appended"))


def _mark_copies(scope: Scope, evs: list[LaneEvents]) -> None:
    """Mark the events of a fork's records that copy a record of its in-scope parent
    (providers/claude/model/lineage.py): `recover` replays each original once, `files` counts it once."""
    from ..model.lineage import forks_in_scope

    forks = forks_in_scope(scope)
    if not forks:
        return
    for le in evs:
        f = forks.get(le.lane.session_id)
        if f is None or le.lane.is_subagent:
            continue
        for c in le.calls:
            if c.line in f.copied_lines:
                c.copy_of = (f.parent_session_id, f.copied_lines.get(c.pos, f.copied_lines[c.line]))
        for x in list(le.attachments) + list(le.backups):
            if x.line in f.copied_lines:
                x.copy_of = (f.parent_session_id, f.copied_lines[x.line])
