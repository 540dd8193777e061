"""Gather the usage events of every provider in scope, deduplicated, with their coverage.

Claude Code is read by its provider's usage extraction (``Provider.usage_scans``, providers/claude/usage.py:
prefilter + msgspec over the lanes of its deep Scope, dedup by message id as docs/usage.md says). Every other
provider is read through the providers layer only (`Provider.discover` / `Provider.read`,
`Record.tokens`), with its deduplication rule taken from the shared shape:
- records whose `Tokens.dedup_key` repeats within a session are one response (per-field max);
- `Tokens.cumulative` records are running totals: never summed; a session that has only those
  is counted by the increments between consecutive totals (a drop starts a new run), and a
  session that has both is counted by its per-response records, the last running total kept as
  a cross-check (a difference is a note).
A provider without a reader is `no_adapter` (null), a reader that fails is `unreadable` with
its reason, never 0.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from ..providers import Coverage
from ..providers import deep_name
from ..providers.base import Problem
from ..providers.usage import ClientRecorded, instant_ts
from .events import Event, Ledger

@dataclass
class SessionInfo:
    provider: str
    session_id: str
    project: str | None = None
    lanes: int = 0
    """Transcripts read for it (main + subagent lanes)."""
    paths: list[str] = field(default_factory=list)
    client: ClientRecorded | None = None
    without_usage: int = 0


@dataclass(slots=True)
class Unpaid:
    """One assistant message that recorded no usage: where it belongs in a report (its session,
    day, project and model), so a `--by` row counts it under its own group."""
    provider: str
    session_id: str
    ts: float | None
    project: str | None
    model: str | None


@dataclass
class ReadTally:
    files: int = 0
    bytes: int = 0
    candidate_lines: int = 0
    usage_records: int = 0
    echoes: int = 0
    malformed: int = 0
    odd_values: int = 0
    no_timestamp: int = 0
    torn_tail_bytes: int = 0
    from_iterations: int = 0

    def add(self, fs) -> None:
        """Add one transcript's scan (a ``usage_scans`` scan: providers/claude/usage.py FileScan)."""
        self.files += 1
        self.bytes += fs.size
        self.candidate_lines += fs.candidates
        self.usage_records += len(fs.records)
        self.echoes += fs.echoes
        self.malformed += fs.malformed
        self.odd_values += fs.odd_values
        self.no_timestamp += fs.no_timestamp
        self.torn_tail_bytes += fs.torn_tail_bytes
        self.from_iterations += fs.from_iterations


@dataclass
class Collected:
    ledger: Ledger = field(default_factory=Ledger)
    sessions: dict[tuple[str, str], SessionInfo] = field(default_factory=dict)
    without_usage: list[Unpaid] = field(default_factory=list)
    """Each assistant message that carried no usage."""
    without_usage_lanes: list[str] = field(default_factory=list)
    """The lane of each entry of `without_usage` (same order): "main", a Claude Code subagent lane,
    or another provider's child session (a dataset's `--no-subagents` answer leaves those out)."""
    coverage: list[Coverage] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    tally: dict[str, ReadTally] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    claude_home: str | None = None
    deleted: list = field(default_factory=list)
    """Claude Code sessions its history names whose transcripts the client deleted
    (providers.claude.history.DeletedSession): their usage is not on disk, so the days and totals
    they touch are lower bounds."""
    claude_home_source: str | None = None

    @property
    def events(self) -> list[Event]:
        return self.ledger.events


def collect_deep(out: Collected, prov, scope, subagents: bool = True, parallel: bool = True) -> None:
    """The sessions of a deep `Scope` (Selection.claude, or a part of it), through its reader's own
    usage extraction (``prov.usage_scans``: Claude Code's fast path)."""
    name = prov.name
    out.claude_home, out.claude_home_source = str(scope.home.path), scope.home.source
    tally = out.tally.setdefault(name, ReadTally())
    cur = None
    first = first_unpaid = 0
    info = None

    def settle() -> None:
        # a subagent lane read before its main lane took the lane's cwd: the session's project
        if info is not None and info.project:
            for e in out.ledger.events[first:]:
                if e.session_id == info.session_id and e.project != info.project:
                    e.project = info.project
            for u in out.without_usage[first_unpaid:]:
                u.project = info.project

    for (s, path, kind, lane_name), fs in prov.usage_scans(scope, subagents, parallel):
        if s is not cur:
            settle()
            cur = s
            first = len(out.ledger.events)
            first_unpaid = len(out.without_usage)
            info = out.sessions.setdefault((name, s.session_id), SessionInfo(name, s.session_id))
        if isinstance(fs, tuple):
            out.problems.append(Problem(fs[0], fs[1]))
            continue
        tally.add(fs)
        info.lanes += 1
        info.paths.append(path)
        if kind == "main":
            info.project = fs.cwd or os.path.basename(os.path.dirname(path))
            if fs.client is not None:
                info.client = fs.client
        elif info.project is None:
            info.project = fs.cwd or os.path.basename(os.path.dirname(path))
        for e in fs.events(s.session_id, lane_name, info.project):
            out.ledger.add(e)
        info.without_usage += fs.assistant_without_usage
        out.without_usage += [Unpaid(name, s.session_id, t, info.project, m) for t, m in fs.no_usage_ts]
        out.without_usage_lanes += [lane_name] * len(fs.no_usage_ts)
    settle()


# -- every other provider, through the providers layer ---------------------------------------

def _ts_of(instant: str | None) -> float | None:
    return instant_ts(instant)


@dataclass
class SessionRead:
    """What one session's records gave usage (a pure function of the session's files, kept per
    session by the index: index/kept.py): its per-response events and running totals, the
    assistant messages that recorded none, and the reading's figures. Events carry no project
    (`collect_refs` gives them the session's)."""

    per: list = field(default_factory=list)
    """Event field tuples (Event._values order)."""
    cumulative: list = field(default_factory=list)
    """(instant, Tokens, model) of each running total."""
    unpaid: list = field(default_factory=list)
    """(instant, model) of each assistant message without usage."""
    copies_with_tokens: int = 0
    files: int = 0
    bytes: int = 0
    malformed: int = 0
    torn_tail_bytes: int = 0
    problems: list = field(default_factory=list)
    """(path, why) of the reading's problems, a failed reading's among them."""


KEPT = "usage"
"""The question's name among the answers kept per session (index/kept.py)."""


def read_session(name: str, prov, ref) -> SessionRead:
    """Read one session's usage through its reader (Record.tokens): never raises."""
    from ..providers import ReadReport

    own_cost = bool(getattr(type(prov), "records_cost", False))
    across = getattr(type(prov), "usage_dedup_scope", "session") == "provider"  # a fork's copies: one response
    owner = ref.parent_session_id or ref.session_id
    lane = "main" if ref.parent_session_id is None else ref.session_id
    sr = SessionRead()
    report = ReadReport()
    # the unit that records usage is the message: one spanning several records (opencode's
    # parts, Record.message_id) lacks usage only when none of its records carries tokens
    msg_usage: dict[str, bool] = {}
    msg_unpaid: dict[str, tuple] = {}
    try:
        for rec in prov.read(ref, report, raw=own_cost):
            t = rec.tokens
            if rec.copy_of is not None:  # a repeat of another record (base.py): counted once, there
                if t is not None:
                    sr.copies_with_tokens += 1
                continue
            mid = rec.message_id
            if mid is not None and t is not None:
                msg_usage[mid] = True
            if t is None:
                if rec.role == "assistant" and rec.kind == "message":
                    if mid is not None:
                        msg_unpaid.setdefault(mid, (_ts_of(rec.instant), rec.model))
                    else:
                        sr.unpaid.append((_ts_of(rec.instant), rec.model))
                continue
            if t.cumulative:
                sr.cumulative.append((_ts_of(rec.instant), t, rec.model))
                continue
            key = (f"{name}:{t.dedup_key}" if across else f"{name}:{owner}:{t.dedup_key}") if t.dedup_key else f"{name}:{ref.session_id}:{rec.locator}"
            sr.per.append((name, owner, lane, None, rec.model, _ts_of(rec.instant), t.input, t.output,
                           t.cache_read, t.cache_write, None, t.reasoning, None, None, None,
                           prov.recorded_cost(rec) if own_cost else None, key, 1, rec.path))
    except Exception as exc:  # noqa: BLE001
        sr.problems.append((str(ref.paths[0]) if ref.paths else f"{name}:{ref.session_id}",
                            f"read failed: {type(exc).__name__}: {exc}"))
    for mid, (ts, model) in msg_unpaid.items():
        if mid not in msg_usage:
            sr.unpaid.append((ts, model))
    sr.files, sr.bytes = report.files, report.bytes
    sr.malformed, sr.torn_tail_bytes = len(report.malformed_lines), report.torn_tail_bytes
    sr.problems += [(p.path, p.why) for p in report.problems]
    return sr


def read_sessions(name: str, prov, refs: list, kept=None) -> list[SessionRead]:
    """Each session's reading, in order: from the index's kept answers where `kept` holds a fresh
    one, else read (and kept)."""
    if kept is None:
        return [read_session(name, prov, r) for r in refs]
    from ..index.kept import taken

    got = kept.get(KEPT, refs)
    keep = []
    out: list[SessionRead] = []
    for i, r in enumerate(refs):
        sr = got.get(i)
        if not isinstance(sr, SessionRead):
            sr, ident = taken(r, lambda r=r: read_session(name, prov, r))
            if ident is not None and not sr.problems:
                keep.append((r, ident, sr))
        out.append(sr)
    kept.put(KEPT, keep)
    return out


def collect_refs(out: Collected, name: str, prov, refs: list, kept=None) -> None:
    """Sessions of one provider read through the providers layer (Record.tokens); `kept`: the
    index's answers kept per session (index/kept.py), where the index is on."""
    tally = out.tally.setdefault(name, ReadTally())
    reads = read_sessions(name, prov, refs, kept)
    for ref, sr in zip(refs, reads):
        owner = ref.parent_session_id or ref.session_id
        lane = "main" if ref.parent_session_id is None else ref.session_id
        info = out.sessions.setdefault((name, owner), SessionInfo(name, owner, ref.project))
        info.lanes += 1
        info.paths += [str(p) for p in ref.paths]
        if info.project is None:
            info.project = ref.project
        _client_recorded(info, name, ref, prov)
        out.ledger.copies_merged += sr.copies_with_tokens
        for ts, model in sr.unpaid:
            info.without_usage += 1
            out.without_usage.append(Unpaid(name, owner, ts, info.project, model))
            out.without_usage_lanes.append(lane)
        per = [Event(*v) for v in sr.per]
        for e in per:
            e.project = info.project
        tally.files += sr.files
        tally.bytes += sr.bytes
        tally.malformed += sr.malformed
        tally.usage_records += len(per) + len(sr.cumulative)
        tally.torn_tail_bytes += sr.torn_tail_bytes
        out.problems += [Problem(p, why) for p, why in sr.problems]
        if per:
            for e in per:
                out.ledger.add(e)
            if sr.cumulative:
                _cross_check(out, name, owner, per, sr.cumulative)
        elif sr.cumulative:
            for e in _increments(name, owner, lane, info.project, sr.cumulative, ref):
                out.ledger.add(e)


def _client_recorded(info: SessionInfo, name: str, ref, prov=None) -> None:
    """The provider's own per-session cost (opencode `session.cost` with its token sums, Crush
    `sessions.cost`), summed over the session and its child sessions."""
    ex = ref.extra or {}
    if getattr(ref, "helper", None) is not None:
        # a helper session's cost is on its parent's row already (Crush's title generation:
        # UpdateSessionTitleAndUsage adds it to the parent's cost; a title row only mirrors it)
        return
    cost = ex.get("recorded_cost")
    if not isinstance(cost, (int, float)) or isinstance(cost, bool):
        return
    toks = ex.get("recorded_tokens") if isinstance(ex.get("recorded_tokens"), dict) else None
    if prov is None:  # a dataset's row (sync/answers.py): the reader by name
        from ..providers import registry

        prov = registry().get(name)
    src = getattr(prov, "session_cost_source", None) or f"{name} recorded_cost"
    path = str(ex.get("db_path") or (ref.paths[0] if ref.paths else ""))
    if info.client is None:
        info.client = ClientRecorded(float(cost), {"(session)": dict(toks)} if toks else {}, path, None, src)
    else:
        info.client.cost_usd = (info.client.cost_usd or 0.0) + float(cost)
        if toks and "(session)" in info.client.by_model:
            agg = info.client.by_model["(session)"]
            for k, v in toks.items():
                if isinstance(v, int) and isinstance(agg.get(k), int):
                    agg[k] += v


_CF = ("input", "output", "cache_read", "cache_write", "reasoning")


def _increments(name, owner, lane, project, series, ref) -> Iterable[Event]:
    prev = None
    for i, (ts, t, model) in enumerate(series):
        cur = {f: getattr(t, f) for f in _CF}
        inc = {}
        for f in _CF:
            v = cur[f]
            if v is None:
                inc[f] = None
                continue
            p = prev.get(f) if prev else None
            inc[f] = v - p if p is not None and v >= p else v
        prev = cur
        if all(v in (None, 0) for v in inc.values()):
            continue
        yield Event(name, owner, lane, project, model, ts, inc["input"], inc["output"], inc["cache_read"],
                    inc["cache_write"], None, inc["reasoning"], key=f"{name}:{ref.session_id}:cum{i}")


def _cross_check(out: Collected, name, owner, per, cumulative) -> None:
    """Per-response sums against the running totals: a running total that drops starts a new
    run (a new client process, e.g. Codex 0.50.0 after a resume), so the check sums each run's
    last total. A difference is a note, never a correction."""
    for f in ("input", "output"):
        runs: list[int] = []
        prev = None
        for _ts, t, _m in cumulative:
            v = getattr(t, f)
            if v is None:
                continue
            if prev is None or v < prev:
                runs.append(v)
            else:
                runs[-1] = v
            prev = v
        if not runs:
            continue
        best: dict = {}
        for e in per:  # one response, however many records repeat its key
            v = getattr(e, f) or 0
            if v > best.get(e.key, -1):
                best[e.key] = v
        s = sum(best.values())
        if sum(runs) != s:
            out.notes.append(f"{name} session {owner}: per-response {f} sums to {s}, its running totals "
                             f"(last of each of {len(runs)} run(s)) to {sum(runs)}")


def collect_selection(sel, subagents: bool = True) -> Collected:
    """Every provider's usage in a `providers.scope.Selection` (what `make_selection` returns):
    Claude Code's deep scope through the fast path, every other session through its reader."""
    if not subagents:
        sel = sel.main_only()  # other providers' child sessions are their subagents
    out = Collected()
    out.coverage = sel.coverage()
    out.problems = list(sel.problems())
    deep = sel.deep_provider
    ce = sel.survey.entry(deep)
    if ce is not None and ce.root is not None and ce.root.path is not None:
        out.claude_home, out.claude_home_source = str(ce.root.path), ce.root.source
    if sel.claude is not None:
        n = len(out.problems)
        from ..providers import get

        prov = sel.survey.provider(deep) or get(deep)
        collect_deep(out, prov, sel.claude, subagents)
        _deleted_by_client(out, sel, prov)
        seen = {(p.path, p.why) for p in out.problems[:n]}
        out.problems = out.problems[:n] + [p for p in out.problems[n:] if (p.path, p.why) not in seen]
    by_provider: dict[str, list] = {}
    for r in sel.refs:
        by_provider.setdefault(r.provider, []).append(r)
    from ..index.kept import Kept

    kept = Kept.for_selection(sel) if by_provider else None
    try:
        for name, refs in by_provider.items():
            prov = sel.survey.provider(name)
            if prov is not None:
                collect_refs(out, name, prov, refs, kept)
    finally:
        if kept is not None:
            kept.close()
    return out


def _deleted_by_client(out: Collected, sel, prov) -> None:
    out.deleted, note = prov.deleted_sessions(sel, out.problems)
    if note:
        out.notes.append(note)


def collect(targets: tuple[str, ...] = (), claude_home: str | None = None, providers: list[str] | None = None,
            sessions_from: list[str] | None = None, subagents: bool = True, home: str | None = None,
            roots: dict[str, str] | None = None) -> Collected:
    """Library entry: the roots as on the command line (docs/cli.md "Data roots"); naming any
    root leaves providers without one `not_looked`."""
    from ..providers.scope import RootRequest, select, survey

    rs = dict(roots or {})
    if claude_home:
        rs[deep_name()] = str(claude_home)
    sv = survey(RootRequest(roots=rs, home=home, only=tuple(providers or ())), light=frozenset({deep_name()}))
    return collect_selection(select(sv, list(targets), sessions_from), subagents)


def home_dir(p: str | os.PathLike[str] | None) -> str | None:
    return None if p is None else str(Path(p).expanduser())
