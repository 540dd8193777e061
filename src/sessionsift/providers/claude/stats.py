"""`stats`: line types, label census, turns, compactions, tokens, narration, omissions."""

from __future__ import annotations

import os
import threading
from collections import Counter
from dataclasses import dataclass, field

from .discover import Lane, Problem, Scope
from .model import record as R
from .model.lane import ABANDONED, LIVE, PRECUT, SURVIVAL_NAMES, LaneIndex, Skeleton
from ...read.lines import ReadStats, open_map
from ...read.fanout import Worker, no_gc  # one forked-worker implementation
# the streaming line scanner; USAGE_FIELDS re-exported (census.py, cli/stats_run.py)
from .lanescan import USAGE_FIELDS, Part, _count_thinking, _merge, _projected, _scan, _tool_blocks

_USAGE_SET = frozenset(USAGE_FIELDS)


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
    """Per model, per usage field: the sum over the API messages that carry the field."""
    messages_by_model: Counter = field(default_factory=Counter)
    tokens_missing: dict[str, dict[str, int]] = field(default_factory=dict)
    """Per model, per usage field: how many API messages lack it (only non-zero entries). Where
    one does, the field's total is unknown and `tokens` holds a lower bound."""
    narration_blocks: int = 0
    thinking_blocks: int = 0
    untagged_thinking_blocks: int = 0
    unknown_thinking_tags: Counter = field(default_factory=Counter)
    unknown_line_types: Counter = field(default_factory=Counter)
    tool_calls: Counter = field(default_factory=Counter)
    """Tool name -> calls: distinct tool_use ids (a replayed copy of a record repeats its ids; a block
    without an id counts once per line), in order of first call."""
    tool_errors: Counter = field(default_factory=Counter)
    """Tool name -> calls whose tool_result the client marked `is_error` (distinct tool_use ids;
    "(unknown tool)" when no tool_use in the lane carries the id)."""
    prompts: dict = field(default_factory=dict)
    """How the prompts typed in this lane reached the model (prompt_census)."""
    forked_from: dict | None = None
    """The session this lane's session was forked from (providers/claude/model/lineage.py), else None."""
    copied_records: int = 0
    """Records left out of this census because they copy a record of an in-scope parent session
    (a `--fork-session` fork): each original record is counted once, on the parent."""
    per_msg: dict = field(default_factory=dict, repr=False)
    """(model, message id | "line:N") -> usage fields of each API message of the lane (per-field max
    over its records); what `dedupe_messages` counts each response once from."""
    messages_copied: int = 0
    """API messages of this lane whose message id another lane in scope also holds and that are
    counted there (each API response once, as `usage` counts it): left out of `tokens`."""
    tokens_copied: dict[str, dict[str, int]] = field(default_factory=dict)
    """Per model, per usage field: the sums over those copies (already counted in another lane)."""
    copies_counted_in: Counter = field(default_factory=Counter)
    """session id (lane, for a subagent lane: "<session>/<lane>") -> how many of those copies it counts."""
    per_msg_later: tuple | None = field(default=None, repr=False, compare=False)
    """(message ids, loader) when `per_msg` is not decoded yet (an answer kept per data root,
    providers/claude/cache/lanes.py): the ids in per_msg's order, and what gives per_msg;
    `dedupe_messages` decodes it only when a response is held twice."""


from .model.known import KNOWN_TYPES  # noqa: E402,F401 - re-exported (tests)


def lane_stats(lane: Lane, strict: bool = False, parallel: bool = True) -> LaneStats:
    """The census of one lane in one streaming pass (no record objects are kept: counters per
    record plus the compact survival `Skeleton` shared with `LaneIndex`). A large file is split
    at a line boundary and its second half read by a forked worker (`parallel`, not `strict`)."""
    with open_map(lane.path) as m:
        part = scan_part(m.buf, 0, len(m.buf), lane.path, strict, parallel)
    part.read.files = 1
    return _finish(lane, part)


def scan_part(buf, start: int, end: int, path, strict: bool = False, parallel: bool = True,
              cols: bool = False) -> "Part":
    """The census part of buf[start:end) (`end` the size of `buf`, or just after a newline); a large
    range is split at a line boundary and its second half read by a forked worker (`parallel`,
    not `strict`). `cols`: also collect the per-record columns an index keeps."""
    split = _split_point(buf, end, start) if parallel and not strict else None
    with no_gc():  # records are acyclic; a collection pass would walk the skeleton and counters
        if split is None:
            return _scan(buf, start, end, path, strict, cols)
        return _scan_two(buf, start, split, end, path, cols)


def lane_stats_indexed(lane: Lane, strict: bool = False, copies: frozenset[int] | None = None) -> LaneStats:
    """The same census from a full `LaneIndex` (the reference the streaming path is tested
    against; slower and holds every entry). `copies`: lines whose records copy another in-scope
    session's (a fork's): left out of every count but the lane's turns, which are its own."""
    idx = LaneIndex.build(lane, strict=strict)
    ls = LaneStats(lane, idx.stats)
    ents = list(idx.entries)  # made once: LaneIndex.entries builds each Entry on access, every pass
    per_msg: dict[tuple[str, str], dict[str, int]] = {}
    copies = copies or frozenset()
    ls.copied_records = sum(1 for e in ents if e.no in copies)
    for e in ents:
        if e.no in copies:
            continue
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
        if e.type == "assistant" and (e.usage is not None or e.model):
            model = e.model or "(unknown model)"
            key = (model, e.msg_id or f"line:{e.no}")
            cur = per_msg.setdefault(key, {})
            for f, v in zip(USAGE_FIELDS, e.usage or ()):
                if v is not None:
                    cur[f] = max(cur.get(f, v), v)
    ls.turns = idx.turns
    ls.per_msg = per_msg
    _tokens(ls, per_msg)
    thinking_lines = [e for e in ents if ("agent.thinking" in e.labels or "agent.thinking.narration" in e.labels)
                      and e.no not in copies]
    for _e, obj in idx.load_many(thinking_lines):
        _count_thinking(ls, obj)
    uses: dict = {}
    errs: dict = {}
    queued: list[int] = []
    pos = {e.no: i for i, e in enumerate(ents)}  # entries are made on access: by line, not identity
    for e, obj in idx.load_many([e for e in ents if (e.type in ("assistant", "user")
                                 or e.attachment == "queued_command") and e.no not in copies]):
        if e.type == "attachment":
            if R.is_queued_prompt(obj):
                queued.append(pos[e.no])
        else:
            _tool_blocks(obj, e.no, uses, errs)
    _tool_counts(ls, uses, errs)
    code = {name: c for c, name in enumerate(SURVIVAL_NAMES) if name}
    parent = [idx.by_uuid.get(e.parent, -1) if e.uuid is not None and e.parent else -1 for e in ents]
    ls.prompts = prompt_census(
        parent, [i for i, e in enumerate(ents) if e.type == "assistant"],
        [i for i, e in enumerate(ents) if e.type == "user" and ("user.message" in e.labels
                                                                 or e.labels[:1] == ("user.unsent",))],
        queued, [code.get(e.survival, 0) for e in ents],
        {i for i, e in enumerate(ents) if e.replay_of is not None or e.no in copies})
    return ls


PROMPT_KINDS = ("sent", "queued", "rewound", "unsent")


def prompt_census(parent, assistants, prompts, queued, state, replay) -> dict[str, int]:
    """How each prompt reached the model, from the survival skeleton of one lane:

    - sent: a record carrying `user.message` that is on the conversation chain (live or pre-cut);
    - queued: a prompt typed while the agent was busy and delivered mid-turn (a `queued_command`
      attachment, `R.is_queued_prompt`) that is not abandoned;
    - rewound: an abandoned prompt the model had answered (an assistant record descends from it
      through non-assistant records): the conversation was rewound past it;
    - unsent: an abandoned prompt nothing answered (a draft recalled, edited and re-sent, TURN-022).

    `parent[i]` is the slot of record i's parent (< 0: none); `state[i]` its survival code; replays
    (slots in `replay`) are copies and not counted. Each assistant record walks up through
    non-assistant records (at most 256) to the prompt it answers, so the walk is linear overall."""
    marks = set(prompts)
    marks.update(queued)
    asst = set(assistants)
    answered: set[int] = set()
    for a in assistants:
        p = parent[a]
        steps = 0
        while p >= 0 and steps < 256:
            if p in marks:
                answered.add(p)
                break
            if p in asst:
                break
            p = parent[p]
            steps += 1
    out = dict.fromkeys(PROMPT_KINDS, 0)
    for slots, kept in ((prompts, "sent"), (queued, "queued")):
        for i in slots:
            if i in replay:
                continue
            if state[i] == ABANDONED:
                out["rewound" if i in answered else "unsent"] += 1
            else:
                out[kept] += 1
    return out


def _tool_counts(ls: LaneStats, uses: dict, errs: dict) -> None:
    for name in uses.values():
        ls.tool_calls[name] += 1
    for k in errs:
        ls.tool_errors[uses.get(k, "(unknown tool)")] += 1


def _tokens(ls: LaneStats, per_msg: dict) -> None:
    """Per model: messages, the sum of each usage field over the messages that carry it, and how
    many lack it (an assistant record with a model but no usage object lacks every field). Models
    and each model's fields are in order of first appearance."""
    by_model: dict[str, list[dict[str, int]]] = {}
    for (model, _mid), fields in per_msg.items():
        lst = by_model.get(model)
        if lst is None:
            by_model[model] = [fields]
        else:
            lst.append(fields)
    msgs, tokens = ls.messages_by_model, ls.tokens
    for model, lst in by_model.items():
        n = len(lst)
        msgs[model] += n
        order: list[str] = []
        for fields in lst:  # the fields in order of first appearance (the first message has them all, usually)
            for f in fields:
                if f not in order:
                    order.append(f)
            if len(order) >= len(USAGE_FIELDS) and _USAGE_SET.issubset(order):
                break
        agg = tokens.setdefault(model, {})
        miss = {}
        for f in order:
            vals = [fields[f] for fields in lst if f in fields]
            agg[f] = agg.get(f, 0) + sum(vals)  # a sum over the messages that wrote this field
            if len(vals) < n:
                miss[f] = n - len(vals)
        for f in USAGE_FIELDS:
            if f not in agg:
                miss[f] = n
        if miss:
            ls.tokens_missing[model] = {f: miss[f] for f in USAGE_FIELDS if f in miss}


# -- the streaming census ------------------------------------------------------------------

PARALLEL_MIN_BYTES = 32 << 20
"""Files at least this large are read by two processes (one per half)."""

def _can_fork() -> bool:
    """Two processes help: two cores, fork available, and no threads (forking a threaded process
    can deadlock the child)."""
    return (os.cpu_count() or 1) >= 2 and hasattr(os, "fork") and threading.active_count() == 1


def _split_point(buf, size: int, start: int = 0) -> int | None:
    """Where a large range [start, size) is cut for two processes (just after a newline), or None."""
    if size - start < PARALLEL_MIN_BYTES or not _can_fork():
        return None
    # the worker's half is a little smaller: it still has to send its part when done
    nl = buf.find(b"\n", start + (size - start) * 51 // 100)
    if nl < 0 or nl + 1 >= size:
        return None
    return nl + 1


def _scan_two(buf, start: int, split: int, size: int, path, cols: bool = False) -> Part:
    """Read [split, size) in a forked worker while this process reads [start, split)."""
    _projected()  # imported here, before the fork, so the worker inherits it (not both importing msgspec)
    worker = Worker(lambda: _scan(buf, split, size, path, False, cols))
    try:
        head = _scan(buf, start, split, path, False, cols)
        tail = worker.result()
    finally:
        worker.close()
    if tail is None:
        tail = _scan(buf, split, size, path, False, cols)
    _merge(head, tail)
    return head


def _finish(lane: Lane, part: Part) -> LaneStats:
    sk = part.sk
    sk.finish()
    state = sk.survive()
    combos = part.combos
    drafts = set(sk.draft_slots(state))
    part.state, part.drafts = state, sorted(drafts)
    if drafts:
        # drafts are read as user.unsent: move them to their own combo, keeping first-line order
        first = part.first
        old_first: dict[tuple, int] = {}
        for slot, labels in part.umsg:
            old = ("user", None, None, labels)
            if slot in drafts:
                new = ("user", None, None, ("user.unsent",) + labels[1:])
                combos[old] -= 1
                combos[new] = combos.get(new, 0) + 1
                first[new] = min(first.get(new, slot), slot)
            else:
                old_first.setdefault(old, slot)
        for old in {("user", None, None, labels) for _s, labels in part.umsg}:
            if combos[old] == 0:
                del combos[old]
            else:
                first[old] = old_first[old]
        combos = dict(sorted(combos.items(), key=lambda kv: first[kv[0]]))
    ls = LaneStats(lane, part.read)
    part.read.bridges = [(ln, om, tl, op) for _s, ln, om, tl, op in sk.bridges]
    for (t, sub, att, labels), c in combos.items():
        ls.line_types[t or "(no type)"] += c
        if t and t not in KNOWN_TYPES:
            ls.unknown_line_types[t] += c
        if t == "system":
            ls.system_subtypes[sub or "(none)"] += c
        if t == "attachment":
            ls.attachment_kinds[att or "(none)"] += c
        if labels:
            for lab in labels:
                ls.labels[lab] += c
        else:
            ls.unlabelled += c
        if labels[:1] == ("harness.compaction.boundary",):
            ls.compactions += c
    ls.replayed_lines = len(sk.replay)
    for code in sorted((c for c in (LIVE, ABANDONED, PRECUT) if c in state), key=state.find):
        ls.survival[SURVIVAL_NAMES[code]] = state.count(code)
    ls.turns = sk.turn_count(state)
    per_msg = part.per_msg
    if any(type(mid) is int for _model, mid in per_msg):
        # messages without an id are keyed by line: the same keys LaneIndex gives them (one of
        # which a written id "line:N" could equal: then their fields merge)
        per_msg = {}
        for (model, mid), fields in part.per_msg.items():
            cur = per_msg.setdefault((model, f"line:{mid}" if type(mid) is int else mid), {})
            for f, v in fields.items():
                cur[f] = max(cur.get(f, v), v)
    ls.per_msg = per_msg
    _tokens(ls, per_msg)
    ls.narration_blocks = part.narration_blocks
    ls.thinking_blocks = part.thinking_blocks
    ls.untagged_thinking_blocks = part.untagged_thinking_blocks
    ls.unknown_thinking_tags = part.unknown_thinking_tags
    _tool_counts(ls, part.uses, part.errs)
    ls.prompts = prompt_census(sk.parent, part.asst, part.prompt_slots, part.queued_slots, state, sk.replay)
    return ls


@dataclass
class StatsResult:
    lanes: list[LaneStats]
    problems: list[Problem]


def stats(scope: Scope, subagents: bool = True, strict: bool = False, census=None) -> StatsResult:
    """The census of every lane in scope. `census(lane, strict, parallel)` computes one lane's
    (default: a scan; sessionsift.providers.claude.cache.lanes.census_one answers from the index)."""
    lanes: list[Lane] = []
    for s in scope.sessions:
        lanes += [scope.explicit_lanes[s.session_id]] if s.session_id in scope.explicit_lanes else s.lanes(subagents)
    from .model.lineage import lineage_for

    problems = list(scope.problems)
    out: list[LaneStats] = []
    # a family's members are read from their index (indexed first where they have none: a census
    # reads every record anyway), so lineage parses no line on a warm run
    forks = lineage_for(scope.sessions, build=census is not None)
    in_scope = {s.session_id for s in scope.sessions}
    counted_once = {f.path: f for f in forks.values() if f.parent_session_id in in_scope}
    plain = [ln for ln in lanes if str(ln.path) not in counted_once]
    kept = getattr(census, "kept", None)  # the census's own keeper of whole answers, where it has one
    done = kept.get(plain, strict) if kept is not None else {}
    todo = [ln for ln in plain if id(ln) not in done]
    done.update((id(ln), r) for ln, r in zip(todo, _census_all(todo, strict, census or _census_one)))
    if kept is not None and todo:
        kept.put(plain, done)
    for ln in lanes:
        r = done.get(id(ln))
        if r is None:  # a fork whose parent is in scope: its copies counted once, on the parent
            f = counted_once[str(ln.path)]
            try:  # from the census's own keeper where it has one (providers/claude/cache/lanes.py fork_stats)
                r = getattr(census, "fork_stats", lane_stats_indexed)(ln, strict=strict,
                                                                      copies=frozenset(f.copied_lines))
            except OSError as exc:
                r = Problem(str(ln.path), exc.strerror or str(exc))
        if isinstance(r, Problem):
            problems.append(r)
        else:
            if not ln.is_subagent and ln.session_id in forks:
                r.forked_from = forks[ln.session_id].as_json()
            out.append(r)
    dedupe_messages(out)
    return StatsResult(out, problems)


def _lane_name(ls: LaneStats) -> str:
    ln = ls.lane
    return ln.session_id if not ln.is_subagent else f"{ln.session_id}/{ln.agent_id or ln.lane_id}"


def dedupe_messages(lanes: list[LaneStats]) -> None:
    """Each API response once across the lanes in scope, by the rule `usage` counts it by
    (usage/events.py): one message id is one response, whichever lane or session holds it
    (forks, resumed copies); its fields are the per-field maximum over the copies, counted in the
    lane of the copy with the largest total, a main lane before a subagent lane, then the first in
    scope order. Every other lane's copy leaves its `tokens` and is said: `messages_copied`,
    `tokens_copied`, `copies_counted_in`. Messages without an id ("line:N") are their lane's own."""
    def ids(ls: LaneStats):
        return ls.per_msg_later[0] if ls.per_msg_later is not None else [mid for _model, mid in ls.per_msg]

    if all(len(ids(ls)) == 0 for ls in lanes):
        return
    # who holds each response first: where none is held twice (a store without forks or resumed
    # copies) every lane's figures stand as read, and the merge below is not computed at all
    holders: dict[str, int] = {}
    for ls in lanes:
        for mid in ids(ls):
            if not mid.startswith("line:"):
                holders[mid] = holders.get(mid, 0) + 1
    if all(n == 1 for n in holders.values()):
        return  # no response is held twice: every lane's figures stand as read
    for ls in lanes:
        if ls.per_msg_later is not None:
            ls.per_msg, ls.per_msg_later = ls.per_msg_later[1](), None
    best: dict[str, tuple[tuple, int, dict]] = {}
    for i, ls in enumerate(lanes):
        main = not ls.lane.is_subagent
        for (model, mid), fields in ls.per_msg.items():
            if mid.startswith("line:"):
                continue
            tot = sum(fields.get(f, 0) for f in USAGE_FIELDS)
            rank = (tot, main, -i)
            cur = best.get(mid)
            if cur is None:
                best[mid] = (rank, i, dict(fields))
            else:
                merged = cur[2]
                for f, v in fields.items():
                    if v > merged.get(f, -1):
                        merged[f] = v
                if rank > cur[0]:
                    best[mid] = (rank, i, merged)
    for i, ls in enumerate(lanes):
        own: dict = {}
        copied: dict = {}
        for (model, mid), fields in ls.per_msg.items():
            b = None if mid.startswith("line:") else best.get(mid)
            if b is None or holders.get(mid, 1) == 1:
                own[(model, mid)] = fields
            elif b[1] == i:
                own[(model, mid)] = b[2]  # the per-field max over every copy
            else:
                copied[(model, mid)] = fields
                ls.copies_counted_in[_lane_name(lanes[b[1]])] += 1
        if not copied and all(own[k] is ls.per_msg[k] for k in own):
            continue
        ls.tokens, ls.tokens_missing, ls.messages_by_model = {}, {}, Counter()
        _tokens(ls, own)
        ls.messages_copied = len(copied)
        for (model, _mid), fields in copied.items():
            agg = ls.tokens_copied.setdefault(model, {})
            for f, v in fields.items():
                agg[f] = agg.get(f, 0) + v


def _census_one(lane: Lane, strict: bool, parallel: bool) -> "LaneStats | Problem":
    try:
        return lane_stats(lane, strict=strict, parallel=parallel)
    except OSError as exc:
        return Problem(str(lane.path), exc.strerror or str(exc))


def _census_all(lanes: list[Lane], strict: bool, one=None) -> list["LaneStats | Problem"]:
    """Every lane's census, in order. Many lanes with no dominant one are shared between this
    process and a forked worker (contiguous halves by size); one large lane is split inside."""
    sizes = []
    for lane in lanes:
        try:
            sizes.append(lane.path.stat().st_size)
        except OSError:
            sizes.append(0)  # only balances the halves: the reading itself reports the problem
    total = sum(sizes)
    one = one or _census_one
    if (strict or len(lanes) < 2 or total < PARALLEL_MIN_BYTES or max(sizes) * 2 >= total
            or not _can_fork()):
        return [one(lane, strict, True) for lane in lanes]
    cut, acc = 0, 0
    while cut < len(lanes) - 1 and acc + sizes[cut] <= total // 2:
        acc += sizes[cut]
        cut += 1
    cut = max(cut, 1)
    if one is _census_one:  # (as in _scan_two: imported once, before the fork; an index answer may not decode)
        _projected()
    worker = Worker(lambda: [one(lane, False, False) for lane in lanes[cut:]])
    try:
        head = [one(lane, False, False) for lane in lanes[:cut]]
        tail = worker.result()
    finally:
        worker.close()
    if tail is None:
        tail = [one(lane, False, False) for lane in lanes[cut:]]
    return head + tail
