"""`list` over the shared records: one row per session of any provider with a reader.

A reader yields a session's records in order; the row takes the first and last prompt, the last
agent message and the first/last instants from them. The provider interface has no head/tail
window, so every record of the session is read (the row says how many bytes that was).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..providers.base import Problem, Provider, ReadReport, SessionRef
from ..timefmt import parse_ts


@dataclass
class RefRow:
    ref: SessionRef
    first_prompt: str | None = None
    first_prompt_at: str | None = None
    last_prompt: str | None = None
    last_prompt_at: str | None = None
    last_agent_message: str | None = None
    last_agent_message_at: str | None = None
    first_at: str | None = None
    last_at: str | None = None
    records: int = 0
    prompts: int = 0
    models: list[str] = field(default_factory=list)
    report: ReadReport = field(default_factory=ReadReport)
    notes: list[str] = field(default_factory=list)


def _earlier(a: str | None, b: str | None) -> bool:
    da, db = parse_ts(a), parse_ts(b)
    return da is not None and (db is None or da < db)


def summarize(provider: Provider, ref: SessionRef) -> RefRow:
    row = RefRow(ref)
    rep = row.report
    first_d = last_d = None  # parse_ts(row.first_at), parse_ts(row.last_at): each instant is parsed once
    for r in provider.read(ref, rep):
        if r.copy_of is not None:
            continue
        row.records += 1
        inst = r.instant
        if inst:
            d = parse_ts(inst)
            # = _earlier(inst, row.first_at) and _earlier(row.last_at, inst) on the parsed values
            if row.first_at is None or (d is not None and (first_d is None or d < first_d)):
                row.first_at, first_d = inst, d
            if row.last_at is None or (last_d is not None and (d is None or last_d < d)):
                row.last_at, last_d = inst, d
        if r.model and r.model not in row.models:
            row.models.append(r.model)
        if r.kind == "prompt" and r.lane == "main":
            row.prompts += 1
            if row.first_prompt is None:
                row.first_prompt, row.first_prompt_at = r.text, r.instant
            row.last_prompt, row.last_prompt_at = r.text, r.instant
        elif r.kind == "message" and r.role == "assistant" and r.lane == "main" and r.text:
            row.last_agent_message, row.last_agent_message_at = r.text, r.instant
    row.first_at = row.first_at or ref.first_at
    row.last_at = row.last_at or ref.last_at
    if row.first_prompt is None:
        row.notes.append("no prompt in the session's records")
    if row.last_agent_message is None:
        row.notes.append("no agent message in the session's records")
    for p in rep.problems:
        row.notes.append(f"unreadable: {p.path}: {p.why}")
    return row


@dataclass
class RefListing:
    rows: list[RefRow]
    problems: list[Problem]


def list_refs(refs: list[SessionRef], providers: dict[str, Provider]) -> RefListing:
    """Rows for `refs` (each read by its provider in `providers`), newest first."""
    from ..read.fanout import map_halves, no_gc

    rows: list[RefRow] = []
    problems: list[Problem] = []

    def one(ref: SessionRef) -> RefRow | Problem:
        prov = providers.get(ref.provider)
        if prov is None:
            return Problem(str(ref.paths[0]) if ref.paths else ref.session_id, f"no reader for {ref.provider}")
        try:
            return summarize(prov, ref)
        except Exception as exc:  # a reader's bug: the session is unreadable, the answer goes on
            return Problem(str(ref.paths[0]) if ref.paths else ref.session_id,
                           f"reader failed: {type(exc).__name__}: {exc}")

    refs = list(refs)
    with no_gc():
        results = map_halves(one, refs, [r.size for r in refs])
    for row in results:
        if isinstance(row, Problem):
            problems.append(row)
            continue
        problems.extend(row.report.problems)
        rows.append(row)
    rows.sort(key=lambda r: sort_key(r.last_at), reverse=True)
    return RefListing(rows, problems)


def sort_key(ts: str | None) -> float:
    d = parse_ts(ts)
    return d.timestamp() if d is not None else float("-inf")
