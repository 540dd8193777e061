"""`sync`: append what is new on this machine to a dataset (docs/dataset.md).

1. The manifest of this machine says which runs are committed; the newest committed `sessions`
   row of each session says what the dataset holds of it (its change token, the reader version,
   the rows of each table and file with their digest).
2. Each session of the selection whose change token or reader version differs is read again
   (session.py): new rows are appended, or the session is written again when its reading no
   longer begins with what the dataset holds. Unchanged sessions cost their token (metadata).
3. The run's files are finished and put in place whole; then the manifest is written with the run
   (one atomic write: the commit). Every ``commit_bytes`` of rows a run commits and the next one
   begins, so a long first sync keeps what it has done.

Crash safety: before a run writes a data file it names itself in a local marker; a run that dies
leaves files no manifest names (never read) and the marker, and the next run removes those files.
The next run reads every session whose rows the dead run did not commit: no gap, no duplicate.
"""

from __future__ import annotations

import os
import secrets
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone

import orjson

from ..errors import UsageError
from . import schema as S
from .dataset import Dataset, load_manifest, machine_states
from .machine import Machine, SyncLock, pending_path, this_machine
from .session import Mismatch, read_one, ref_json, session_order
from .store import Store, open_store
from .writer import BatchWriter

COMMIT_BYTES = 512 << 20
def rank(name: str) -> int:
    """A provider's place in the order usage reads providers in (the coverage's display order,
    providers.KNOWN; an outside reader after every built-in one)."""
    from ..providers import KNOWN

    return list(KNOWN).index(name) if name in KNOWN else len(KNOWN) + 2


@dataclass
class SyncResult:
    dataset: str
    machine: str
    machine_id: str
    sessions: int = 0
    """Sessions in the selection (every provider, child sessions included)."""
    unchanged: int = 0
    new: int = 0
    appended: int = 0
    rewritten: int = 0
    runs: list[dict] = field(default_factory=list)
    """The runs this sync committed (batch, run id, rows per table, files, bytes)."""
    rows: dict[str, int] = field(default_factory=dict)
    files: int = 0
    bytes: int = 0
    orphans_removed: int = 0
    """Files of a run that died before its commit, removed."""
    problems: list[dict] = field(default_factory=list)
    coverage: list[dict] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def changed(self) -> int:
        return self.new + self.appended + self.rewritten


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _day(iso: str | None) -> str:
    from ..timefmt import parse_ts

    d = parse_ts(iso) if iso else None
    return d.astimezone(timezone.utc).strftime("%Y-%m-%d") if d is not None else "unknown"


class _Run:
    def __init__(self, store: Store, m: Machine, batch: int, pending: str):
        self.store, self.m, self.batch = store, m, batch
        self.run = secrets.token_hex(8)
        self.started = _now()
        self.sessions = 0
        with open(pending, "wb") as f:  # named before any data file exists
            f.write(orjson.dumps({"run": self.run, "batch": batch}))
            f.flush()
            os.fsync(f.fileno())
        self.writer = BatchWriter(store, m.name, batch, self.run)


def _remove_orphans(store: Store, machine: str, run: str, committed: dict) -> int:
    if run in committed:
        return 0
    n = 0
    for table in S.TABLES:
        for rel in store.list(f"{table}/machine={machine}"):
            base = rel.rsplit("/", 1)[-1]
            if f"-{run}-" in base:
                store.delete(rel)
                n += 1
    if store.local:  # a .part file of a local write killed before its rename
        for table in S.TABLES:
            for d, _dirs, files in os.walk(store.path(f"{table}/machine={machine}")):
                for name in files:
                    if name.endswith(".part"):
                        try:
                            os.unlink(os.path.join(d, name))
                            n += 1
                        except OSError:
                            pass
    return n


def sync(dataset: "str | Store", selection, machine: Machine | None = None, *, commit_bytes: int = COMMIT_BYTES,
         adopt: bool = False) -> SyncResult:
    """Append what is new in `selection` (providers.scope.Selection: every provider's sessions) to
    `dataset` as `machine` (default: this machine's stable identity)."""
    t0 = time.monotonic()
    store = open_store(dataset) if isinstance(dataset, str) else dataset
    m = machine or this_machine()
    res = SyncResult(store.url, m.name, m.id)
    key = ("s3://" if not store.local else "") + store.root
    with SyncLock(key, m.name):
        manifest = load_manifest(store, m.name)
        if manifest is not None and manifest.get("machine_id") not in (None, m.id) and not adopt:
            raise UsageError(f"the dataset's machine {m.name!r} belongs to another machine (id {manifest.get('machine_id')}, "
                             f"host {manifest.get('host')}); this one is {m.id}",
                             hint="sync under another name (--machine NAME), or --adopt to continue that machine's history")
        if manifest is None:
            manifest = {"schema": S.MANIFEST, "schema_version": 1, "dataset_schema": f"{S.DATASET}/{S.VERSION}",
                        "machine": m.name, "runs": []}
        committed = {r["run"]: r["batch"] for r in manifest.get("runs", [])}
        pend = str(pending_path(key, m.name))
        try:
            with open(pend, "rb") as f:
                dead = orjson.loads(f.read()).get("run")
        except (OSError, orjson.JSONDecodeError, AttributeError):
            dead = None
        if dead:
            res.orphans_removed = _remove_orphans(store, m.name, dead, committed)
            os.unlink(pend)
        ds = Dataset(store, {m.name: manifest}, {m.name: committed})
        states = machine_states(ds, m.name) if committed else {}
        next_batch = max(committed.values(), default=0) + 1
        work = _plan(selection, states, res)
        run: _Run | None = None
        for job in work:
            if run is None:
                run = _Run(store, m, next_batch, pend)
                next_batch += 1
            _sync_one(run, job, res)
            run.sessions += 1
            if run.writer.row_bytes >= commit_bytes:
                _commit(run, store, manifest, selection, res, pend)
                run = None
        if run is not None:
            _commit(run, store, manifest, selection, res, pend)
        res.coverage = [c.to_json() for c in selection.coverage()]
        res.problems += [{"path": p.path, "why": p.why} for p in selection.problems()]
    res.seconds = time.monotonic() - t0
    return res


@dataclass
class _Job:
    prov: object
    ref: object
    prev: object | None
    rv: str
    token: str | None
    deep_session: object | None = None
    """Its session in the selection's deep Scope (Selection.claude), where its reader keeps lanes."""
    deep_scope: object | None = None
    """That Scope narrowed to it (Scope.one): what its usage is read from."""
    forked_from: dict | None = None
    forks_known: bool = False
    """`forked_from` was found with the selection's deep Scope (its index decision kept)."""
    ordinal: int = 0
    """Its place in this machine's discovery (the order `list` keeps among equal instants)."""


def _plan(sel, states: dict, res: SyncResult) -> list[_Job]:
    """The sessions to read: those whose change token or reader version differs."""
    from ..export import keep
    from ..export.source import pairs

    from . import session as SESSION

    rvs: dict[str, str] = {}
    deep = {s.session_id: s for s in sel.claude.sessions} if sel.claude is not None else {}
    jobs: list[_Job] = []
    for ordinal, (prov, ref) in enumerate(pairs(sel)):
        res.sessions += 1
        rv = rvs.get(prov.name)
        if rv is None:
            rv = rvs[prov.name] = keep.reader_version(prov, "sync", S.VERSION, SESSION.__file__)
        token = prov.change_token(ref)
        prev = states.get((ref.provider, ref.session_id))
        if prev is not None and token is not None and prev.token == token and prev.reader_version == rv:
            res.unchanged += 1
            continue
        j = _Job(prov, ref, prev, rv, token, ordinal=ordinal)
        if prov.lanes_in_paths:
            j.deep_session = deep.get(ref.session_id)
            if j.deep_session is not None:
                j.deep_scope = sel.claude.one(j.deep_session)
        jobs.append(j)
    cs = [j.deep_session for j in jobs if j.deep_session is not None]
    if cs:
        try:
            forks: dict | None = sel.claude.forks(cs)
        except OSError:
            forks = None  # unknown: each session's provider is asked (and says so)
        for j in jobs:
            if forks is not None and j.deep_session is not None:
                j.forked_from, j.forks_known = forks.get(j.ref.session_id), True
    return jobs


def _sync_one(run: _Run, j: _Job, res: SyncResult) -> None:
    prov, ref, prev = j.prov, j.ref, j.prev
    order = session_order(ref, rank(ref.provider))
    keep_prefix = prev is not None and prev.reader_version == j.rv
    kw: dict = dict(deep_scope=j.deep_scope, session_order=order)
    if j.forks_known:
        kw["forked_from"] = j.forked_from
    base = run.batch
    if keep_prefix:
        try:
            out = read_one(prov, ref, run.writer, prev.state, **kw)
            base = prev.base_batch
            res.appended += 1
        except Mismatch:
            out = read_one(prov, ref, run.writer, None, **kw)
            res.rewritten += 1
    else:
        out = read_one(prov, ref, run.writer, None, **kw)
        if prev is None:
            res.new += 1
        else:
            res.rewritten += 1
    lr = out.list_row or {}
    lr["ref"] = {**(lr.get("ref") or {}), "session": ref_json(ref), "ordinal": j.ordinal}
    problems = out.problems + [p for p in out.usage_info.get("problems", []) if p not in out.problems]
    run.writer.add("sessions", ref.provider, _day(ref.first_at), {
        "session_id": ref.session_id, "parent_session_id": ref.parent_session_id, "helper": ref.helper,
        "is_subagent": ref.is_subagent, "project": ref.project, "title": ref.title, "version": ref.version,
        "first_at": ref.first_at, "last_at": ref.last_at, "size_bytes": ref.size,
        "paths": [str(p) for p in ref.paths], "synced_at": datetime.now(timezone.utc), "base_batch": base,
        "change_token": j.token, "reader_version": j.rv, "state": orjson.dumps(out.state).decode(),
        "list_row": orjson.dumps(lr, default=str).decode(),
        "stats": None if out.stats is None else orjson.dumps(out.stats, default=str).decode(),
        "usage_info": orjson.dumps(out.usage_info, default=str).decode(),
        "problems": orjson.dumps(problems).decode()})
    res.problems += problems


def _commit(run: _Run, store: Store, manifest: dict, sel, res: SyncResult, pend: str) -> None:
    written = run.writer.close()
    rows: dict[str, int] = {}
    size = 0
    for w in written:
        rows[w.table] = rows.get(w.table, 0) + w.rows
        size += w.bytes
    from .. import __version__

    entry = {"batch": run.batch, "run": run.run, "started": run.started, "committed": _now(),
             "sessionsift": __version__, "sessions": run.sessions, "rows": rows, "files": len(written), "bytes": size}
    manifest.setdefault("runs", []).append(entry)
    manifest.update({"machine_id": run.m.id, "host": run.m.host, "sessionsift": __version__, "updated": entry["committed"],
                     "coverage": [c.to_json() for c in sel.coverage()],
                     "problems": [{"path": p.path, "why": p.why} for p in sel.problems()]})
    store.write_bytes(f"{S.MANIFESTS_DIR}/{run.m.name}.json", orjson.dumps(manifest, option=orjson.OPT_INDENT_2))
    try:
        os.unlink(pend)
    except OSError:
        pass
    res.runs.append(entry)
    for k, v in rows.items():
        res.rows[k] = res.rows.get(k, 0) + v
    res.files += len(written)
    res.bytes += size
