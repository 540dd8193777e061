"""`usage`, `stats` and `list` over every machine of a dataset, computed by the same library code
as the local answers from what the dataset holds (DuckDB reads it, in process).

- usage: the dataset's usage rows are the events `usage.collect` gathered before any merge; DuckDB
  orders them by key and they are merged here with `usage.events.merge` (the one merge rule,
  across machines too: one API response is counted once wherever its copies were synced), then
  `usage.report.build` prices and sums them with the bundled table -- pricing stays in
  usage/prices.py;
- stats: each session's `stats --shared` census, summed by `stats.SharedStats`;
- list: each session's `list` facts, rendered by the same row functions.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Iterator

import orjson

from ..providers.base import Coverage, Problem, ReadReport, SessionRef
from .dataset import Dataset

BATCH_ROWS = 8192


def rebuild_ref(d: dict) -> SessionRef:
    from pathlib import Path

    return SessionRef(d["provider"], d["session_id"], [Path(p) for p in d.get("paths") or []], project=d.get("project"),
                      project_source=d.get("project_source"), first_at=d.get("first_at"), last_at=d.get("last_at"),
                      size=d.get("size"), title=d.get("title"), parent_session_id=d.get("parent_session_id"),
                      version=d.get("version"), extra=d.get("extra") or {}, helper=d.get("helper"))


def rebuild_report(d: dict | None) -> ReadReport:
    rep = ReadReport()
    if not d:
        return rep
    rep.files, rep.bytes, rep.records = d.get("files", 0), d.get("bytes", 0), d.get("records", 0)
    rep.malformed_lines = list(d.get("malformed_lines") or [])
    rep.zero_filled_lines = d.get("zero_filled_lines", 0)
    rep.invalid_utf8_lines = d.get("invalid_utf8_lines", 0)
    rep.torn_tail_bytes = d.get("torn_tail_bytes", 0)
    rep.unknown_kinds = Counter(d.get("unknown_kinds") or {})
    rep.duplicates = d.get("duplicates", 0)
    rep.notes = list(d.get("notes") or [])
    rep.problems = [Problem(p["path"], p["why"]) for p in d.get("problems") or []]
    return rep


class SessionRow:
    """One session's newest `sessions` row; its JSON facts are parsed when asked for (an answer over
    many machines holds the strings, not their dicts)."""

    __slots__ = ("machine", "provider", "session_id", "parent_session_id", "helper", "_lr", "_st", "_ui", "problems",
                 "paths", "order", "_ref", "_lrd")

    def __init__(self, machine, provider, session_id, parent, helper, lr, st, ui, problems, paths, pd):
        self.machine, self.provider, self.session_id = machine, provider, session_id
        self.parent_session_id, self.helper = parent, helper
        self._lr, self._st, self._ui = lr, st, ui
        self.problems, self.paths = problems, paths
        self._ref = self._lrd = None
        from .run import rank

        pd = pd or (paths[0].rsplit("/", 1)[0] if paths else "")
        self.order = (f"{rank(provider):02d}\0{pd}\0{parent or session_id}\0{session_id}", machine)

    @property
    def list_row(self) -> dict:
        if self._lrd is None:
            self._lrd = orjson.loads(self._lr) if self._lr else {}
        return self._lrd

    @property
    def stats(self) -> dict | None:
        return orjson.loads(self._st) if self._st else None

    @property
    def usage_info(self) -> dict:
        return orjson.loads(self._ui) if self._ui else {}

    @property
    def ref_json(self) -> dict:
        return (self.list_row.get("ref") or {}).get("session") or {"provider": self.provider,
                                                                   "session_id": self.session_id}

    @property
    def ref(self) -> SessionRef:
        """The session's SessionRef as discovery gave it (built when asked: most answers need few)."""
        if self._ref is None:
            self._ref = rebuild_ref(self.ref_json)
        return self._ref


def session_rows(con, providers: list[str] | None = None, parts: tuple[str, ...] = ("list", "stats", "usage")
                 ) -> list[SessionRow]:
    """The current version of every session, in the order `usage` and the censuses read them; only
    the JSON facts of `parts` are read (a usage answer reads no list facts or census)."""
    where = ""
    if providers:
        where = "WHERE provider IN (" + ", ".join("'" + p.replace("'", "''") + "'" for p in providers) + ")"
    lr = "list_row" if "list" in parts else "json_object('ref', json_object('session', list_row->'$.ref.session'))"
    st = "stats" if "stats" in parts else "NULL"
    ui = "usage_info" if "usage" in parts else "NULL"
    res = con.execute(f"SELECT machine, provider, session_id, parent_session_id, helper, {lr}, {st}, {ui}, "
                      f"problems, paths, list_row->>'$.ref.session.extra.project_dir' FROM sessions {where}")
    out = []
    while True:  # streamed: DuckDB holds a chunk, not the whole result
        chunk = res.fetchmany(4096)
        if not chunk:
            break
        out += [SessionRow(m, prov, sid, parent, helper, lr_, st_, ui_, orjson.loads(pr) if pr else [],
                           list(paths or []), pd) for m, prov, sid, parent, helper, lr_, st_, ui_, pr, paths, pd in chunk]
    out.sort(key=lambda r: r.order)
    return out


def _lanes_in_paths(name: str) -> bool:
    """Whether provider `name` keeps a session's subagent lanes as further paths of its ref
    (Provider.lanes_in_paths; False for a provider this machine has no reader for)."""
    from ..providers import load

    cls = load(name)
    return bool(cls is not None and cls.lanes_in_paths)


# -- coverage ---------------------------------------------------------------------------------------

def coverage(ds: Dataset, rows: list[SessionRow], providers: list[str] | None = None,
             subagents: bool = True) -> list[Coverage]:
    """Each provider's coverage over every machine: its top-level sessions in the dataset, subagents
    and helper sessions apart; a provider some machine could not read at its last sync is
    unreadable there (named), one no machine looked at is not looked."""
    from ..providers import KNOWN

    names = list(KNOWN)
    for m in ds.manifests.values():
        for c in m.get("coverage") or []:
            if c.get("provider") not in names:
                names.append(c["provider"])
    for r in rows:
        if r.provider not in names:
            names.append(r.provider)
    out = []
    for name in names:
        display = KNOWN.get(name, name)
        if providers and name not in providers:
            out.append(Coverage(name, display, "not_looked", None, "not in --provider"))
            continue
        mine = [r for r in rows if r.provider == name]
        states = [(mname, c) for mname, m in sorted(ds.manifests.items()) for c in (m.get("coverage") or [])
                  if c.get("provider") == name]
        bad = [(mname, c) for mname, c in states if c.get("state") in ("unreadable", "unknown_format")]
        looked = [c for _m, c in states if c.get("state") not in ("not_looked", "no_adapter")]
        if bad:
            out.append(Coverage(name, display, bad[0][1]["state"], None, "; ".join(
                f"on {mname}: {c.get('reason') or c.get('state')}" for mname, c in bad)
                + (f" ({sum(1 for r in mine if r.parent_session_id is None)} sessions in the dataset)" if mine else "")))
            continue
        if not mine and not looked:
            why = "; ".join(sorted({f"on {mname}: {c.get('state')}" for mname, c in states})) or "no machine synced it"
            out.append(Coverage(name, display, "not_looked", None, why))
            continue
        top = sum(1 for r in mine if r.parent_session_id is None)
        if _lanes_in_paths(name):
            kids = sum(max(0, len(r.paths) - 1) for r in mine)
        else:
            kids = sum(1 for r in mine if r.parent_session_id is not None and r.helper is None)
        helps = sum(1 for r in mine if r.helper is not None)
        machines = len({r.machine for r in mine})
        out.append(Coverage(name, display, "ok", top, f"{machines} machine{'' if machines == 1 else 's'}",
                            subagents=kids if subagents else None, helpers=helps if subagents else None))
    return out


# -- usage --------------------------------------------------------------------------------------------

_EVENT_COLS = ("provider", "session_id", "lane", "project", "model", "ts", "input", "output", "cache_read",
               "cache_write", "cache_write_1h", "reasoning", "speed", "geo", "service_tier", "client_cost", "key",
               "copies", "path")


def _usage_filter(providers: list[str] | None, subagents: bool) -> str:
    conds = []
    if providers:
        conds.append("provider IN (" + ", ".join("'" + p.replace("'", "''") + "'" for p in providers) + ")")
    if not subagents:
        conds.append("lane = 'main' AND ref_session_id = session_id")
    return ("WHERE " + " AND ".join(conds)) if conds else ""


def merged_events(con, providers: list[str] | None, subagents: bool, counter: list[int]) -> Iterator:
    """The dataset's responses, one per key: rows of one key merged by usage.events.merge in the
    order `usage` reads them (session order, then file and position; then machine)."""
    from ..usage.events import Event, merge

    sql = (f"SELECT {', '.join(_EVENT_COLS)} FROM usage {_usage_filter(providers, subagents)} "
           "ORDER BY key, session_order, machine, path, seq")
    reader = con.sql(sql).to_arrow_reader(BATCH_ROWS)
    counter[0] = 0
    cur = None
    for batch in reader:
        cols = [c.to_pylist() for c in batch.columns]
        for vals in zip(*cols):
            e = Event(*vals)
            if cur is not None and e.key == cur.key:
                merge(cur, e)
                counter[0] += 1
                continue
            if cur is not None:
                yield cur
            cur = e
    if cur is not None:
        yield cur


class _Ledger:
    """`copies_merged` as the local ledger counts it: repeats of a key merged (while the last
    report streamed the events) and repeats a reader marked as copies."""

    def __init__(self, skipped: int, counter: list[int]) -> None:
        self.skipped, self.counter = skipped, counter

    @property
    def copies_merged(self) -> int:
        return self.skipped + self.counter[0]


def usage_collected(ds: Dataset, providers: list[str] | None = None, subagents: bool = True):
    """A `usage.collect.Collected` over every machine of the dataset: what `usage.report.build`
    takes (its events are streamed from DuckDB and merged on the way)."""
    from ..usage import collect as UC
    from ..providers.usage import ClientRecorded

    con = ds.connect(("usage",))
    rows = session_rows(con, providers, ("usage",))
    per_machine: dict[str, dict] = {}
    without_n: dict[str, Counter] = {}
    tally: dict = {}
    notes: list[str] = []
    problems: list[Problem] = []
    skipped = 0
    for r in rows:
        child = r.parent_session_id is not None
        if child and not subagents:
            continue
        ui = r.usage_info
        sessions = per_machine.setdefault(r.machine, {})
        skipped += ui.get("copies_skipped", 0)
        for p, t in (ui.get("tally") or {}).items():
            agg = tally.setdefault(p, UC.ReadTally())
            for k, v in t.items():
                setattr(agg, k, getattr(agg, k, 0) + v)
        notes += [n for n in ui.get("notes") or [] if n not in notes]
        problems += [Problem(p["path"], p["why"]) for p in ui.get("problems") or []]
        owner = r.parent_session_id or r.session_id
        wn = without_n.setdefault(r.machine, Counter())
        for lane, ts, project, model in ui.get("without_usage") or []:
            if subagents or lane == "main":
                wn[(r.provider, owner, lane if _lanes_in_paths(r.provider) else r.session_id, ts, project, model)] += 1
        if _lanes_in_paths(r.provider):
            for sid, d in (ui.get("sessions") or {}).items():
                info = sessions.setdefault((r.provider, sid), UC.SessionInfo(r.provider, sid, d.get("project")))
                info.lanes += d.get("lanes", 0) if subagents else min(1, d.get("lanes", 0))
                info.paths += (d.get("paths") or []) if subagents else (d.get("paths") or [])[:1]
                info.without_usage += sum(1 for u in ui.get("without_usage") or [] if subagents or u[0] == "main")
                if d.get("client"):
                    info.client = ClientRecorded(**d["client"])
            continue
        info = sessions.setdefault((r.provider, owner), UC.SessionInfo(r.provider, owner, r.ref.project))
        info.lanes += 1
        info.paths += [str(p) for p in r.ref.paths]
        if info.project is None:
            info.project = r.ref.project
        UC._client_recorded(info, r.provider, r.ref)
        d = (ui.get("sessions") or {}).get(owner) or {}
        info.without_usage += d.get("without_usage", 0)
    for r in rows:
        r._ui = r._lr = None  # read: let them go before the events stream
        r._lrd = r._ref = None
    # a session several machines hold is one session: described by the copy with the most
    # transcripts (then the first machine by name); an assistant message without usage is one
    # message however many machines hold it (per session, lane and instant: the most any one
    # machine holds)
    sessions = {}
    for _m, infos in sorted(per_machine.items()):
        for k, info in infos.items():
            if k not in sessions or info.lanes > sessions[k].lanes:
                sessions[k] = info
    most: Counter = Counter()
    for c in without_n.values():
        for k, n in c.items():
            most[k] = max(most[k], n)
    without = [UC.Unpaid(k[0], k[1], k[3], k[4], k[5]) for k, n in most.items() for _ in range(n)]
    counter = [0]

    class DatasetCollected(UC.Collected):
        @property
        def events(self):  # a fresh stream each time a report is built
            return merged_events(con, providers, subagents, counter)

    col = DatasetCollected()
    col.ledger = _Ledger(skipped, counter)  # type: ignore[assignment]
    col.sessions, col.without_usage, col.tally, col.notes, col.problems = sessions, without, tally, notes, problems
    col.coverage = coverage(ds, rows, providers, subagents)
    col.machines = machines(ds)
    return col


def machines(ds: Dataset) -> list[dict]:
    """The dataset's machines as the answers' summaries name them."""
    return [{"machine": k, "machine_id": m.get("machine_id"), "host": m.get("host"), "runs": len(m.get("runs", [])),
             "last_sync": (m.get("runs") or [{}])[-1].get("committed")} for k, m in sorted(ds.manifests.items())]


def machines_text(ms: list[dict]) -> str:
    return (f"{len(ms)} machine{'' if len(ms) == 1 else 's'}: "
            + ", ".join(f"{m['machine']} (synced {m['last_sync'] or 'never'})" for m in ms))


# -- stats ----------------------------------------------------------------------------------------

def rebuild_stats(ref: SessionRef, d: dict):
    from ..providers.census import SessionStats

    st = SessionStats(ref, rebuild_report(d.get("report")))
    st.records, st.copies, st.prompts, st.turns = d["records"], d["copies"], d["prompts"], d["turns"]
    st.kinds, st.tool_calls, st.tool_errors = Counter(d["kinds"]), Counter(d["tool_calls"]), Counter(d["tool_errors"])
    st.tokens_by_model, st.tokens_unknown = d["tokens_by_model"], d["tokens_unknown"]
    st.usage_units_by_model = Counter(d["usage_units_by_model"])
    st.tokens_cumulative_by_model = d["tokens_cumulative_by_model"]
    st.file_changes = d["file_changes"]
    return st


@dataclass
class DatasetStats:
    shared: object
    """stats.SharedStats over every machine's sessions."""
    machine_of: dict = field(default_factory=dict)
    """id(SessionStats) -> machine."""
    coverage: list = field(default_factory=list)
    machines: list = field(default_factory=list)


def stats_census(ds: Dataset, providers: list[str] | None = None, subagents: bool = True) -> DatasetStats:
    """`stats --shared`'s census of every session of every machine (Claude Code included, read
    through the shared records as `--shared` reads it), summed by the same SharedStats."""
    from ..stats import SharedStats

    con = ds.connect(("sessions",))
    rows = session_rows(con, providers, ("stats",))
    out: list = []
    problems: list[Problem] = []
    mach: dict = {}
    for r in rows:
        if not subagents and r.parent_session_id is not None:
            continue
        rs = r.stats
        if rs is None:  # the census itself failed (a reader's bug): what the sync recorded
            problems += [Problem(p["path"], p["why"]) for p in r.problems]
            continue
        d = rs.get("main_only") if (not subagents and rs.get("main_only")) else rs
        ref = r.ref
        if not subagents and _lanes_in_paths(r.provider):
            from dataclasses import replace

            ref = replace(ref, paths=ref.paths[:1])
        st = rebuild_stats(ref, d)
        problems += st.report.problems
        out.append(st)
        mach[id(st)] = r.machine
    # the local census lists other providers first, then Claude Code's sessions read through --shared
    out.sort(key=lambda s: _lanes_in_paths(s.ref.provider))
    return DatasetStats(SharedStats(out, problems), mach, coverage(ds, rows, providers, subagents), machines(ds))


# -- query ----------------------------------------------------------------------------------------

def run_sql(dataset: "str | Dataset", sql: str) -> tuple[list[str], Iterator[tuple]]:
    """(column names, rows) of one SQL statement over the dataset's views, streamed."""
    import duckdb

    from ..errors import UsageError

    ds = dataset if isinstance(dataset, Dataset) else Dataset.open(dataset)
    con = ds.connect()
    try:
        rel = con.sql(sql)
    except duckdb.Error as exc:
        raise UsageError(f"the query failed: {exc}".split("\n")[0],
                         hint="views: sessions, records, usage, tool_calls, file_changes, sessions_versions, manifests")
    if rel is None:
        return [], iter(())
    cols = list(rel.columns)
    reader = rel.to_arrow_reader(BATCH_ROWS)

    def rows() -> Iterator[tuple]:
        for b in reader:
            yield from zip(*[c.to_pylist() for c in b.columns])

    return cols, rows()


# -- list -----------------------------------------------------------------------------------------

@dataclass
class DatasetList:
    rows: list = field(default_factory=list)
    """(machine, listing.SessionRow) of every session, newest first."""
    problems: list = field(default_factory=list)
    coverage: list = field(default_factory=list)
    machines: list = field(default_factory=list)


def _summary(d: dict):
    from ..providers.base import SessionSummary

    d = dict(d)
    d["problems"] = [Problem(p["path"], p["why"]) for p in d.get("problems") or []]
    return SessionSummary(**{k: v for k, v in d.items() if k in SessionSummary.__dataclass_fields__})


def list_rows(ds: Dataset, providers: list[str] | None = None, subagents: bool = True) -> DatasetList:
    """The rows `list` prints for every session of every machine, as the sync read them; forks and
    child counts computed across the sessions of each machine, as `list` computes them."""
    from ..listing import SessionRow, row_order

    con = ds.connect(("sessions",))
    rows = session_rows(con, providers, ("list",))
    out = DatasetList(coverage=coverage(ds, rows, providers, subagents), machines=machines(ds))
    kids = Counter((r.machine, r.provider, r.parent_session_id) for r in rows
                   if r.parent_session_id is not None and r.helper is None) if subagents else None
    paths = {(r.machine, r.provider, r.session_id): str(r.ref.paths[0]) if r.ref.paths else None for r in rows}
    forks: dict = {}
    for r in rows:
        f = r.list_row.get("forked_from")
        if f:
            forks.setdefault((r.machine, r.provider, f["session_id"]), []).append(r.session_id)
    for r in rows:
        if r.parent_session_id is not None and not subagents:
            continue
        lr = r.list_row
        if "error" in lr:
            out.problems.append(Problem(str(r.paths[0]) if r.paths else r.session_id, lr["error"]))
            continue
        if "summary" not in lr:
            continue
        sm = _summary(lr["summary"])
        if not subagents and sm.subagents_are_lanes:
            sm.subagents = None
            sm.notes = [n for n in sm.notes if not n.startswith("subagents:")]
        out.problems += sm.problems
        f = lr.get("forked_from")
        if f is not None and f.get("path") is None:
            f = {**f, "path": paths.get((r.machine, r.provider, f["session_id"]))}
        known = "forked_from" in lr
        row = SessionRow(r.ref, sm, None if kids is None else kids.get((r.machine, r.provider, r.session_id), 0),
                         f, sorted(forks.get((r.machine, r.provider, r.session_id), [])) if known else None)
        out.rows.append((r.machine, row))
    out.rows.sort(key=lambda mr: row_order(mr[1]))
    return out


# -- search ---------------------------------------------------------------------------------------

_REC_COLS = ("machine", "provider", "session_id", "locator", "role", "kind", "native", "path", "line", "byte_offset",
             "record_bytes", "lane", "instant", "text", "tool_name", "tool_input", "call_id", "exit_code", "is_error",
             "model", "copy_of", "turn", "truncated", "rewound", "tool_input_json", "tokens_input", "tokens_output",
             "tokens_cache_read", "tokens_cache_write", "tokens_reasoning", "tokens_total", "tokens_dedup_key",
             "tokens_cumulative", "file_changes")


class _Stream:
    """Every current record of the sessions asked for, in reading order, read once: each session's
    provider takes its own records as the search reaches it."""

    def __init__(self, con, where: str):
        sql = (f"SELECT {', '.join(_REC_COLS)} FROM records {where} "
               "ORDER BY machine, provider, session_id, path, seq")
        self.reader = con.sql(sql).to_arrow_reader(BATCH_ROWS)
        self.rows: Iterator = self._rows()
        self.head = None

    def _rows(self):
        for b in self.reader:
            yield from zip(*[c.to_pylist() for c in b.columns])

    def take(self, key: tuple) -> Iterator[tuple]:
        if self.head is None:
            self.head = next(self.rows, None)
        while self.head is not None and tuple(self.head[:3]) < key:
            self.head = next(self.rows, None)  # a session the search did not ask for
        while self.head is not None and tuple(self.head[:3]) == key:
            yield self.head
            self.head = next(self.rows, None)


def _record(v: tuple):
    import orjson as _oj

    from ..providers.base import FileChange, Record, Tokens

    d = dict(zip(_REC_COLS, v))
    inst = d["instant"]
    ti = d["tool_input"]
    if ti is not None and d["tool_input_json"]:
        try:
            ti = _oj.loads(ti)
        except _oj.JSONDecodeError:
            pass
    tok = None
    if any(d[k] is not None for k in ("tokens_input", "tokens_output", "tokens_cache_read", "tokens_cache_write",
                                      "tokens_reasoning", "tokens_total", "tokens_dedup_key")) or d["tokens_cumulative"]:
        tok = Tokens(d["tokens_input"], d["tokens_output"], d["tokens_cache_read"], d["tokens_cache_write"],
                     d["tokens_reasoning"], d["tokens_total"], d["tokens_dedup_key"], bool(d["tokens_cumulative"]))
    return Record(d["provider"], d["session_id"], d["locator"], d["role"], d["kind"], d["native"], path=d["path"],
                  line=d["line"], offset=d["byte_offset"], length=d["record_bytes"], lane=d["lane"],
                  instant=None if inst is None else inst.strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
                  text=d["text"], tool_name=d["tool_name"], tool_input=ti, call_id=d["call_id"],
                  exit_code=d["exit_code"], is_error=d["is_error"], tokens=tok, model=d["model"],
                  copy_of=d["copy_of"], turn=d["turn"], truncated=bool(d["truncated"]), rewound=bool(d["rewound"]),
                  file_changes=tuple(FileChange("", "unknown") for _ in range(d["file_changes"] or 0)))


class _DatasetProvider:
    """A session's records as the dataset holds them, yielded like its reader's."""

    def __init__(self, name: str, stream: _Stream, machine_of: dict):
        self.name, self.stream, self.machine_of = name, stream, machine_of
        self.truncation_marker = None

    def read(self, ref: SessionRef, report: ReadReport, *, raw: bool = False):
        m = self.machine_of[id(ref)]
        report.files += 1
        for v in self.stream.take((m, ref.provider, ref.session_id)):
            report.records += 1
            yield _record(v)


@dataclass
class DatasetSelection:
    """What the shared search's renderer asks of a selection, over a dataset."""

    survey: object
    refs: list
    machine_of: dict
    coverage_: list
    machines: list
    ruled_out: int = 0
    claude = None
    subagents: bool = True
    index_off = "a dataset is searched through DuckDB: the local full-text index keeps no dataset records"
    """Why the local index does not pick candidates (index/config.py ``why_off``): a dataset's records
    are one ordered stream (``_Stream``), read once; indexing them first would consume it."""

    def coverage(self):
        return self.coverage_

    def problems(self):
        return []

    def incomplete(self):
        return any(c.state in ("unreadable", "unknown_format") for c in self.coverage_)


def search_selection(ds: Dataset, providers: list[str] | None, subagents: bool, needles, needles_ci: bool):
    """The dataset's sessions for `questions.search.search`, each read from its stored records. With
    literal needles every match contains, sessions none of whose records holds one are ruled out by
    DuckDB first (their records are not read: `ruled_out`), as a local search rules sessions out by
    their bytes."""
    from ..providers import KNOWN

    con = ds.connect(("sessions", "records"))
    rows = [r for r in session_rows(con, providers, ()) if subagents or r.parent_session_id is None]
    keep = None
    ascii_ok = needles and all(n.isascii() for n in needles)
    if ascii_ok:
        txt = ("CASE WHEN kind = 'tool_call' THEN coalesce(tool_name, '') || ' ' || coalesce(tool_input, '') "
               "ELSE coalesce(text, '') END")
        if needles_ci:
            txt = f"lower({txt})"
        conds = " OR ".join(f"contains({txt}, ?)" for _ in needles)
        params = [n.lower() if needles_ci else n for n in needles]
        keep = {tuple(x) for x in con.execute(
            f"SELECT DISTINCT machine, provider, session_id FROM records WHERE {conds}", params).fetchall()}
    stream = _Stream(con, "")
    machine_of: dict = {}
    refs = []
    ruled = 0
    for r in rows:
        if keep is not None and (r.machine, r.provider, r.session_id) not in keep:
            ruled += 1
            continue
        from dataclasses import replace

        ref = replace(r.ref, size=0)  # read in this process, in order (no fork over a shared stream)
        machine_of[id(ref)] = r.machine
        refs.append(ref)
    refs.sort(key=lambda x: (machine_of[id(x)], x.provider, x.session_id))
    provs = {}
    for name in {r.provider for r in rows}:
        provs[name] = _DatasetProvider(name, stream, machine_of)

    class _E:
        def __init__(self, name):
            self.name, self.display, self.provider = name, KNOWN.get(name, name), provs.get(name)
            self.root = None  # a refetch runs on the machine that holds the session, with its own roots

    class _Survey:
        entries = [_E(n) for n in sorted(provs)]

        @staticmethod
        def entry(name):
            return _E(name)

    return DatasetSelection(_Survey, refs, machine_of, coverage(ds, rows, providers, subagents), machines(ds), ruled,
                            subagents=subagents)
