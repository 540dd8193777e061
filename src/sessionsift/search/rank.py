"""`search --rank`: "find that conversation" -- the turns that best match some words, best first,
for every agent (docs/search.md "Ranked search").

A turn is what ``show --turn`` shows: a session's records from one prompt up to the next, in one
lane (the turn numbers are the library's own: the reader's where it gives them, else the count of
prompts, show.records.number_turns). Each turn is indexed as its prompt, the agent's reply
(messages and reasoning) and its tool calls with their results (index/ranked.py: SQLite FTS5,
BM25). Records before a lane's first prompt belong to no turn and are not ranked; harness
bookkeeping (``meta``), unknown kinds and copies of other records are not text of the turn.

The index is brought up to date for the selection before it is asked: a session whose reader's
change token is the one indexed is not read; any other is read and its changed turns replaced.
With the index off (``--no-index``, SESSIONSIFT_NO_INDEX, a cache directory inside a data root
being read, or one that cannot be opened) every session is read into an in-memory index for this
answer alone, and the answer says it was ranked by a scan and why.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field

from ..index.ranked import RankedHit, RankedIndex, RankUnavailable, SessionMeta, TurnDoc, session_key, words_of
from ..providers.base import ReadReport

COMMIT_EVERY = 200
"""Sessions read between two commits of the on-disk index (an interrupted first build keeps them)."""


@dataclass
class RankAnswer:
    words: list[str]
    limit: int
    hits: list[RankedHit] = field(default_factory=list)
    matched: int = 0
    """Turns of the selection holding any of the words (the hits are the best `limit` of them)."""
    how: str = "index"
    """``index`` (the on-disk index, brought up to date) or ``scan`` (an in-memory index of this
    answer alone)."""
    index_off: str | None = None
    """Why the answer was ranked by a scan (None: by the index)."""
    index_path: str | None = None
    index_bytes: int | None = None
    sessions: int = 0
    """Top-level sessions of the selection ranked over (unreadable ones not among them)."""
    child_sessions: int = 0
    """Other agents' child sessions ranked over besides (subagents and helpers, rows of their own)."""
    turns: int = 0
    """Their turns in the index."""
    sessions_read: int = 0
    """Sessions read for this answer (the others were fresh in the index)."""
    turns_added: int = 0
    turns_removed: int = 0
    unreadable: list[dict] = field(default_factory=list)
    """``{"path", "why"}`` of each session that could not be read (not ranked)."""
    refs: dict = field(default_factory=dict)
    """The SessionRef of each session ranked over, by session key (index.ranked.session_key)."""


def _text(v) -> str:
    if v is None:
        return ""
    if isinstance(v, str):
        return v
    try:
        return json.dumps(v, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError):
        return str(v)


def turns_of(recs) -> list[TurnDoc]:
    """The turns of one session's records (in reading order, any iterable: read as a stream, so
    only the turns' text is held, never every record -- building the ranked index over one 500 MB
    transcript held its 8.7 M records at once, 460 MB), every lane's, as `show --turn` numbers
    them (show/records.py number_turns: the reader's own number, else the count of prompts up to
    the record, copies excluded)."""
    from ..show.records import numbered

    docs: dict[tuple[str, int], dict] = {}
    for r, n in numbered(recs):
        if n is None or r.copy_of is not None:
            continue
        lane = r.lane or "main"
        d = docs.get((lane, n))
        if d is None:
            d = docs[(lane, n)] = {"prompt": [], "reply": [], "tools": [], "first": None, "last": None}
        if r.instant:
            d["first"] = min(d["first"] or r.instant, r.instant)
            d["last"] = max(d["last"] or r.instant, r.instant)
        k = r.kind
        if k == "prompt":
            d["prompt"].append(r.text or "")
        elif k in ("message", "reasoning"):
            d["reply"].append(r.text or "")
        elif k == "tool_call":
            d["tools"].append(" ".join(x for x in (r.tool_name or "", _text(r.tool_input) or r.text or "") if x))
        elif k == "tool_result":
            d["tools"].append(r.text or "")
    return [TurnDoc(lane, n, "\n".join(d["prompt"]), "\n".join(d["reply"]), "\n".join(d["tools"]),
                    d["first"], d["last"]) for (lane, n), d in docs.items()]


def _open(index_off: str | None, sel) -> tuple[RankedIndex, str | None]:
    """(the index to rank with, why it is the in-memory one)."""
    from ..index.store import cache_dir, usable_for

    why = index_off
    if why is None:
        for e in sel.survey.entries:
            root = getattr(e, "root", None)
            path = getattr(root, "path", None) if root is not None else None
            if path is not None and not usable_for(path):
                why = f"the index directory {cache_dir()} lies inside the data root {path}"
                break
    if why is None:
        try:
            return RankedIndex.open(), None
        except RankUnavailable as exc:
            why = str(exc)
    return RankedIndex.memory(), why


def rank(sel, text: str, limit: int = 10, index_off: str | None = None, subagents: bool = True,
         progress=None) -> RankAnswer:
    """The `limit` turns of the selection `sel` that best match the words of `text` (BM25), for
    every agent. `index_off`: why the on-disk index is not to be used (then the answer is ranked
    by a scan). `subagents=False`: main lanes only (other agents' child sessions are left out by
    the selection itself, Selection.main_only; Claude Code's subagent lanes here). Raises RankUnavailable when no ranked index can be made at all (an SQLite without
    FTS5); UsageError when `text` holds no word."""
    from ..errors import UsageError

    words = words_of(text)
    if not words:
        raise UsageError(f"--rank needs words to rank turns by; {text!r} holds none (letters or digits)")
    if limit < 1:
        raise UsageError("-n/--limit must be at least 1")
    idx, why = _open(index_off, sel)
    ans = RankAnswer(words, limit, how="index" if why is None else "scan", index_off=why, index_path=idx.where)
    try:
        skeys = _bring_up_to_date(idx, sel, ans, progress)
        _s, ans.turns = idx.counts(skeys, subagents)
        ans.child_sessions = sum(1 for k in skeys if ans.refs[k].parent_session_id is not None)
        ans.sessions = len(skeys) - ans.child_sessions
        ans.hits, ans.matched = idx.query(words, skeys, limit, subagents)
        ans.index_bytes = idx.size()
    finally:
        idx.close()
    return ans


def update(sel, index_off: str | None = None, progress=None) -> RankAnswer:
    """Bring the on-disk ranked index up to date for every session of `sel` (`index update`):
    the answer's counts say what was read (`how` "scan" and `index_off` when there is no on-disk
    index to bring up to date: then nothing is read)."""
    idx, why = _open(index_off, sel)
    ans = RankAnswer([], 0, how="index" if why is None else "scan", index_off=why, index_path=idx.where)
    try:
        if why is None:
            skeys = _bring_up_to_date(idx, sel, ans, progress)
            _s, ans.turns = idx.counts(skeys, True)
            ans.child_sessions = sum(1 for k in skeys if ans.refs[k].parent_session_id is not None)
            ans.sessions = len(skeys) - ans.child_sessions
            ans.index_bytes = idx.size()
    finally:
        idx.close()
    return ans


def _bring_up_to_date(idx: RankedIndex, sel, ans: RankAnswer, progress) -> list[str]:
    """Read every session of `sel` whose change token is not the one indexed into `idx` (its
    turns replaced); the session keys of the selection, the unreadable ones left out."""
    provs = {e.name: e.provider for e in sel.survey.entries if e.provider is not None}
    known = idx.tokens()
    skeys: list[str] = []
    pending = 0
    idx.begin()
    refs = sel.session_refs()
    for i, ref in enumerate(refs):
        prov = provs.get(ref.provider)
        if prov is None:
            continue
        first = os.path.abspath(os.fspath(ref.paths[0])) if ref.paths else None
        skey = session_key(ref.provider, ref.session_id, first)
        ans.refs[skey] = ref
        try:
            token = prov.change_token(ref)
        except Exception:  # noqa: BLE001 - unknown: read it again
            token = None
        if token is not None and skey in known and known[skey] == token:
            skeys.append(skey)
            continue
        rep = ReadReport()
        try:
            turns = turns_of(prov.read(ref, rep))
        except Exception as exc:  # noqa: BLE001 - a reader that fails names why; the rest is ranked
            ans.unreadable.append({"path": first, "why": f"{type(exc).__name__}: {exc}"})
            continue
        for p in rep.problems:
            ans.unreadable.append({"path": getattr(p, "path", first), "why": getattr(p, "why", str(p))})
        a, r = idx.put(skey, SessionMeta(ref.provider, ref.session_id, first, ref.project),
                       token, turns)
        ans.sessions_read += 1
        ans.turns_added += a
        ans.turns_removed += r
        skeys.append(skey)
        pending += 1
        if pending >= COMMIT_EVERY and idx.where is not None:
            idx.commit()
            idx.begin()
            pending = 0
        if progress is not None:
            progress(i + 1, len(refs))
    idx.commit()
    return skeys
