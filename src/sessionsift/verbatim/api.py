"""`verbatim`: the turns a compaction summary clipped, given back verbatim from the same file.

A compaction APPENDS a boundary and a summary (CMP-018), so every earlier turn is still in the
transcript at its old line. The summary keeps task state but loses the back-and-forth (CMP-009,
CMP-010). This module walks the session's conversation chain back from its end, recency first,
turn by turn, until a character budget is spent, passing through compaction summaries as ordinary
turn members (CMP-011), and renders the selected turns in forward order:

- each user turn whole: genuine prompts, AskUserQuestion units (questions, options, answers,
  notes: ELI-001/002/005), typed rejections with a `[plan: <path>]` pointer when the rejected
  call was an ExitPlanMode (PLAN-010), automation pulses as labels (TURN-018), slash commands by
  name, interrupts by their marker;
- tool calls folded to `[N tool calls]`; the agent's messages chosen by `agent_msgs`
  (`longest` by default: the end-of-turn quote is the one part a summary may keep, CMP-010);
- every unit carries its `L<n>`; every crossed summary gets a banner naming its line; units the
  summary already quotes verbatim are marked; long units are trimmed in the middle under an
  explicit marker.

Lengths are UTF-16 code units, the unit Claude Code counts (MISC-012). The whole rendered text,
header included, stays within the budget.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from ..providers.claude.discover import Lane
from ..errors import UsageError
from ..providers.claude.model import record as R
from ..providers.claude.model.lane import Entry, LaneIndex
from ..providers.claude.model.lanecols import COMPACT, OPENER, SURV_SHIFT
from ..render import esc
from .slices import slice_text, trim_middle, u16len

AgentMsgs = Literal["longest", "last", "all"]
AGENT_MSG_MODES = ("longest", "last", "all")
DEFAULT_BUDGET = 40_000
DEFAULT_WINDOW = 9_000
DEFAULT_MAX_UNIT = 6_000
MIN_TRIMMED = 160  # a unit squeezed to fit the budget keeps at least this much (plus its marker)

_ON_CHAIN = ("live", "pre-cut")
_WS = re.compile(r"\s+")
_PEER = re.compile(r"^\s*<(teammate-message|agent-message)([^>]*)>(.*?)</\1>\s*$", re.S)


@dataclass
class Unit:
    """One rendered piece of a turn. `chars` is the UTF-16 length of the body before trimming;
    `trimmed_chars` how many units the middle-trim removed (0 = whole)."""

    kind: str  # user | answer | rejection | pulse | command | inbox | interrupt | agent | fold
    turn: int | None
    line: int
    last_line: int | None
    labels: tuple[str, ...]
    text: str
    chars: int
    trimmed_chars: int = 0
    uuid: str | None = None
    timestamp: str | None = None
    quoted_in_summary: int | None = None
    tool_calls: int | None = None
    hidden_agent_messages: int | None = None
    plan_path: str | None = None


@dataclass
class Compaction:
    """One compaction on the conversation chain: its summary record and the boundary before it."""

    summary_line: int
    boundary_line: int | None
    summary_chars: int
    trigger: str | None
    pre_tokens: int | None
    timestamp: str | None
    uuid: str | None
    spanned: bool = False
    text: str = field(default="", repr=False)
    pending: bool = False
    """A compaction happening now whose boundary and summary are not in the file yet: the client fires
    SessionStart(compact) BEFORE it appends them (observed at 2.1.258). `summary_line` is then the
    line the summary will land at or after (the file's last line + 1)."""

    @property
    def where(self) -> str:
        return (f"summary not yet written (it will follow L{self.summary_line - 1})" if self.pending
                else f"summary at L{self.summary_line}")


@dataclass
class Accounting:
    budget: int
    chars_used: int
    turns_total: int
    turns_selected: int
    first_turn: int | None
    last_turn: int | None
    boundaries_total: int
    boundaries_spanned: int
    max_compactions: int | None
    stopped_by: str  # start_of_session | budget | max_compactions | no_compaction
    agent_msgs: str
    max_unit: int
    units: int
    units_trimmed: int
    agent_messages_in_turns: int
    agent_messages_shown: int
    tool_calls_folded: int
    unit: str = "utf16"


@dataclass
class VerbatimResult:
    lane: Lane
    target: str
    units: list[Unit]
    compactions: list[Compaction]
    accounting: Accounting
    text: str
    notes: list[str]
    omissions: dict[str, int] = field(default_factory=dict)
    """What the reading of the transcript could not take in (read.lines.ReadStats.omissions)."""
    latest_summary_line: int | None = None
    """Line of the newest compaction summary on the chain (None: no compaction)."""
    latest_turn_line: int | None = None
    """Line of the newest turn opener on the chain (None: no turn). A summary newer than every turn
    opener means the session is sitting right after a compaction: what a SessionStart(compact)
    hook waits for, since the client fires the hook before the summary reaches the file."""

    @property
    def has_compaction(self) -> bool:
        return bool(self.compactions)

    def slices(self, window: int = DEFAULT_WINDOW) -> list[str]:
        return slice_text(self.text, window)


# ------------------------------------------------------------------------------ building units


@dataclass
class _Block:
    turn: int | None
    units: list[Unit]
    timestamp: str | None
    agent_messages: int
    shown_agent: int
    tool_calls: int

    @property
    def min_line(self) -> int | None:
        return min((u.line for u in self.units), default=None)


def _norm(s: str) -> str:
    return _WS.sub(" ", s).strip()


def _target_of(lane: Lane) -> str:
    import shlex

    return shlex.quote(str(lane.path)) if lane.is_subagent else lane.session_id


def _marker(target: str, line: int):
    def mk(removed: int, total: int) -> str:
        return (f"\n[… {removed} of {total} chars trimmed from the middle · full text: "
                f"sessionsift show {target} --line {line} …]\n")
    return mk


class _Builder:
    def __init__(self, idx: LaneIndex, agent_msgs: str, max_unit: int, target: str | None = None):
        self.idx = idx
        self.agent_msgs = agent_msgs
        self.max_unit = max_unit
        self.target = target or _target_of(idx.lane)
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
        i = self._tool_owner.get(tool_use_id)
        return c.entry(i) if i is not None else None

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
        chars = u16len(text)
        body, removed = text, 0
        if self.max_unit > 0 and chars > self.max_unit:
            body, removed = trim_middle(text, self.max_unit, _marker(self.target, e.no))
        return Unit(kind=kind, turn=e.turn, line=e.no, last_line=None, labels=e.labels, text=body,
                    chars=chars, trimmed_chars=removed, uuid=e.uuid, timestamp=e.timestamp, **kw)

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
        tur = obj.get("toolUseResult") if isinstance(obj.get("toolUseResult"), dict) else {}
        answers = tur.get("answers") if isinstance(tur.get("answers"), dict) else {}
        questions = tur.get("questions") if isinstance(tur.get("questions"), list) else None
        notes = tur.get("annotations") if isinstance(tur.get("annotations"), dict) else {}
        if questions is None:  # fall back to the asking tool_use (ELI-001)
            for b in R.tool_results(obj):
                tu = self.tool_use_block(str(b.get("tool_use_id")))
                inp = tu.get("input") if tu and isinstance(tu.get("input"), dict) else {}
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
            opts = q.get("options") if isinstance(q.get("options"), list) else []
            for o in opts:
                if not isinstance(o, dict):
                    continue
                d = o.get("description")
                lines.append(f"  - {o.get('label', '')}{' — ' + str(d) if d else ''}")
                if o.get("preview"):
                    lines.append(f"    preview: {o['preview']}")
            a = answers.get(qt)
            lines.append(f"A{i}: {a if a is not None else '(no answer recorded)'}")
            ann = notes.get(qt) if isinstance(notes.get(qt), dict) else {}
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
            inp = tu.get("input") if tu and isinstance(tu.get("input"), dict) else {}
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
        fold = {"tools": 0, "agents": 0, "first": None, "last": None}

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


# ------------------------------------------------------------------------------ rendering


def _unit_lines(u: Unit) -> list[str]:
    where = f"L{u.line}" + (f"..L{u.last_line}" if u.last_line else "")
    if u.kind == "fold":
        return [f"{where} {u.text}"]
    role = {"user": "user", "answer": "user answered", "rejection": "user rejected", "pulse": "pulse",
            "command": "command", "inbox": "peer message", "interrupt": "interrupt", "agent": "agent"}[u.kind]
    mark = f" [quoted verbatim in the summary at L{u.quoted_in_summary}]" if u.quoted_in_summary else ""
    body = u.text.split("\n")
    out = [f"{where} {role}{mark}: {esc(body[0])}"]
    out.extend("    " + esc(b) for b in body[1:])
    return out


def _turn_header(b: _Block) -> str:
    ts = (b.timestamp or "")[:19].replace("T", " ")
    name = f"t{b.turn}" if b.turn else "before the first turn"
    quoted = [u for u in b.units if u.kind in ("user", "answer", "rejection") and u.quoted_in_summary]
    q = f" · user turn quoted verbatim in the summary at L{quoted[0].quoted_in_summary}" if quoted else ""
    return f"── {name}{' · ' + ts + ' UTC' if ts else ''}{q} ──"


def banner_first(c: Compaction) -> str:
    return f"== compaction boundary · {c.where} · (turns below predate it) =="


def banner_between(prev: Compaction, c: Compaction) -> str:
    return (f"== compaction boundary · {c.where} · (turns below follow the summary at "
            f"L{prev.summary_line} and predate this one) ==")


def banner_after(c: Compaction) -> str:
    return f"== summary at L{c.summary_line} · (turns below follow it) =="


def _render(header: list[str], blocks: list[_Block], crossed: list[Compaction]) -> str:
    out = list(header)
    seg = None
    for b in blocks:
        if not b.units:
            continue
        head_done = False
        for u in b.units:
            s = sum(1 for c in crossed if c.summary_line < u.line)
            if s != seg:
                if seg is None:
                    if s < len(crossed):
                        out.append("")
                        out.append(banner_first(crossed[s]))
                elif s < len(crossed):
                    out.append("")
                    out.append(banner_between(crossed[s - 1], crossed[s]))
                else:
                    out.append("")
                    out.append(banner_after(crossed[s - 1]))
                seg = s
                if head_done:
                    out.append("")
            if not head_done:
                out.append("")
                out.append(_turn_header(b))
                head_done = True
            out.extend(_unit_lines(u))
    return "\n".join(out) + "\n"


# ------------------------------------------------------------------------------ the walk


def _compactions(idx: LaneIndex) -> list[Compaction]:
    out = []
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
        bobj = idx.load(b) if b else {}
        cm = bobj.get("compactMetadata") if isinstance(bobj.get("compactMetadata"), dict) else {}
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


def _fit(block: _Block, room: int, target: str) -> bool:
    """Squeeze the units of the newest turn so its rendering fits `room`; False if impossible."""
    for _ in range(200):
        cost = sum(u16len("\n".join(_unit_lines(u))) + 1 for u in block.units) + 120
        excess = cost - room
        if excess <= 0:
            return True
        big = max((u for u in block.units if u.kind != "fold"), key=lambda u: u16len(u.text), default=None)
        if big is None or u16len(big.text) <= MIN_TRIMMED + 140:
            return False
        full = big.text  # already possibly trimmed: trim again from the current text
        cap = max(MIN_TRIMMED + 140, u16len(full) - excess - 8)
        new, removed = trim_middle(full, cap, _marker(target, big.line))
        if removed == 0:
            return False
        big.trimmed_chars += removed
        big.text = new
    return False


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


def verbatim(
    lane: Lane,
    budget: int = DEFAULT_BUDGET,
    max_compactions: int | None = None,
    agent_msgs: AgentMsgs = "longest",
    max_unit: int = DEFAULT_MAX_UNIT,
    index: LaneIndex | None = None,
    pending_compaction: bool = False,
    target: str | None = None,
) -> VerbatimResult:
    """Reconstruct the most recent turns of `lane` verbatim within `budget` UTF-16 units.

    Raises UsageError on a bad argument. A lane with no compaction on its chain returns no units
    and a note (nothing was clipped; `show --turn` prints any turn in full).

    `pending_compaction`: the caller knows a compaction is happening now (a SessionStart(compact)
    hook). Unless the file already holds a summary newer than every turn opener, one is assumed
    right after the file's last line, so every selected turn predates it.

    `target`: how the commands this text points at (`sessionsift show TARGET ...`) name the lane,
    options included (e.g. a quoted path plus `--claude-home DIR`); default: its session id, or
    the path of a subagent lane.
    """
    if agent_msgs not in AGENT_MSG_MODES:
        raise UsageError(f"--agent-msgs must be one of {', '.join(AGENT_MSG_MODES)}")
    if budget < 1000:
        raise UsageError("--budget must be at least 1000 characters")
    if max_compactions is not None and max_compactions < 0:
        raise UsageError("--max-compactions must be 0 or more")
    if max_unit < 0:
        raise UsageError("--max-unit must be 0 (no cap) or more")
    idx = index or LaneIndex.build(lane)
    target = target or _target_of(lane)
    comps = _compactions(idx)
    if pending_compaction:
        ls, lt = _latest(idx)
        if ls is None or (lt is not None and ls < lt):
            last = idx.entries[-1].no if idx.entries else 0
            comps.append(Compaction(summary_line=last + 1, boundary_line=None, summary_chars=0, trigger=None,
                                    pre_tokens=None, timestamp=None, uuid=None, pending=True))
    groups = _turn_groups(idx)
    turns_total = idx.turns
    notes: list[str] = []
    if not comps:
        if turns_total:
            msg = (f"session {lane.session_id} has no compaction on its conversation chain: nothing was clipped. "
                   f"Every turn is in the transcript as written; `sessionsift show {target} --turn N` "
                   f"(N = 1..{turns_total}, or --turn -1 for the last) prints one in full.")
        else:
            last = idx.entries[-1].no if idx.entries else 1
            msg = (f"session {lane.session_id} has no compaction on its conversation chain: nothing was clipped. "
                   f"No turn could be counted in it (no prompt opens one on the chain), so `show --turn` has "
                   f"nothing to show; `sessionsift show {target} --line 1..{last}` prints every record.")
        notes.append(msg)
        acc = Accounting(budget=budget, chars_used=0, turns_total=turns_total, turns_selected=0, first_turn=None,
                         last_turn=None, boundaries_total=0, boundaries_spanned=0, max_compactions=max_compactions,
                         stopped_by="no_compaction", agent_msgs=agent_msgs, max_unit=max_unit, units=0,
                         units_trimmed=0, agent_messages_in_turns=0, agent_messages_shown=0, tool_calls_folded=0)
        text = f"# sessionsift verbatim · {msg}\n"
        acc.chars_used = u16len(text)
        return VerbatimResult(lane, target, [], [], acc, text, notes, idx.stats.omissions(), *_latest(idx))

    builder = _Builder(idx, agent_msgs, max_unit, target)
    sum_lines = {c.summary_line for c in comps}
    reserve = u16len("\n".join(_header(lane, target, _fake_acc(budget, agent_msgs, max_compactions, max_unit,
                                                                   turns_total, len(comps))))) + 40
    avail = budget - reserve
    chosen: list[_Block] = []  # newest first
    crossed: set[int] = set()
    used = 0
    stopped = "start_of_session"
    banner_cost = u16len(banner_between(comps[0], comps[0])) + 24
    for turn, entries in reversed(groups):
        b = builder.block(turn, entries, sum_lines)
        lo = b.min_line
        newly = {c.summary_line for c in comps if lo is not None and c.summary_line > lo} - crossed
        if max_compactions is not None and len(crossed | newly) > max_compactions:
            stopped = "max_compactions"
            break
        cost = sum(u16len("\n".join(_unit_lines(u))) + 1 for u in b.units) + (
            u16len(_turn_header(b)) + 2 if b.units else 0) + banner_cost * len(newly)
        if used + cost > avail:
            if chosen or not _fit(b, avail - used - banner_cost * len(newly) - u16len(_turn_header(b)) - 2, target):
                stopped = "budget"
                break
            cost = avail - used
        chosen.append(b)
        crossed |= newly
        used += cost
    chosen.reverse()
    while True:
        res = _assemble(lane, target, idx, comps, chosen, budget, max_compactions, agent_msgs, max_unit,
                        turns_total, stopped, notes)
        if res.accounting.chars_used <= budget or len(chosen) <= 1:
            res.omissions = idx.stats.omissions()
            res.latest_summary_line, res.latest_turn_line = _latest(idx)
            return res
        chosen = chosen[1:]  # the estimate ran short: drop the oldest turn and render again
        stopped = "budget"


def _fake_acc(budget, agent_msgs, max_compactions, max_unit, turns_total, k) -> Accounting:
    big = 10 ** len(str(max(budget, turns_total, k, 1)))
    return Accounting(budget=budget, chars_used=budget, turns_total=turns_total, turns_selected=turns_total,
                      first_turn=big, last_turn=big, boundaries_total=k, boundaries_spanned=k,
                      max_compactions=max_compactions, stopped_by="max_compactions", agent_msgs=agent_msgs,
                      max_unit=max_unit, units=0, units_trimmed=0, agent_messages_in_turns=0,
                      agent_messages_shown=0, tool_calls_folded=0)


def _header(lane: Lane, target: str, acc: Accounting) -> list[str]:
    span = (f"t{acc.first_turn}..t{acc.last_turn}" if acc.first_turn is not None else "no turns")
    stop = {"start_of_session": "reached the start of the session", "budget": "budget spent",
            "max_compactions": f"--max-compactions {acc.max_compactions} reached"}.get(acc.stopped_by, acc.stopped_by)
    return [
        f"# sessionsift verbatim · session {lane.session_id} · {esc(str(lane.path))}",
        f"# {acc.turns_selected} of {acc.turns_total} turns ({span}) · {acc.boundaries_spanned} of "
        f"{acc.boundaries_total} compaction boundaries spanned · {acc.chars_used} of {acc.budget} chars (UTF-16) · "
        f"agent messages: {acc.agent_msgs} · {stop}",
        f"# The transcript keeps every turn a compaction summary condenses; here they are verbatim, in forward "
        f"order, each unit with its line L<n>, tool calls folded. `sessionsift show {target} --line N` "
        f"prints any record in full.",
    ]


def _assemble(lane, target, idx, comps, chosen, budget, max_compactions, agent_msgs, max_unit, turns_total,
              stopped, notes) -> VerbatimResult:
    units = [u for b in chosen for u in b.units]
    lo = min((u.line for u in units), default=None)
    for c in comps:
        c.spanned = lo is not None and c.summary_line > lo
    crossed = [c for c in comps if c.spanned]
    # units the summary already quotes verbatim (CMP-009: bullets are mostly whole messages)
    norms = [(c, _norm(c.text)) for c in comps]
    for u in units:
        u.quoted_in_summary = None
        if u.kind not in ("user", "answer", "rejection", "agent", "inbox") or u.trimmed_chars:
            continue
        t = _norm(u.text)
        if len(t) < 12:
            continue
        for c, ct in norms:
            if not c.pending and c.summary_line > u.line and t in ct:
                u.quoted_in_summary = c.summary_line
                break
    turns = [b.turn for b in chosen if b.turn is not None]
    acc = Accounting(
        budget=budget, chars_used=0, turns_total=turns_total, turns_selected=len(turns),
        first_turn=turns[0] if turns else None, last_turn=turns[-1] if turns else None,
        boundaries_total=len(comps), boundaries_spanned=len(crossed), max_compactions=max_compactions,
        stopped_by=stopped, agent_msgs=agent_msgs, max_unit=max_unit, units=len(units),
        units_trimmed=sum(1 for u in units if u.trimmed_chars),
        agent_messages_in_turns=sum(b.agent_messages for b in chosen),
        agent_messages_shown=sum(b.shown_agent for b in chosen),
        tool_calls_folded=sum(b.tool_calls for b in chosen),
    )
    text = ""
    for _ in range(6):  # the header states the text's own length: settle the fixed point
        text = _render(_header(lane, target, acc), chosen, crossed)
        n = u16len(text)
        if n == acc.chars_used:
            break
        acc.chars_used = n
    if u16len(text) != acc.chars_used:  # pragma: no cover - digit-count oscillation
        acc.chars_used = u16len(text)
    return VerbatimResult(lane, target, units, comps, acc, text, list(notes))
