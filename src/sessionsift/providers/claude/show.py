"""`show`: records of one transcript by line, uuid or turn; and branch points."""

from __future__ import annotations

from dataclasses import dataclass

from .discover import Lane, Scope
from ...read.lines import parse_lines
from ...errors import NoSuchRecord, TargetError, UsageError
from .model.lane import Entry, LaneIndex


@dataclass
class ShownRecord:
    entry: Entry
    obj: dict
    raw: bytes | None


COLLAPSE_BYTES = 1024
"""A harness payload larger than this is shown as one line in human output (unless --full)."""


@dataclass
class Collapsed:
    kind: str
    """The attachment payload type (prompt_snapshot, skill_listing, agent_listing_delta, ...)."""
    bytes: int
    """The payload's size: UTF-8 bytes of its text (the attachment object as JSON)."""


def collapsed(r: ShownRecord, text: str) -> Collapsed | None:
    """A large harness payload that human output shows as one line: an attachment the model does
    not read as conversation (the harness.meta.attachment leaf: system-prompt snapshots, skill and
    agent listings, file dumps, ...) whose text (`text`, as rendered) exceeds COLLAPSE_BYTES. Hook
    context (what a hook told the model) and a queued prompt (what the operator typed) are never
    collapsed."""
    e = r.entry
    if e.type != "attachment" or e.labels[:1] != ("harness.meta.attachment",) or len(text) <= COLLAPSE_BYTES // 4:
        return None
    n = len(text.encode("utf-8", "surrogatepass"))
    if n <= COLLAPSE_BYTES:
        return None
    from .model import record as R

    if R.is_queued_prompt(r.obj):
        return None
    return Collapsed(e.attachment or "(untyped attachment)", n)


def pick_lane(scope: Scope, lane_name: str | None = None) -> Lane:
    if len(scope.sessions) != 1:
        ids = [s.session_id for s in scope.sessions[:10]]
        raise TargetError(
            f"this command needs exactly one session; the target matched {len(scope.sessions)}"
            + (f": {', '.join(ids)}" if ids else ""),
            hint="name a session id (or unique prefix) or a transcript path",
        )
    s = scope.sessions[0]
    if s.session_id in scope.explicit_lanes and lane_name is None:
        return scope.explicit_lanes[s.session_id]
    if lane_name in (None, "main"):
        return s.main
    for lane in s.subagent_lanes():
        if lane_name in (lane.lane_id, lane.agent_id, lane.display):
            return lane
    raise TargetError(f"session {s.session_id} has no lane {lane_name!r}")




def show(
    lane: Lane,
    lines: str | None = None,
    uuid: str | None = None,
    turn: int | None = None,
    raw: bool = False,
) -> tuple[LaneIndex, list[ShownRecord]]:
    idx = LaneIndex.build(lane)
    picked: list[Entry]
    if lines is not None:
        a, b, explicit = parse_lines(lines)
        picked = idx.entries_in_lines(a, b)
        if not picked:
            raise NoSuchRecord(
                f"no such record(s): {'L%d' % a if explicit else f'L{a}..L{b}'} in {lane.path}"
                f" ({idx.stats.lines} lines)"
            )
    elif uuid is not None:
        picked = idx.entries_with_uuid(uuid)
        if not picked:
            raise NoSuchRecord(f"no such record(s): uuid {uuid} in {lane.path}")
    elif turn is not None:
        n = idx.turns
        t = n + 1 + turn if turn < 0 else turn
        if n == 0 or t < 1 or t > n:
            raise NoSuchRecord(f"no such record(s): turn {turn} in {lane.path} (it has {n} turns)")
        picked = idx.turn_entries(t)
    else:
        raise UsageError("show needs one of --line, --uuid, --turn or --branch-points")
    out = []
    for e, obj in idx.load_many(picked):
        rb = None
        if raw:
            with open(lane.path, "rb") as f:
                f.seek(e.offset)
                rb = f.read(e.length)
        out.append(ShownRecord(e, obj, rb))
    return idx, out


@dataclass
class BranchPoint:
    entry: Entry
    children: list[Entry]


def shown(lane: Lane, lines: str | None = None, uuid: str | None = None, turn: int | None = None,
          raw: bool = False, full: bool = False) -> "tuple[LaneIndex, list[tuple[ShownRecord, str, Collapsed | None]]]":
    """:func:`show`'s records, each with the text `show` displays (model/record.py ``display_text``)
    and its :func:`collapsed` payload (None with `full` or `raw`: the record is shown whole)."""
    from .model import record as R

    idx, recs = show(lane, lines=lines, uuid=uuid, turn=turn, raw=raw)
    out = []
    for r in recs:
        body = R.display_text(r.obj, list(r.entry.labels))
        out.append((r, body, None if (full or raw) else collapsed(r, body)))
    return idx, out


def branch_points(lane: Lane) -> tuple[LaneIndex, list[BranchPoint]]:
    """Records with more than one conversation child (facts only; which side is live is not
    computable from the file - REC-033). Tool-result carriers, isMeta records and summaries are
    never conversation children; replays are not counted twice."""
    idx = LaneIndex.build(lane)
    kids: dict[str, list[Entry]] = {}
    for e in idx.entries:
        if e.parent is None or e.replay_of is not None:
            continue
        if e.type not in ("user", "assistant") or e.is_meta or e.is_compact_summary:
            continue
        if e.type == "user" and (e.tool_result_ids or not e.labels):
            continue
        kids.setdefault(e.parent, []).append(e)
    out = []
    for puid, ch in kids.items():
        if len(ch) < 2:
            continue
        pi = idx.by_uuid.get(puid)
        if pi is None:
            continue
        out.append(BranchPoint(idx.entries[pi], ch))
    out.sort(key=lambda b: b.entry.no)
    return idx, out
