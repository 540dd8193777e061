"""`search` over the shared records, for every provider searched through them (the ``search``
capability's default: providers.base.Provider.search).

The pattern (RE2, linear time: `read.pattern.compile_regex`) runs over what a record holds: its
text; for a tool call, `<tool name> <input as JSON>` (as for Claude Code's tool_use blocks); for a
tool result, its output text. A record that repeats another (`copy_of`) is not searched twice.
Selection is by shared kind (`kinds.py`); meta and unknown records are searched only when
selected, and the summary counts the records it left out by kind. Context is the whole turn:
every hit carries the prompt that opened its turn (a turn runs from one prompt to the next).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Iterator

import orjson

from ..providers.base import Problem, Provider, ReadReport, Record, SessionRef
from ..timefmt import parse_ts
from .summary import SharedSummary

COUNT_BY = ("label", "tool", "attachment", "session", "project", "day", "model", "pairing")


@dataclass(frozen=True)
class SharedQuery:
    regex: str | None
    """Combined RE2 pattern (None = every selected record matches)."""
    kinds: frozenset[str]
    since: datetime | None = None
    until: datetime | None = None
    max_count: int | None = None
    count_by: str | None = None
    sessions_only: bool = False
    needles: tuple[str, ...] | None = None
    """Literals every match contains (read.needles.needles_for), None = no prefilter."""
    needles_ci: bool = False
    fulltext: tuple | None = None
    """The data roots of the sessions searched, when the full-text index may pick them
    (index/fulltext.py); None: not used (--no-index, or a census without a pattern)."""
    literals: tuple[str, ...] | None = None
    """The pattern's literals over record text (read.needles.needles_for(text=True)), None = none."""
    keep: tuple | None = None
    """The data roots searched, when a counting query's per-session outcomes may be kept by the
    index (index/kept.py: the index is on; it may not lie inside one of them); None: not kept. A
    query that shows hits is read every time."""

    def kept_key(self) -> str:
        """What a kept outcome answered: every field that decides a session's outcome."""
        return repr((self.regex, sorted(self.kinds), self.since, self.until, self.max_count, self.count_by,
                     self.sessions_only, self.needles, self.needles_ci))


@dataclass
class SharedHit:
    record: Record
    span: tuple[int, int] | None
    text: str
    opener: Record | None
    turn: int | None


@dataclass
class SessionOutcome:
    ref: SessionRef
    hits: list[SharedHit] = field(default_factory=list)
    hit_count: int = 0
    counts: dict = field(default_factory=dict)
    report: ReadReport = field(default_factory=ReadReport)
    records: int = 0
    """Records read, copies (copy_of) excluded."""
    searched: int = 0
    copies: int = 0
    not_searched: Counter = field(default_factory=Counter)
    not_searched_hits: Counter = field(default_factory=Counter)
    """Per kind left out: how many of its records the pattern matches (the hits -t would add)."""
    undated_skipped: int = 0
    truncated: int = 0
    """Records searched whose text the client cut on disk (Record.truncated)."""
    prefiltered: bool = False
    """Not parsed: no file of the session holds a needle (search/gate.py)."""


def index_texts():
    """What the full-text index is handed to read texts (index/fulltext.py Texts: it lies below the
    readers and imports none): a shared record's text, the deep reader's lane line text
    (``Provider.line_text``) and a new ReadReport."""
    from ..index.fulltext import Texts
    from ..providers import deep_name, load
    from ..providers.base import ReadReport

    cls = load(deep_name())
    return Texts(record_text, getattr(cls, "line_text", None) or (lambda obj: None), ReadReport)


def record_text(r: Record) -> str:
    """The matchable text of a shared record (what the record holds, never a rendering)."""
    if r.kind == "tool_call":
        inp = r.tool_input
        if inp is None:
            js = ""
        elif isinstance(inp, str):
            js = inp
        else:
            try:
                js = orjson.dumps(inp).decode("utf-8", "replace")
            except TypeError:
                js = str(inp)
        return f"{r.tool_name or ''} {js}".strip()
    return r.text or ""


def _key(by: str, r: Record, ref: SessionRef) -> str:
    if by == "label":  # the shared kind stands in for a label
        return r.kind
    if by == "tool":
        return r.tool_name or "(no tool)"
    if by == "attachment":
        return "(none)"
    if by == "session":
        return ref.session_id
    if by == "project":
        return ref.project or "(unknown project)"
    if by == "day":
        d = parse_ts(r.instant)
        return d.astimezone().date().isoformat() if d else "(no timestamp)"
    if by == "model":
        return r.model or "(no model)"
    return "?"


_RX: dict = {}


def _compiled(regex: str):
    rx = _RX.get(regex)
    if rx is None:
        import re2

        opts = re2.Options()
        opts.log_errors = False
        rx = _RX[regex] = re2.compile(regex, opts)
    return rx


def search_session(prov: Provider, ref: SessionRef, q: SharedQuery, ruled_out: bool | None = None) -> SessionOutcome:
    """One session's outcome. `ruled_out`: the byte gate's verdict for it, when the caller gated
    many sessions at once (prefilter.rule_out); None = gate it here."""
    rx = _compiled(q.regex) if q.regex is not None else None
    o = SessionOutcome(ref)
    if q.needles and q.regex is not None:
        if ruled_out is None:
            from .gate import rule_out

            ruled_out = rule_out([(prov, ref)], q.needles, q.needles_ci, q.kinds)[0]
        if ruled_out:
            o.prefiltered = True
            return o
    opener: Record | None = None
    turn = 0
    uses: list[tuple[str, str | None]] = []
    returned: set[str] = set()
    call_tool: dict[str, str] = {}
    for r in prov.read(ref, o.report):
        if r.copy_of is not None:
            o.copies += 1
            continue
        o.records += 1
        if r.kind == "prompt":
            turn += 1
            opener = r
        if r.kind == "tool_result" and r.call_id:
            returned.add(r.call_id)
        if r.kind == "tool_call" and r.call_id and r.tool_name:
            call_tool[r.call_id] = r.tool_name
        if r.kind not in q.kinds:
            o.not_searched[r.kind] += 1
            if rx is None or rx.search(record_text(r)) is not None:
                o.not_searched_hits[r.kind] += 1
            continue
        if q.since is not None or q.until is not None:
            d = parse_ts(r.instant)
            if d is None:
                o.undated_skipped += 1
                continue
            if (q.since is not None and d < q.since) or (q.until is not None and d > q.until):
                continue
        o.searched += 1
        if r.truncated:
            o.truncated += 1
        if q.max_count is not None and o.hit_count >= q.max_count:
            continue
        if q.sessions_only and o.hit_count:
            continue
        text = record_text(r)
        span = None
        if rx is not None:
            m = rx.search(text)
            if m is None:
                continue
            span = m.span()
        o.hit_count += 1
        t = r.turn if r.turn is not None else (turn or None)
        if q.count_by == "pairing":
            if r.kind == "tool_call":
                uses.append((r.tool_name or "(no tool)", r.call_id))
        elif q.count_by not in (None, "total"):
            # by tool: calls (a result repeats its call's tool name), results only when -t asked for them
            if q.count_by == "tool" and r.kind != ("tool_call" if "tool_call" in q.kinds else "tool_result"):
                continue
            k = _key(q.count_by, r, ref)
            if q.count_by == "tool" and not r.tool_name and r.call_id in call_tool:  # a result: its call's tool
                k = call_tool[r.call_id]
            o.counts[k] = o.counts.get(k, 0) + 1
        elif q.count_by is None:
            o.hits.append(SharedHit(r, span, text, opener if opener is not r else None, t))
    if q.count_by == "pairing":
        # (uses, returned, unreturned) per tool: a call is returned when a result names its call id
        acc: dict[str, list[int]] = {}
        for name, cid in uses:
            c = acc.setdefault(name, [0, 0, 0])
            c[0] += 1
            c[1 if cid and cid in returned else 2] += 1
        o.counts = {k: tuple(v) for k, v in acc.items()}
    return o


def search_records(pairs: list[tuple[Provider, SessionRef]], q: SharedQuery) -> tuple[list[SessionOutcome], SharedSummary]:
    """The outcome of every session read (in order) and the summary; a session ruled out by its
    bytes has no outcome (nothing to show) and is counted in ``sessions_prefiltered``."""
    sm = SharedSummary()
    outs: list[SessionOutcome] = []
    pairs = list(pairs)
    if any(getattr(type(p), "truncation_marker", None) for p, _r in pairs):
        sm.truncated = Counter()
    gate: list = [None] * len(pairs)
    by_index = [False] * len(pairs)
    if q.fulltext is not None and q.regex is not None:
        from ..index import fulltext as FT

        try:
            by_index, sm.fulltext = FT.gate_sessions(pairs, list(q.literals) if q.literals else None, q.fulltext,
                                                     index_texts(), FT.budget())
        except Exception as exc:  # noqa: BLE001 - the index only saves time: the byte gate and the reader answer
            sm.fulltext = FT.Verdicts(why=f"the full-text index failed: {type(exc).__name__}: {exc}")
            by_index = [False] * len(pairs)
    if q.needles and q.regex is not None:
        from .gate import rule_out

        rest = [k for k in range(len(pairs)) if not by_index[k]]
        try:
            got_gate = rule_out([pairs[k] for k in rest], q.needles, q.needles_ci, q.kinds)
        except Exception:  # the gate only saves time: without it every session is parsed
            got_gate = [False] * len(rest)
        gate = [True] * len(pairs)
        for k, g in zip(rest, got_gate):
            gate[k] = g
    elif any(by_index):
        gate = [True if b else None for b in by_index]
    from ..read.fanout import map_halves, no_gc

    def one(k: int) -> SessionOutcome | Problem:
        prov, ref = pairs[k]
        try:
            return search_session(prov, ref, q, gate[k])
        except Exception as exc:  # a reader's bug: this session is unreadable, the search goes on
            return Problem(str(ref.paths[0]) if ref.paths else ref.session_id,
                           f"reader failed: {type(exc).__name__}: {exc}")

    todo = [k for k in range(len(pairs)) if gate[k] is not True]
    kept = None
    if q.keep is not None and q.count_by is not None and todo:
        from ..index.kept import Kept

        kept = Kept.open(None, q.keep)
    if kept is None:
        with no_gc():
            got = dict(zip(todo, map_halves(one, todo, [pairs[k][1].size for k in todo])))
    else:
        got = _kept_outcomes(kept, pairs, todo, q, one)
    for k in range(len(pairs)):
        sm.sessions += 1
        sm.child_sessions += pairs[k][1].parent_session_id is not None
        o = got.get(k)
        if isinstance(o, Problem):
            sm.problems.append(o)
            continue
        if o is None or o.prefiltered:  # ruled out by its bytes: counted, nothing else to merge
            if by_index[k]:
                sm.sessions_indexed_out += 1
            else:
                sm.sessions_prefiltered += 1
            if not sm.omissions:
                sm.omissions.update(ReadReport().omissions())  # the (zero) keys a read session gives
            continue
        outs.append(o)
        sm.sessions_read += 1
        sm.hits += o.hit_count
        sm.sessions_with_hits += bool(o.hit_count)
        sm.records += o.records
        sm.searched += o.searched
        sm.copies += o.copies
        sm.bytes += o.report.bytes
        sm.files += o.report.files
        if o.not_searched:
            sm.not_searched.update(o.not_searched)
        if o.not_searched_hits:
            sm.not_searched_hits.update(o.not_searched_hits)
        sm.undated_skipped += o.undated_skipped
        if o.truncated and sm.truncated is not None:
            sm.truncated[o.ref.provider] += o.truncated
        sm.omissions.update(o.report.omissions())
        sm.problems.extend(o.report.problems)
    return outs, sm


KEPT = "search-count"
"""The question's name among the answers kept per session (index/kept.py): one counting query's
outcome per session, the latest (its query's key beside it: another query reads again)."""


def _kept_outcomes(kept, pairs: list, todo: list[int], q: SharedQuery, one) -> dict:
    """`one(k)` for each of `todo`, a session's outcome given back from the kept answers where the
    same counting query was answered over the same inputs, else read and kept."""
    from ..index.kept import taken
    from ..read.fanout import map_halves, no_gc

    qk = q.kept_key()
    try:
        hits = kept.get(KEPT, [pairs[k][1] for k in todo])
        got: dict = {}
        for j, v in hits.items():
            if isinstance(v, tuple) and len(v) == 2 and v[0] == qk and isinstance(v[1], SessionOutcome):
                o = v[1]
                o.ref = pairs[todo[j]][1]
                got[todo[j]] = o
        rest = [k for k in todo if k not in got]

        def read(k: int):
            return taken(pairs[k][1], lambda: one(k))

        with no_gc():
            done = map_halves(read, rest, [pairs[k][1].size for k in rest])
        keep = []
        for k, (o, ident) in zip(rest, done):
            got[k] = o
            if ident is not None and isinstance(o, SessionOutcome) and not o.report.problems and not o.hits:
                keep.append((pairs[k][1], ident, (qk, replace(o, ref=None))))  # type: ignore[arg-type]  # the ref is put back on reading
        kept.put(KEPT, keep)
        return got
    finally:
        kept.close()


def iter_pairs(refs: list[SessionRef], providers: dict[str, Provider]) -> Iterator[tuple[Provider, SessionRef]]:
    for r in refs:
        p = providers.get(r.provider)
        if p is not None:
            yield p, r


class RecordPart:
    """The part of a search answered through the shared records: every session of the providers
    that leave the ``search`` capability to its default, searched in one pass (in selection order,
    sessions in parallel halves, ruled out first by their bytes)."""

    def __init__(self, pairs: list[tuple[Provider, SessionRef]], q: SharedQuery):
        self.pairs = pairs
        self.query = q
        self.summary = SharedSummary()
        self._outs: list[SessionOutcome] | None = None

    def _run(self) -> list[SessionOutcome]:
        if self._outs is None:
            self._outs, self.summary = search_records(self.pairs, self.query)
        return self._outs

    def outcomes(self, plain: bool = True) -> Iterator[tuple[SessionRef, SessionOutcome]]:
        """(session, outcome) of every session read, in selection order (a session ruled out by its
        bytes has none); `plain=False`: not those without a hit."""
        for o in self._run():
            if plain or o.hit_count:
                yield o.ref, o

    def census(self) -> dict:
        from .run import merge_counts

        counts: dict = {}
        by = self.query.count_by
        for o in self._run():
            if by not in (None, "total"):
                merge_counts(by, counts, o.counts)
        return counts

    def per_provider(self) -> dict[str, dict]:
        """{provider: {sessions, files, bytes, lines, hits, sessions_with_hits}} of this part (after a
        run); `lines` is None: a session read through its shared records has no line count (its store
        need not be a line file)."""
        out: dict[str, dict] = {}
        for _p, ref in self.pairs:
            d = out.setdefault(ref.provider, {"sessions": 0, "files": 0, "bytes": 0, "lines": None, "hits": 0,
                                              "sessions_with_hits": 0})
            d["sessions"] += ref.parent_session_id is None
        for o in self._outs or ():
            d = out[o.ref.provider]
            d["files"] += o.report.files
            d["bytes"] += o.report.bytes
            d["hits"] += o.hit_count
            d["sessions_with_hits"] += bool(o.hit_count)
        return out
