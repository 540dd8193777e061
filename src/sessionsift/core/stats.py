"""`stats`: line types, label census, turns, compactions, tokens, narration, omissions."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from ..discover import Lane, Problem, Scope
from ..model.lane import LaneIndex
from ..model import record as R
from ..read.lines import ReadStats, iter_lines, parse_numbered

USAGE_FIELDS = ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")


@dataclass
class LaneStats:
    lane: Lane
    read: ReadStats
    line_types: Counter = field(default_factory=Counter)
    system_subtypes: Counter = field(default_factory=Counter)
    attachment_kinds: Counter = field(default_factory=Counter)
    labels: Counter = field(default_factory=Counter)
    unlabelled: int = 0
    turns: int = 0
    compactions: int = 0
    survival: Counter = field(default_factory=Counter)
    replayed_lines: int = 0
    tokens: dict[str, dict[str, int]] = field(default_factory=dict)
    messages_by_model: Counter = field(default_factory=Counter)
    narration_blocks: int = 0
    thinking_blocks: int = 0
    untagged_thinking_blocks: int = 0
    unknown_thinking_tags: Counter = field(default_factory=Counter)
    unknown_line_types: Counter = field(default_factory=Counter)


KNOWN_TYPES = {
    "user", "assistant", "system", "attachment", "file-history-snapshot", "file-history-delta",
    "queue-operation", "last-prompt", "mode", "permission-mode", "ai-title", "agent-name",
    "summary", "fork-context-ref", "atis-latch", "bridge-session", "cost-state", "continued-in",
}


def lane_stats(lane: Lane, strict: bool = False) -> LaneStats:
    idx = LaneIndex.build(lane, strict=strict)
    ls = LaneStats(lane, idx.stats)
    per_msg: dict[tuple[str, str], dict[str, int]] = {}
    for e in idx.entries:
        ls.line_types[e.type or "(no type)"] += 1
        if e.type and e.type not in KNOWN_TYPES:
            ls.unknown_line_types[e.type] += 1
        if e.type == "system":
            ls.system_subtypes[e.subtype or "(none)"] += 1
        if e.type == "attachment":
            ls.attachment_kinds[e.attachment or "(none)"] += 1
        if e.replay_of is not None:
            ls.replayed_lines += 1
        if e.survival:
            ls.survival[e.survival] += 1
        if e.labels:
            for lab in e.labels:
                ls.labels[lab] += 1
        else:
            ls.unlabelled += 1
        if e.labels[:1] == ("harness.compaction.boundary",):
            ls.compactions += 1
        if e.type == "assistant" and e.usage is not None:
            model = e.model or "(unknown model)"
            key = (model, e.msg_id or f"line:{e.no}")
            cur = per_msg.setdefault(key, {})
            for f, v in zip(USAGE_FIELDS, e.usage):
                if v is not None:
                    cur[f] = max(cur.get(f, v), v)
    ls.turns = idx.turns
    for (model, _mid), fields in per_msg.items():
        ls.messages_by_model[model] += 1
        agg = ls.tokens.setdefault(model, {})
        for f, v in fields.items():
            agg[f] = agg.get(f, 0) + v
    # thinking tags need the signature: re-read only assistant lines that hold thinking
    thinking_lines = [e for e in idx.entries if "agent.thinking" in e.labels or "agent.thinking.narration" in e.labels]
    for _e, obj in idx.load_many(thinking_lines):
        for b in R.blocks_of(obj):
            if b.get("type") not in ("thinking", "redacted_thinking"):
                continue
            sig = b.get("signature")
            tag = R.signature_tag(sig) if isinstance(sig, str) and sig else None
            if tag == "narration":
                ls.narration_blocks += 1
            else:
                ls.thinking_blocks += 1
                if tag is None:
                    ls.untagged_thinking_blocks += 1
                elif tag != "thinking":
                    ls.unknown_thinking_tags[tag] += 1
    return ls


@dataclass
class StatsResult:
    lanes: list[LaneStats]
    problems: list[Problem]


def stats(scope: Scope, subagents: bool = True, strict: bool = False) -> StatsResult:
    out: list[LaneStats] = []
    problems = list(scope.problems)
    for s in scope.sessions:
        lanes = [scope.explicit_lanes[s.session_id]] if s.session_id in scope.explicit_lanes else s.lanes(subagents)
        for lane in lanes:
            try:
                out.append(lane_stats(lane, strict=strict))
            except OSError as exc:
                problems.append(Problem(str(lane.path), exc.strerror or str(exc)))
    return StatsResult(out, problems)
