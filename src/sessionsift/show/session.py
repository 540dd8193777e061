"""`show SESSION`: the whole session turn by turn, for every agent, from its shared records.

A turn opens at a prompt (in a subagent's lane or child session: at its first record). Each turn
holds, in order: the prompt, the model's messages, its reasoning (marked, not printed whole), and
its tool calls folded to one item each, with the result the call got (its size, exit code, error
flag) joined by call id. Harness bookkeeping (``meta``) and records of kinds the reader does not
know are counted per turn, not shown. Subagents (lanes inside the session, and child sessions the
caller passes) follow the main lane, each a view of its own.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..providers.base import Provider, ReadReport, Record, SessionRef


@dataclass
class Item:
    """One thing that happened in a turn."""

    kind: str
    """``prompt``, ``message``, ``reasoning`` or ``tool`` (and ``meta``: harness bookkeeping, kept
    only when the view is asked for it: session_view(harness=True))."""
    record: Record
    """The record it comes from (a tool item: its call)."""
    result: Record | None = None
    """A tool item's result, joined by call id (None: no result on disk)."""

    @property
    def result_chars(self) -> int | None:
        r = self.result
        return None if r is None or r.text is None else len(r.text)

    def to_json(self) -> dict:
        r = self.record
        d: dict = {"kind": self.kind, "locator": r.locator, "line": r.line, "instant": r.instant}
        if self.kind == "tool":
            res = self.result
            d.update(tool_name=r.tool_name, call_id=r.call_id, input=r.tool_input,
                     result={"locator": res.locator, "chars": self.result_chars, "exit_code": res.exit_code,
                             "is_error": res.is_error} if res is not None else None)
        else:
            d["text"] = r.text
        return d


@dataclass
class Turn:
    number: int | None
    """The turn's number in its lane (None: records before the lane's first prompt)."""
    items: list[Item] = field(default_factory=list)
    meta: int = 0
    """Harness records in the turn (not shown)."""
    unknown: int = 0
    """Records of kinds the reader does not know (kept, counted, not shown)."""
    copies: int = 0
    """Records repeating another (a replayed history): shown once, where the original is."""
    first_at: str | None = None
    last_at: str | None = None
    tokens: dict[str, int] = field(default_factory=dict)
    """Token fields summed over the turn's usage objects, each once (per dedup key, per-field
    maximum); a field no record wrote is absent, never 0."""


@dataclass
class LaneView:
    lane: str
    """``main``, a lane inside the session (a subagent's), or ``session <id>`` for a child session."""
    turns: list[Turn] = field(default_factory=list)
    records: int = 0


@dataclass
class SessionView:
    ref: SessionRef
    lanes: list[LaneView]
    report: ReadReport
    children: list["SessionView"] = field(default_factory=list)


_FIELDS = ("input", "output", "cache_read", "cache_write", "reasoning")


def session_view(prov: Provider, ref: SessionRef, children: list[tuple[Provider, SessionRef]] = (),
                 harness: bool = False) -> SessionView:
    """The turns of `ref` (and of `children`, child sessions, each viewed the same way).
    `harness`: the harness's bookkeeping records are items too (``meta``), besides being counted
    (a page that links every record a search can find: `serve`)."""
    rep = ReadReport()
    by_lane: dict[str, list[Record]] = {}
    for r in prov.read(ref, rep):
        by_lane.setdefault(r.lane or "main", []).append(r)
    lanes = [_lane_view(name, recs, harness) for name, recs in sorted(by_lane.items(), key=lambda kv: kv[0] != "main")]
    view = SessionView(ref, lanes, rep)
    for cp, cref in children:
        view.children.append(session_view(cp, cref, harness=harness))
    return view


def _lane_view(name: str, recs: list[Record], harness: bool = False) -> LaneView:
    lv = LaneView(name, records=len(recs))
    results: dict[str, Record] = {}
    for r in recs:
        if r.kind == "tool_result" and r.call_id and r.copy_of is None:
            results.setdefault(r.call_id, r)
    joined: set[str] = set()
    cur: Turn | None = None
    n = 0
    seen_keys: dict[str, dict[str, int]] = {}

    def turn() -> Turn:
        nonlocal cur
        if cur is None:
            cur = Turn(None if name == "main" else 1)
            lv.turns.append(cur)
        return cur

    for r in recs:
        if r.copy_of is not None:
            turn().copies += 1
            continue
        # the reader's own turn number where it gives one (a child session's turn opens at the task
        # its parent delegated, which is no prompt), else a prompt opens the next turn
        if r.turn is not None:
            if cur is None or cur.number != r.turn:
                n = r.turn
                cur = Turn(r.turn)
                lv.turns.append(cur)
        elif r.kind == "prompt":
            n += 1
            cur = Turn(n)
            lv.turns.append(cur)
        t = turn()
        if r.instant:
            t.first_at = t.first_at or r.instant
            t.last_at = r.instant
        if r.tokens is not None and not r.tokens.cumulative:
            key = r.tokens.dedup_key or f"\0{r.locator}"
            prev = seen_keys.setdefault(key, {})
            for f in _FIELDS:
                v = getattr(r.tokens, f)
                if v is not None and v > prev.get(f, 0):
                    t.tokens[f] = t.tokens.get(f, 0) + v - prev.get(f, 0)
                    prev[f] = v
        if r.kind in ("prompt", "message", "reasoning"):
            t.items.append(Item(r.kind, r))
        elif r.kind == "tool_call":
            res = results.get(r.call_id) if r.call_id else None
            if res is not None:
                joined.add(res.call_id)  # type: ignore[arg-type]
            t.items.append(Item("tool", r, res))
        elif r.kind == "tool_result":
            if not r.call_id or r.call_id not in results or results[r.call_id] is not r or r.call_id not in joined:
                t.items.append(Item("tool", r, r))  # a result whose call is not on disk
        elif r.kind == "meta":
            t.meta += 1
            if harness:
                t.items.append(Item("meta", r))
        else:
            t.unknown += 1
    return lv
