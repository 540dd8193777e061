"""Claude Code's ``deep_facts`` and ``spawned_lanes`` capabilities: the deep model's labels, turn
numbers and survival of every line of a session's lanes (docs/labels.md), read from each lane's
LaneIndex columns when asked for, and which tool call spawned each subagent lane (its
``agent-*.meta.json``)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import orjson

from ..base import SessionRef
from ..deep import DeepFacts

if TYPE_CHECKING:
    from .model.lane import LaneIndex


class DeepView:
    """(path, line) -> DeepFacts, read from each lane's LaneIndex columns when asked for (a dict
    of every line's facts cost ~250 bytes a record)."""

    def __init__(self) -> None:
        self._lanes: dict[str, LaneIndex] = {}

    def add(self, path: str, idx: LaneIndex) -> None:
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


def deep_facts(ref: SessionRef) -> DeepView:
    """(path, line) -> DeepFacts for every lane of a Claude Code session."""
    from . import lane_name
    from .discover import Lane
    from .model.lane import LaneIndex

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


def spawned_lanes(ref: SessionRef) -> dict[str, str]:
    """Subagent lane -> the tool_use id that spawned it (its ``agent-*.meta.json``)."""
    from . import lane_name

    out = {}
    for p in ref.paths[1:]:
        meta = Path(str(p)[:-len(".jsonl")] + ".meta.json") if str(p).endswith(".jsonl") else None
        try:
            m = orjson.loads(meta.read_bytes()) if meta is not None else None
        except (OSError, orjson.JSONDecodeError):
            m = None
        if isinstance(m, dict) and isinstance(m.get("toolUseId"), str):
            out[lane_name(p, ref.session_id)] = m["toolUseId"]
    return out
