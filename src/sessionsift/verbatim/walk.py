"""The agent-neutral part of `verbatim`: budget, walk, rendering (docs/verbatim.md).

The session's provider gives a :class:`~sessionsift.providers.compaction.TurnHistory` (its
compactions with their summaries' locators, its turns newest first as blocks of units:
:meth:`Provider.compactions`); :func:`walk` takes turns back from the end, recency first, until the
budget is spent, passing through compaction summaries as ordinary turn members (CMP-011), and
renders the selected turns in forward order: every crossed summary gets a banner naming its
locator, units a summary already quotes verbatim are marked, long units are trimmed in the middle
under an explicit marker. Lengths are UTF-16 code units (slices.py: the unit Claude Code's hook
counts, MISC-012); the whole rendered text, header included, stays within the budget.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from typing import Any, Literal

from ..errors import UsageError
from ..providers.compaction import Block, Compaction, TurnHistory, Unit
from ..render import esc
from .slices import slice_text, trim_middle, u16len

AgentMsgs = Literal["longest", "last", "all"]
AGENT_MSG_MODES = ("longest", "last", "all")
DEFAULT_BUDGET = 40_000
DEFAULT_WINDOW = 9_000
DEFAULT_MAX_UNIT = 6_000
MIN_TRIMMED = 160  # a unit squeezed to fit the budget keeps at least this much (plus its marker)

_WS = re.compile(r"\s+")
_Block = Block  # the name the renderers below were written with


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
    stopped_by: str  # start_of_session | budget | max_compactions | no_compaction | lacks
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
    lane: Any
    """Claude Code's lane (providers/claude/discover.py ``Lane``) when its deep model answered, else None."""
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
    history: TurnHistory | None = None
    lacks: str | None = None
    """Why the session's provider cannot give its compactions (``Provider.lacks["compactions"]``);
    None: it can."""

    @property
    def has_compaction(self) -> bool:
        return bool(self.compactions)

    @property
    def session_id(self) -> str:
        return self.lane.session_id if self.lane is not None else self.history.session_id  # type: ignore[union-attr]

    def slices(self, window: int = DEFAULT_WINDOW) -> list[str]:
        return slice_text(self.text, window)


def _norm(s: str) -> str:
    return _WS.sub(" ", s).strip()


def _marker(target: str, u: Unit):
    addr = f"--line {u.line}" if u.line is not None else f"--locator {shlex.quote(u.locator or '')}"

    def mk(removed: int, total: int) -> str:
        return (f"\n[… {removed} of {total} chars trimmed from the middle · full text: "
                f"sessionsift show {target} {addr} …]\n")
    return mk


def _trim_units(b: Block, max_unit: int, target: str) -> None:
    if max_unit <= 0:
        return
    for u in b.units:
        if u.kind != "fold" and u.trimmed_chars == 0 and u.chars > max_unit:
            u.text, u.trimmed_chars = trim_middle(u.text, max_unit, _marker(target, u))


# ------------------------------------------------------------------------------ rendering


def _unit_lines(u: Unit) -> list[str]:
    where = u.where
    if u.kind == "fold":
        return [f"{where} {u.text}"]
    role = {"user": "user", "answer": "user answered", "rejection": "user rejected", "pulse": "pulse",
            "command": "command", "inbox": "peer message", "interrupt": "interrupt", "agent": "agent"}[u.kind]
    mark = f" [quoted verbatim in the summary at L{u.quoted_in_summary}]" if u.quoted_in_summary else ""
    body = u.text.split("\n")
    out = [f"{where} {role}{mark}: {esc(body[0])}"]
    out.extend("    " + esc(b) for b in body[1:])
    return out


def _turn_header(b: Block) -> str:
    ts = (b.timestamp or "")[:19].replace("T", " ")
    name = f"t{b.turn}" if b.turn else "before the first turn"
    quoted = [u for u in b.units if u.kind in ("user", "answer", "rejection") and u.quoted_in_summary]
    q = f" · user turn quoted verbatim in the summary at L{quoted[0].quoted_in_summary}" if quoted else ""
    return f"── {name}{' · ' + ts + ' UTC' if ts else ''}{q} ──"


def banner_first(c: Compaction) -> str:
    return f"== compaction boundary · {c.where} · (turns below predate it) =="


def banner_between(prev: Compaction, c: Compaction) -> str:
    return (f"== compaction boundary · {c.where} · (turns below follow the summary at "
            f"{prev.at} and predate this one) ==")


def banner_after(c: Compaction) -> str:
    return f"== summary at {c.at} · (turns below follow it) =="


def _render(header: list[str], blocks: list[Block], crossed: list[Compaction]) -> str:
    out = list(header)
    seg = None
    for b in blocks:
        if not b.units:
            continue
        head_done = False
        for u in b.units:
            s = sum(1 for c in crossed if c.order < u.order)
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


def _fit(block: Block, room: int, target: str) -> bool:
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
        new, removed = trim_middle(full, cap, _marker(target, big))
        if removed == 0:
            return False
        big.trimmed_chars += removed
        big.text = new
    return False


def check(budget: int, max_compactions: int | None, agent_msgs: str, max_unit: int) -> None:
    """Raise UsageError on a bad argument."""
    if agent_msgs not in AGENT_MSG_MODES:
        raise UsageError(f"--agent-msgs must be one of {', '.join(AGENT_MSG_MODES)}")
    if budget < 1000:
        raise UsageError("--budget must be at least 1000 characters")
    if max_compactions is not None and max_compactions < 0:
        raise UsageError("--max-compactions must be 0 or more")
    if max_unit < 0:
        raise UsageError("--max-unit must be 0 (no cap) or more")


def _empty(hist: TurnHistory | None, target: str, budget, max_compactions, agent_msgs, max_unit, msg: str,
           stopped: str, lane=None, lacks: str | None = None) -> VerbatimResult:
    acc = Accounting(budget=budget, chars_used=0, turns_total=hist.turns_total if hist else 0, turns_selected=0,
                     first_turn=None, last_turn=None, boundaries_total=0, boundaries_spanned=0,
                     max_compactions=max_compactions, stopped_by=stopped, agent_msgs=agent_msgs, max_unit=max_unit,
                     units=0, units_trimmed=0, agent_messages_in_turns=0, agent_messages_shown=0, tool_calls_folded=0)
    text = f"# sessionsift verbatim · {esc(msg)}\n"
    acc.chars_used = u16len(text)
    return VerbatimResult(lane if lane is not None else (hist.lane if hist else None), target, [], [], acc, text,
                          [msg], dict(hist.omissions) if hist else {},
                          hist.latest_summary_line if hist else None, hist.latest_turn_line if hist else None,
                          history=hist, lacks=lacks)


def lacking(session_id: str, display: str, reason: str, target: str, budget: int = DEFAULT_BUDGET,
            max_compactions: int | None = None, agent_msgs: str = "longest",
            max_unit: int = DEFAULT_MAX_UNIT) -> VerbatimResult:
    """The answer for a session whose provider cannot give its compactions (`reason`: its
    ``lacks["compactions"]``): no units, the reason as the note (stopped_by ``lacks``)."""
    msg = f"session {session_id} ({display}): no compaction read: {reason}"
    return _empty(None, target, budget, max_compactions, agent_msgs, max_unit, msg, "lacks", lacks=reason)


def walk(hist: TurnHistory, target: str, budget: int = DEFAULT_BUDGET, max_compactions: int | None = None,
         agent_msgs: AgentMsgs = "longest", max_unit: int = DEFAULT_MAX_UNIT,
         pending_compaction: bool = False) -> VerbatimResult:
    """The most recent turns of `hist` verbatim within `budget` UTF-16 units.

    Raises UsageError on a bad argument. A session with no compaction returns no units and a note
    (nothing was clipped; `show --turn` prints any turn in full).

    `pending_compaction`: the caller knows a compaction is happening now (a SessionStart(compact)
    hook). Unless the file already holds a summary newer than every turn opener, one is assumed
    right after the file's last line, so every selected turn predates it.

    `target`: how the commands this text points at (`sessionsift show TARGET ...`) name the
    session, options included (e.g. a quoted path plus `--claude-home DIR`).
    """
    check(budget, max_compactions, agent_msgs, max_unit)
    comps = list(hist.compactions)
    if pending_compaction:
        ls, lt = hist.latest_summary_line, hist.latest_turn_line
        if ls is None or (lt is not None and ls < lt):
            comps.append(Compaction(summary_line=hist.last_line + 1, boundary_line=None, summary_chars=0,
                                    trigger=None, pre_tokens=None, timestamp=None, uuid=None, pending=True))
    turns_total = hist.turns_total
    notes: list[str] = list(hist.notes)
    chain = "its conversation chain" if hist.lane is not None else "its records"
    if not comps:
        if turns_total:
            msg = (f"session {hist.session_id} has no compaction on {chain}: nothing was clipped. "
                   f"Every turn is in the transcript as written; `sessionsift show {target} --turn N` "
                   f"(N = 1..{turns_total}, or --turn -1 for the last) prints one in full.")
        else:
            msg = (f"session {hist.session_id} has no compaction on {chain}: nothing was clipped. "
                   f"No turn could be counted in it (no prompt opens one on the chain), so `show --turn` has "
                   f"nothing to show; `sessionsift show {target} --line 1..{max(hist.last_line, 1)}` prints every "
                   f"record.")
        return _empty(hist, target, budget, max_compactions, agent_msgs, max_unit, msg, "no_compaction")

    reserve = u16len("\n".join(_header(hist, target, _fake_acc(budget, agent_msgs, max_compactions, max_unit,
                                                                   turns_total, len(comps))))) + 40
    avail = budget - reserve
    chosen: list[Block] = []  # newest first
    crossed: set[int] = set()
    used = 0
    stopped = "start_of_session"
    banner_cost = u16len(banner_between(comps[0], comps[0])) + 24
    for b in hist.blocks(agent_msgs):
        _trim_units(b, max_unit, target)
        lo = b.min_order
        newly = {c.order for c in comps if lo is not None and c.order > lo} - crossed
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
        res = _assemble(hist, target, comps, chosen, budget, max_compactions, agent_msgs, max_unit,
                        turns_total, stopped, notes)
        if res.accounting.chars_used <= budget or len(chosen) <= 1:
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


def _header(hist: TurnHistory, target: str, acc: Accounting) -> list[str]:
    span = (f"t{acc.first_turn}..t{acc.last_turn}" if acc.first_turn is not None else "no turns")
    stop = {"start_of_session": "reached the start of the session", "budget": "budget spent",
            "max_compactions": f"--max-compactions {acc.max_compactions} reached"}.get(acc.stopped_by, acc.stopped_by)
    lines = hist.by_line
    return [
        f"# sessionsift verbatim · session {hist.session_id} · {esc(str(hist.path)) if hist.path else 'database rows'}",
        f"# {acc.turns_selected} of {acc.turns_total} turns ({span}) · {acc.boundaries_spanned} of "
        f"{acc.boundaries_total} compaction boundaries spanned · {acc.chars_used} of {acc.budget} chars (UTF-16) · "
        f"agent messages: {acc.agent_msgs} · {stop}",
        (f"# The transcript keeps every turn a compaction summary condenses; here they are verbatim, in forward "
         f"order, each unit with its line L<n>, tool calls folded. `sessionsift show {target} --line N` "
         f"prints any record in full." if lines else
         f"# The database keeps every turn a compaction summary condenses; here they are verbatim, in forward "
         f"order, each unit with its locator, tool calls folded. `sessionsift show {target} --locator LOC` "
         f"prints any record in full."),
    ]


def _assemble(hist, target, comps, chosen, budget, max_compactions, agent_msgs, max_unit, turns_total,
              stopped, notes) -> VerbatimResult:
    units = [u for b in chosen for u in b.units]
    lo = min((u.order for u in units), default=None)
    for c in comps:
        c.spanned = lo is not None and c.order > lo
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
            if not c.pending and c.summary_line is not None and c.order > u.order and t in ct:
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
        text = _render(_header(hist, target, acc), chosen, crossed)
        n = u16len(text)
        if n == acc.chars_used:
            break
        acc.chars_used = n
    if u16len(text) != acc.chars_used:  # pragma: no cover - digit-count oscillation
        acc.chars_used = u16len(text)
    return VerbatimResult(hist.lane, target, units, comps, acc, text, list(notes), dict(hist.omissions),
                          hist.latest_summary_line, hist.latest_turn_line, history=hist)
