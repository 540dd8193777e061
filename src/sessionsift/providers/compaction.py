"""The ``compactions`` capability: what a provider gives `verbatim` (sessionsift.verbatim).

A compaction condenses a session's earlier turns into a summary the model reads instead of them.
Whether the clipped turns are still on disk is the client's business, so the question asks the
session's provider (:meth:`Provider.compactions`) for a :class:`TurnHistory`: its compactions (each
with the summary's locator) and its turns newest first as :class:`Block` s of :class:`Unit` s, in
the agent-neutral vocabulary the question budgets, slices and renders.

- A reader with a deeper model answers with its own history (Claude Code:
  providers/claude/verbatim.py, over its lane index: abandoned branches and replays left out,
  AskUserQuestion answers, typed rejections, automation pulses).
- Any other reader names its compaction records in :meth:`Provider.compaction_of`; the default
  :meth:`Provider.compactions` then builds the history from the shared records
  (:class:`RecordHistory`: copies left out, prompts whole, agent messages, tool calls folded).
- A reader whose client writes no compaction it can read, or rewrites its history file so the
  clipped turns are gone, declares ``lacks["compactions"]`` with the evidence.

Every length is counted in UTF-16 code units (sessionsift.verbatim.slices: the unit Claude Code's
SessionStart hook counts, JS ``String.length``; pi, also JavaScript, counts the same).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterator

from .base import ReadReport, Record, SessionRef


def u16(s: str) -> int:
    """UTF-16 code units of `s` (sessionsift.verbatim.slices.u16len; repeated here so a reader
    needs nothing from the question's package)."""
    return len(s.encode("utf-16-le", "surrogatepass")) // 2


@dataclass
class Unit:
    """One rendered piece of a turn. `chars` is the UTF-16 length of the body before trimming;
    `trimmed_chars` how many units the middle-trim removed (0 = whole)."""

    kind: str  # user | answer | rejection | pulse | command | inbox | interrupt | agent | fold
    turn: int | None
    line: int | None
    """The physical line of the record (None: a database row, see ``locator``)."""
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
    locator: str | None = None
    """The record's locator when it is not ``L<line>`` (a database row); None: ``L<line>``."""
    last_locator: str | None = None
    order: int = -1
    """Where the record sits in the session (file order): the line, or the record's position in
    the reading where there is no line. -1: take ``line``."""
    record: Record | None = field(default=None, repr=False)
    """The shared record it was made of (RecordHistory), for a refetch command."""

    def __post_init__(self) -> None:
        if self.order < 0:
            self.order = self.line if self.line is not None else 0

    @property
    def where(self) -> str:
        a = self.locator or f"L{self.line}"
        b = self.last_locator or (f"L{self.last_line}" if self.last_line else None)
        return a + (f"..{b}" if b else "")


@dataclass
class Compaction:
    """One compaction: its summary record and, where the client writes one, the boundary before it."""

    summary_line: int | None
    boundary_line: int | None
    summary_chars: int
    trigger: str | None
    pre_tokens: int | None
    timestamp: str | None
    uuid: str | None
    spanned: bool = False
    text: str = field(default="", repr=False)
    pending: bool = False
    """A compaction happening now whose boundary and summary are not in the file yet: Claude Code
    fires SessionStart(compact) BEFORE it appends them (observed at 2.1.258). `summary_line` is then
    the line the summary will land at or after (the file's last line + 1)."""
    locator: str | None = None
    """The summary's locator when it is not ``L<summary_line>`` (a database row)."""
    order: int = -1
    """File order of the summary (as :attr:`Unit.order`); -1: take ``summary_line``."""
    native: str | None = None
    """The client's own type of the summary record (``compacted``, ``compaction``, ...)."""
    first_kept: str | None = None
    """The locator of the first record the client kept verbatim after this compaction, where it
    names one (pi's ``firstKeptEntryId``); records from there on were not condensed. A reader may
    give ``id:<value>`` (the record whose raw ``id`` is that value): resolved once the session is read."""
    record: Record | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.order < 0:
            self.order = self.summary_line if self.summary_line is not None else 0

    @property
    def at(self) -> str:
        return self.locator or f"L{self.summary_line}"

    @property
    def where(self) -> str:
        return (f"summary not yet written (it will follow L{(self.summary_line or 1) - 1})" if self.pending
                else f"summary at {self.at}")


@dataclass
class Block:
    """One turn as the question budgets it."""

    turn: int | None
    units: list[Unit]
    timestamp: str | None
    agent_messages: int
    shown_agent: int
    tool_calls: int

    @property
    def min_order(self) -> int | None:
        return min((u.order for u in self.units), default=None)


@dataclass
class TurnHistory:
    """A session's compactions and its turns, as one provider reads them (:meth:`Provider.compactions`).

    Subclasses build :meth:`blocks` lazily, newest turn first, so a walk that stops early reads
    only what it shows."""

    session_id: str
    path: str | None
    """The file the locators point into (None: a database, see the locators)."""
    compactions: list[Compaction]
    turns_total: int
    latest_summary_line: int | None = None
    latest_turn_line: int | None = None
    last_line: int = 0
    """The session's last line (or record position): a pending compaction follows it."""
    omissions: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    lane: Any = None
    """A deeper model's lane (Claude Code's), else None."""
    ref: SessionRef | None = None
    by_line: bool = True
    """Every record has a physical line (a file); False: some are database rows, named by locator."""
    target: str = ""
    """How a `sessionsift show` command names the session by default (its id; a deeper model's
    subagent lane: its path)."""

    def blocks(self, agent_msgs: str) -> Iterator[Block]:  # pragma: no cover - interface
        raise NotImplementedError


# ------------------------------------------------------------------------------ from shared records


def _agent_pick(texts: list[str], mode: str) -> set[int]:
    if not texts:
        return set()
    if mode == "all":
        return set(range(len(texts)))
    if mode == "last":
        return {len(texts) - 1}
    lens = [u16(t) for t in texts]
    return {max(range(len(texts)), key=lambda i: (lens[i], i))}


class RecordHistory(TurnHistory):
    """A :class:`TurnHistory` built from a provider's shared records (the default of
    :meth:`Provider.compactions`): records with ``copy_of`` are left out (the client's echoes and
    the replacement history it re-sends after a compaction), and so are ``rewound`` ones (no longer
    on the conversation: a pi branch left by ``/tree``, Gemini CLI's ``/rewind``); a turn is the records of one
    ``Record.turn``; prompts are whole units, the agent's messages (``kind == "message"``, role
    ``assistant``) are chosen by ``agent_msgs``, tool calls and agent messages not shown are folded."""

    def __init__(self, ref: SessionRef, records: list[Record], compactions: list[Compaction],
                 report: ReadReport, path: str | None):
        self.records = records
        marks = {id(c.record) for c in compactions if c.record is not None}
        self._summary_ids = marks
        turns = sorted({r.turn for r in records if r.turn is not None})
        latest_s = max((c.order for c in compactions), default=None)
        openers = [self._order(i, r) for i, r in enumerate(records) if r.kind == "prompt"]
        super().__init__(session_id=ref.session_id, path=path, compactions=compactions,
                         turns_total=len(turns), latest_summary_line=latest_s,
                         latest_turn_line=max(openers) if openers else None,
                         last_line=max((self._order(i, r) for i, r in enumerate(records)), default=0),
                         omissions=report.omissions(), ref=ref,
                         by_line=all(r.line is not None for r in records))
        self._orders = [self._order(i, r) for i, r in enumerate(records)]

    @staticmethod
    def _order(i: int, r: Record) -> int:
        return r.line if r.line is not None else i + 1

    def blocks(self, agent_msgs: str) -> Iterator[Block]:
        groups: dict[int, list[int]] = {}
        for i, r in enumerate(self.records):
            if r.copy_of is None and not r.rewound:
                groups.setdefault(r.turn or 0, []).append(i)
        for turn in sorted(groups, reverse=True):
            yield self._block(turn or None, groups[turn], agent_msgs)

    def _unit(self, kind: str, i: int, text: str, **kw) -> Unit:
        r = self.records[i]
        return Unit(kind=kind, turn=r.turn, line=r.line, last_line=None, labels=(r.native,), text=text,
                    chars=u16(text), timestamp=r.instant, order=self._orders[i],
                    locator=None if r.line is not None and r.locator == f"L{r.line}" else r.locator,
                    record=r, **kw)

    def _block(self, turn: int | None, idx: list[int], agent_msgs: str) -> Block:
        recs = self.records
        agents = [i for i in idx if recs[i].role == "assistant" and recs[i].kind == "message" and recs[i].text
                  and id(recs[i]) not in self._summary_ids]
        keep = {agents[k] for k in _agent_pick([recs[i].text or "" for i in agents], agent_msgs)}
        units: list[Unit] = []
        fold: dict[str, Any] = {"tools": 0, "agents": 0, "first": None, "last": None}
        tool_calls = 0

        def flush() -> None:
            if fold["tools"] or fold["agents"]:
                parts = []
                if fold["tools"]:
                    parts.append(f"{fold['tools']} tool call{'s' if fold['tools'] != 1 else ''}")
                if fold["agents"]:
                    parts.append(f"{fold['agents']} agent message{'s' if fold['agents'] != 1 else ''} not shown")
                text = "[" + " · ".join(parts) + "]"
                a, b = fold["first"], fold["last"]
                ra, rb = recs[a], recs[b]
                units.append(Unit(kind="fold", turn=turn, line=ra.line,
                                  last_line=rb.line if b != a and rb.line != ra.line else None, labels=(), text=text,
                                  chars=u16(text), tool_calls=fold["tools"], hidden_agent_messages=fold["agents"],
                                  order=self._orders[a],
                                  locator=None if ra.line is not None else ra.locator,
                                  last_locator=(rb.locator if b != a and rb.line is None else None), record=ra))
            fold.update(tools=0, agents=0, first=None, last=None)

        def add_fold(i: int, tools: int = 0, agents: int = 0) -> None:
            fold["tools"] += tools
            fold["agents"] += agents
            fold["first"] = i if fold["first"] is None else fold["first"]
            fold["last"] = i

        for i in idx:
            r = recs[i]
            if id(r) in self._summary_ids:
                flush()
                continue
            if r.kind == "prompt" and r.role == "user":
                flush()
                units.append(self._unit("user", i, r.text or ""))
            elif r.kind == "tool_call":
                tool_calls += 1
                add_fold(i, tools=1)
            elif i in keep:
                flush()
                units.append(self._unit("agent", i, r.text or ""))
            elif i in agents:
                add_fold(i, agents=1)
        flush()
        ts = next((u.timestamp for u in units if u.timestamp), None) or next(
            (recs[i].instant for i in idx if recs[i].instant), None)
        return Block(turn, units, ts, len(agents), len(keep), tool_calls)


def history_from_records(provider, ref: SessionRef) -> TurnHistory:
    """The default of :meth:`Provider.compactions`: read the session once (records with ``raw``)
    and ask :meth:`Provider.compaction_of` of each record that is no copy."""
    report = ReadReport()
    records: list[Record] = []
    comps: list[Compaction] = []
    ids: dict[str, str] = {}
    for r in provider.read(ref, report, raw=True):
        if r.copy_of is None:
            c = provider.compaction_of(ref, r)
            if c is not None:
                c.record = r
                if c.summary_line is None and r.line is not None:
                    c.summary_line = r.line
                c.order = r.line if r.line is not None else len(records) + 1
                if r.line is None or r.locator != f"L{r.line}":
                    c.locator = r.locator
                c.text = c.text or (r.text or "")
                c.summary_chars = u16(c.text)
                c.timestamp = c.timestamp or r.instant
                c.native = c.native or r.native
                comps.append(c)
        if isinstance(r.raw, dict) and isinstance(r.raw.get("id"), str):
            ids.setdefault(r.raw["id"], r.locator)
        r.raw = None  # what the history needs is in the record; the raw objects are not kept
        records.append(r)
    for c in comps:  # `id:<value>`: the record whose raw `id` is that value
        if c.first_kept and c.first_kept.startswith("id:"):
            c.first_kept = ids.get(c.first_kept[3:], c.first_kept)
    paths = ref.paths
    return RecordHistory(ref, records, comps, report, str(paths[0]) if len(paths) == 1 else None)


def mark(*, trigger: str | None = None, pre_tokens: int | None = None, text: str | None = None,
         first_kept: str | None = None, uuid: str | None = None) -> Compaction:
    """What :meth:`Provider.compaction_of` returns for a record that is a compaction summary (the
    locator, line, instant and native type are the record's)."""
    return Compaction(summary_line=None, boundary_line=None, summary_chars=0, trigger=trigger,
                      pre_tokens=pre_tokens, timestamp=None, uuid=uuid, text=text or "", first_kept=first_kept)
