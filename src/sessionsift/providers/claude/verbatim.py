"""Claude Code's ``compactions`` capability: its lane model's turns and compactions, for `verbatim`.

A Claude Code compaction APPENDS a boundary and a summary (CMP-018), so every earlier turn is still
in the transcript at its old line. The summary keeps task state but loses the back-and-forth
(CMP-009, CMP-010). :class:`LaneHistory` reads the lane index (providers/claude/model/lane.py): the
conversation chain (records ``live`` or ``pre-cut``, no replays, no abandoned drafts), turn by turn,
newest first, with the compaction summaries as ordinary turn members (CMP-011):

- each user turn whole: genuine prompts, AskUserQuestion units (questions, options, answers,
  notes: ELI-001/002/005), typed rejections with a `[plan: <path>]` pointer when the rejected
  call was an ExitPlanMode (PLAN-010), automation pulses as labels (TURN-018), slash commands by
  name, interrupts by their marker;
- tool calls folded to `[N tool calls]`; the agent's messages chosen by `agent_msgs`
  (`longest` by default: the end-of-turn quote is the one part a summary may keep, CMP-010).

Budget, trimming, banners and rendering are the question's (sessionsift/verbatim/walk.py). The
lengths are UTF-16 code units, Claude Code's unit (JS ``String.length``, MISC-012: its
SessionStart ``additionalContext`` threshold counts them; sessionsift/verbatim/slices.py).
"""

from __future__ import annotations

import re
from typing import Any, Iterator

from ..compaction import Block, Compaction, TurnHistory, Unit, u16 as u16len
from .discover import Lane
from .model import record as R
from .model.lane import Entry, LaneIndex
from .model.lanecols import COMPACT, OPENER, SURV_SHIFT

_ON_CHAIN = ("live", "pre-cut")
_PEER = re.compile(r"^\s*<(teammate-message|agent-message)([^>]*)>(.*?)</\1>\s*$", re.S)
_Block = Block


def _d(v: Any) -> dict:
    return v if isinstance(v, dict) else {}


def _l(v: Any) -> list:
    return v if isinstance(v, list) else []


def _target_of(lane: Lane) -> str:
    import shlex

    return shlex.quote(str(lane.path)) if lane.is_subagent else lane.session_id


class _Builder:
    def __init__(self, idx: LaneIndex, agent_msgs: str):
        self.idx = idx
        self.agent_msgs = agent_msgs
        self._tool_owner: dict[str, int] | None = None
        self._plan_paths: dict[str, str] = {}

    # -- lookups over the whole lane, built once on demand
    def tool_use_entry(self, tool_use_id: str) -> Entry | None:
        c = self.idx.columns
        if self._tool_owner is None:
            self._tool_owner = {}
            for i in c.tool_use_slots():
                for t in c.tools(0, i):
                    self._tool_owner.setdefault(t, i)
        slot = self._tool_owner.get(tool_use_id)
        return c.entry(slot) if slot is not None else None

    def tool_use_block(self, tool_use_id: str) -> dict | None:
        e = self.tool_use_entry(tool_use_id)
        if e is None:
            return None
        for b in R.tool_uses(self.idx.load(e)):
            if b.get("id") == tool_use_id:
                return b
        return None

    # -- one unit
    def _unit(self, kind: str, e: Entry, text: str, **kw) -> Unit:
        return Unit(kind=kind, turn=e.turn, line=e.no, last_line=None, labels=e.labels, text=text,
                    chars=u16len(text), uuid=e.uuid, timestamp=e.timestamp, **kw)

    def user_unit(self, e: Entry, obj: dict) -> Unit | None:
        lab = e.labels[0] if e.labels else ""
        if lab == "user.answer":
            return self._unit("answer", e, self.auq_text(obj))
        if lab == "user.rejection":
            text, plan = self.rejection_text(obj)
            return self._unit("rejection", e, text, plan_path=plan)
        if lab.startswith("harness.notification."):
            return self._unit("pulse", e, R.display_text(obj, list(e.labels)))
        if lab == "harness.schedule.wakeup":
            return self._unit("pulse", e, "[loop wakeup]")
        if lab == "harness.command.invocation":
            shown = R.display_text(obj, list(e.labels))
            raw = (R.string_text(obj) or "").strip()
            if shown.startswith("/?") and raw.startswith("/"):
                shown = raw  # a bare `/name args` prompt, not the wrapper form
            return self._unit("command", e, shown)
        if lab in ("agent.communication.inbox", "agent.communication.signal"):
            return self._unit("inbox", e, _peer_text(R.string_text(obj) or R.record_text(obj)))
        if lab in ("harness.interrupt.user", "harness.interrupt.tool"):
            return self._unit("interrupt", e, R.string_text(obj) or "")
        if lab == "user.message":
            text = R.string_text(obj) or ""
            imgs = sum(1 for b in R.blocks_of(obj) if b.get("type") == "image")
            if imgs:
                text += f"{' ' if text else ''}[{imgs} image{'s' if imgs != 1 else ''}]"
            return self._unit("user", e, text)
        return None

    def auq_text(self, obj: dict) -> str:
        tur = _d(obj.get("toolUseResult"))
        answers = _d(tur.get("answers"))
        questions: list | None = tur.get("questions") if isinstance(tur.get("questions"), list) else None
        notes = _d(tur.get("annotations"))
        if questions is None:  # fall back to the asking tool_use (ELI-001)
            for b in R.tool_results(obj):
                tu = self.tool_use_block(str(b.get("tool_use_id")))
                inp = _d(tu.get("input")) if tu else {}
                if isinstance(inp.get("questions"), list):
                    questions = inp["questions"]
                    break
        qs = [q for q in (questions or []) if isinstance(q, dict)]
        asked = [str(q.get("question", "")) for q in qs]
        for k in answers:  # an answer to a question we could not read still shows
            if k not in asked:
                qs.append({"question": k})
                asked.append(k)
        n = len(qs)
        lines = [f"[AskUserQuestion · {n} question{'s' if n != 1 else ''}]"]
        for i, q in enumerate(qs, 1):
            qt = str(q.get("question", ""))
            hdr = q.get("header")
            lines.append(f"Q{i}{' [' + str(hdr) + ']' if hdr else ''}{' (multi-select)' if q.get('multiSelect') else ''}: {qt}")
            opts = _l(q.get("options"))
            for o in opts:
                if not isinstance(o, dict):
                    continue
                d = o.get("description")
                lines.append(f"  - {o.get('label', '')}{' — ' + str(d) if d else ''}")
                if o.get("preview"):
                    lines.append(f"    preview: {o['preview']}")
            a = answers.get(qt)
            lines.append(f"A{i}: {a if a is not None else '(no answer recorded)'}")
            ann = _d(notes.get(qt))
            if ann.get("notes"):
                lines.append(f"  note: {ann['notes']}")
        if isinstance(tur.get("response"), str) and tur["response"]:
            lines.append(f"response: {tur['response']}")
        return "\n".join(lines)

    def rejection_text(self, obj: dict) -> tuple[str, str | None]:
        for b in R.tool_results(obj):
            tx = R.tool_result_text(b)
            if R.REJECTION_TYPED not in tx:
                continue
            said = tx.split(R.REJECTION_TYPED, 1)[1].strip()
            tu = self.tool_use_block(str(b.get("tool_use_id")))
            name = tu.get("name") if tu else None
            inp = _d(tu.get("input")) if tu else {}
            plan = inp.get("planFilePath") if name == "ExitPlanMode" and isinstance(inp.get("planFilePath"), str) else None
            head = f"[rejected {name}]" if name else "[rejected a tool call]"
            return f"{head} {said}" + (f" [plan: {plan}]" if plan else ""), plan
        return R.display_text(obj, ["user.rejection"]), None

    # -- one turn
    def block(self, turn: int | None, entries: list[Entry], summary_lines: set[int]) -> _Block:
        wanted = [e for e in entries if e.opener or e.type == "assistant" or e.no in summary_lines
                  or (e.labels and e.labels[0] in ("harness.interrupt.user", "harness.interrupt.tool",
                                                   "harness.command.invocation"))]
        need = [e for e in wanted if e.no not in summary_lines and not (e.type == "assistant" and "agent.message" not in e.labels)]
        objs = {e.no: o for e, o in self.idx.load_many(need)}
        # events in file order: ("unit", Unit) | ("agent", [entries], text) | ("tools", n, line) | ("summary", line)
        events: list[tuple] = []
        agent_groups: dict[str, int] = {}
        for e in wanted:
            if e.no in summary_lines:
                events.append(("summary", e.no))
                continue
            if e.type == "assistant":
                if "agent.message" in e.labels:
                    o = objs.get(e.no, {})
                    t = "\n".join(str(b.get("text", "")) for b in R.blocks_of(o) if b.get("type") == "text")
                    key = e.msg_id or f"L{e.no}"
                    if key in agent_groups and events[agent_groups[key]][0] == "agent":
                        ev = events[agent_groups[key]]
                        ev[1].append(e)
                        ev[2].append(t)
                    else:
                        agent_groups[key] = len(events)
                        events.append(("agent", [e], [t]))
                if e.tool_use_ids:
                    events.append(("tools", len(e.tool_use_ids), e.no))
                continue
            u = self.user_unit(e, objs.get(e.no, {}))
            if u is not None:
                events.append(("unit", u))
        agents = [ev for ev in events if ev[0] == "agent"]
        keep: set[int] = set()
        if agents:
            texts = ["\n".join(ev[2]) for ev in agents]
            if self.agent_msgs == "all":
                keep = {id(ev) for ev in agents}
            elif self.agent_msgs == "last":
                keep = {id(agents[-1])}
            else:
                lens = [u16len(t) for t in texts]
                best = max(range(len(agents)), key=lambda i: (lens[i], i))
                keep = {id(agents[best])}
        units: list[Unit] = []
        fold: dict[str, Any] = {"tools": 0, "agents": 0, "first": None, "last": None}

        def flush():
            if fold["tools"] or fold["agents"]:
                parts = []
                if fold["tools"]:
                    parts.append(f"{fold['tools']} tool call{'s' if fold['tools'] != 1 else ''}")
                if fold["agents"]:
                    parts.append(f"{fold['agents']} agent message{'s' if fold['agents'] != 1 else ''} not shown")
                text = "[" + " · ".join(parts) + "]"
                units.append(Unit(kind="fold", turn=turn, line=fold["first"],
                                  last_line=fold["last"] if fold["last"] != fold["first"] else None,
                                  labels=(), text=text, chars=u16len(text), tool_calls=fold["tools"],
                                  hidden_agent_messages=fold["agents"]))
            fold.update(tools=0, agents=0, first=None, last=None)

        def add_fold(line: int, tools: int = 0, agents: int = 0):
            fold["tools"] += tools
            fold["agents"] += agents
            fold["first"] = line if fold["first"] is None else fold["first"]
            fold["last"] = line

        tool_calls = 0
        ts = None
        for ev in events:
            if ev[0] == "unit":
                flush()
                units.append(ev[1])
                ts = ts or ev[1].timestamp
            elif ev[0] == "summary":
                flush()
            elif ev[0] == "tools":
                tool_calls += ev[1]
                add_fold(ev[2], tools=ev[1])
            elif ev[0] == "agent":
                es = ev[1]
                if id(ev) in keep:
                    flush()
                    u = self._unit("agent", es[0], "\n".join(ev[2]))
                    if len(es) > 1:
                        u.last_line = es[-1].no
                    units.append(u)
                    ts = ts or u.timestamp
                else:
                    add_fold(es[0].no, agents=1)
        flush()
        if ts is None:
            ts = next((e.timestamp for e in entries if e.timestamp), None)
        return _Block(turn, units, ts, len(agents), len(keep), tool_calls)


def _peer_text(text: str) -> str:
    m = _PEER.match(text or "")
    if not m:
        return text or ""
    attrs = " ".join(f"{k}={v}" for k, v in re.findall(r'(\w[\w-]*)="([^"]*)"', m.group(2)))
    return f"[message{' ' + attrs if attrs else ''}] {m.group(3).strip()}"


def _compactions(idx: LaneIndex) -> list[Compaction]:
    out: list[Compaction] = []
    c = idx.columns
    sums = [e for e in map(c.entry, idx.slots_where(COMPACT, COMPACT))
            if e.survival in _ON_CHAIN and e.replay_of is None]
    if not sums:
        return out
    codes = {k for k, kind in enumerate(c.kinds) if kind[1] == "compact_boundary"}
    bnd_by_uuid = {e.uuid: e for e in (c.entry(i) for i, k in enumerate(c.kind) if k in codes) if e.uuid}
    loaded = dict((e.no, o) for e, o in idx.load_many(sums))
    for e in sums:
        b = bnd_by_uuid.get(e.parent) if e.parent else None
        bobj: dict = (idx.load(b) or {}) if b else {}
        cm = _d(bobj.get("compactMetadata"))
        text = R.string_text(loaded.get(e.no, {})) or ""
        pt = cm.get("preTokens")
        out.append(Compaction(summary_line=e.no, boundary_line=b.no if b else None, summary_chars=u16len(text),
                              trigger=cm.get("trigger") if isinstance(cm.get("trigger"), str) else None,
                              pre_tokens=pt if isinstance(pt, int) else None, timestamp=e.timestamp,
                              uuid=e.uuid, text=text))
    return out


def _turn_groups(idx: LaneIndex) -> list[tuple[int | None, list[Entry]]]:
    groups: dict[int, list[Entry]] = {}
    c = idx.columns
    for e in map(c.entry, _on_chain(idx)):
        turn = e.turn
        if turn is None and e.parent is not None:
            # a record written a moment BEFORE its parent (seen at 2.1.258: the first assistant call
            # lands on the line above the prompt it answers) belongs to its parent's turn
            p = idx.by_uuid.get(e.parent)
            turn = (c.turn[p] if c.turn[p] >= 0 else None) if p is not None else None
        groups.setdefault(turn or 0, []).append(e)  # 0 = no turn, a sort key only: mapped back to None below
    out = []
    for t, es in sorted(groups.items()):
        op = [e for e in es if e.opener]
        if op and es[0] is not op[0]:  # the opener leads its turn
            es = [op[0]] + [e for e in es if e is not op[0]]
        out.append((t or None, es))
    return out


def _latest(idx: LaneIndex) -> tuple[int | None, int | None]:
    ls = lt = None
    c = idx.columns
    for i in _on_chain(idx):
        f = c.fl[i]
        if f & COMPACT:
            ls = c.no[i]
        elif f & OPENER:
            lt = c.no[i]
    return ls, lt


_ON_CHAIN_TABLE = bytes(1 if (b >> SURV_SHIFT) in (1, 3) else 0 for b in range(256))
"""Flag bytes (providers/claude/model/lanecols.py) whose survival is live (1) or pre-cut (3): _ON_CHAIN."""


def _on_chain(idx: LaneIndex):
    """Slots of the records on the conversation chain (live or pre-cut) that are no replays,
    found in the index's columns (no Entry is made for the others)."""
    c = idx.columns
    rep = c.rep
    hits = c.fl.translate(_ON_CHAIN_TABLE)
    i = hits.find(1)
    while i >= 0:
        if rep[i] < 0:
            yield i
        i = hits.find(1, i + 1)



class LaneHistory(TurnHistory):
    """One Claude Code lane as a :class:`TurnHistory` (built over its lane index)."""

    def __init__(self, lane: Lane, index: LaneIndex | None = None):
        idx = index or LaneIndex.build(lane)
        self.idx = idx
        ls, lt = _latest(idx)
        super().__init__(session_id=lane.session_id, path=str(lane.path), compactions=_compactions(idx),
                         turns_total=idx.turns, latest_summary_line=ls, latest_turn_line=lt,
                         last_line=idx.entries[-1].no if idx.entries else 0, omissions=idx.stats.omissions(),
                         lane=lane, target=_target_of(lane))

    def blocks(self, agent_msgs: str) -> Iterator[Block]:
        builder = _Builder(self.idx, agent_msgs)
        sum_lines = {c.summary_line for c in self.compactions if c.summary_line is not None}
        for turn, entries in reversed(_turn_groups(self.idx)):
            yield builder.block(turn, entries, sum_lines)
