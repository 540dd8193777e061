"""One verdict per session, joined from every surface the client leaves on disk.

Fixed precedence (first that holds wins):
  stale-dead > waiting > running > waiting-children > idle-background-open > idle-eot > unknown

Surfaces: the registry row (registry.py), the owner-pid probe, the main transcript's tail, the
elicitation sidecar (`<session>/elicitations.jsonl`, ELI-008/016/018), subagent lane tails
(TAIL-004/005: fresh = last record <= 300 s old and last stop_reason not end_turn), workflow
journals (SUB-008: started > result + failed), the background scan (background.py) and the
harness task list. Every verdict carries one evidence row per surface - including the ones that
were absent or unreadable - and the notes about what is invisible on disk: a pending permission
prompt leaves no trace (TAIL-010, BASH-018, SUB-024), and `not returned` is not proof of still
running (TAIL-001: a process that died mid-tool leaves the same shape).
"""

from __future__ import annotations

import _thread
import copy
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..discover import Lane, Session
from ..model import record as R
from ....read.lines import open_map, parse_line
from ....timefmt import instant, parse_ts
from . import registry as REG
from .background import BackgroundScan, TaskList, task_list
from ...liveness import decide

VERDICTS = ("stale-dead", "waiting", "running", "waiting-children", "idle-background-open", "idle-eot", "unknown")
CHILD_FRESH_SECS = 300.0
TAIL_WINDOW = 256 * 1024
TAIL_MAX = 8 * 1024 * 1024
HUMAN_TOOLS = frozenset({"AskUserQuestion", "ExitPlanMode"})
SIDECAR_NAME = "elicitations.jsonl"

NOTE_PERMISSION = ("a pending permission prompt reaches the disk only as the registry row's status=waiting "
                   "(waitingFor 'permission prompt', written by the interactive client: measured with 2.1.258); "
                   "without that row (print mode writes no status) a tool waiting for approval looks exactly like "
                   "a running one (TAIL-010, BASH-018)")
NOTE_NOT_RETURNED = ("`not returned` is not proof of still running: a process that died mid-tool leaves the "
                     "same unreturned tool_use (TAIL-001)")
NOTE_SINGLE_AUQ = ("a pending single-question AskUserQuestion or ExitPlanMode is not flushed to the transcript "
                   "until answered (ELI-008); only the registry's `waiting` or the elicitation sidecar shows it")


@dataclass
class TailRecord:
    no: int
    offset: int
    obj: dict
    labels: list[str]


@dataclass
class Tail:
    """What the newest records of one transcript say."""

    path: str
    state: str
    """mid-tool | awaiting-model | streaming | eot | interrupted | empty | unreadable | other."""
    detail: str
    last_ts: str | None = None
    last_line: int | None = None
    last_stop_reason: str | None = None
    pending: list[dict] = field(default_factory=list)
    """Unreturned tool_use blocks of the LAST assistant message: {id, name, line, timestamp, questions}."""
    superseded: list[dict] = field(default_factory=list)
    """Unreturned tool_use blocks the conversation went on past (a later assistant message): their
    result is not on disk (a destroyed line, a lost write), but the call is over. Not `mid-tool`."""
    turn_duration_after: bool = False
    size: int | None = None
    mtime: float | None = None
    api_error: dict | None = None
    """The last assistant record is the client's own API-error message (`isApiErrorMessage`, model
    `<synthetic>`): {line, status, error, text} - the turn ended on an API error (e.g. "Prompt is too
    long"), not with an answer."""


def _window_records(buf, size: int, hint: tuple[int, int] | None = None) -> list[TailRecord]:
    win = TAIL_WINDOW
    while True:
        start = max(0, size - win)
        if start > 0:
            nl = buf.find(b"\n", start, size)
            start = size if nl < 0 else nl + 1
        end = buf.rfind(b"\n", start, size) + 1  # torn final line held back
        recs: list[TailRecord] = []
        pos = start
        # line numbers are relative to the window unless it starts at 0
        base = 1 if start == 0 else None
        no = 0
        while pos < end:
            le = buf.find(b"\n", pos, end)
            no += 1
            obj = parse_line(bytes(buf[pos:le]))
            if obj is not None:
                recs.append(TailRecord(no if base else -no, pos, obj, R.classify(obj)))
            pos = le + 1
        has_conv = any(r.obj.get("type") in ("user", "assistant") for r in recs)
        if has_conv or start == 0 or win >= TAIL_MAX:
            if base is None and hint is not None and hint[0] == end:
                # the background scan already counted lines up to `end`: number backward
                first = hint[1] - no
                for r in recs:
                    r.no = first + (-r.no) - 1
                return recs
            if base is None:
                # number lines properly: count newlines before the window once
                before = 0
                a = 0
                while a < start:
                    e = min(start, a + (1 << 26))
                    before += bytes(buf[a:e]).count(b"\n")
                    a = e
                for r in recs:
                    r.no = before + (-r.no)
            return recs
        win *= 4


_TAIL_CACHE: dict[str, tuple[tuple, "Tail"]] = {}
"""The last Tail read per path, reused while the file's size, mtime and inode are unchanged (a
`wait` re-assesses an idle session every few seconds; its tail did not move; serve's live page
assesses every session after each change). Bounded: cleared past _TAIL_MAX paths (was 256: a
store of 13,129 transcripts read every tail again each time)."""
_TAIL_MAX = 1 << 16


def read_tail(path: Path, hint: tuple[int, int] | None = None) -> Tail:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return Tail(str(path), "unreadable", "transcript absent")
    except OSError as exc:
        return Tail(str(path), "unreadable", f"unreadable: {exc.strerror}")
    key = (st.st_size, st.st_mtime_ns, st.st_ino, st.st_dev)
    hit = _TAIL_CACHE.get(str(path))
    if hit is not None and hit[0] == key:
        return copy.deepcopy(hit[1])
    t = _read_tail(path, st, hint)
    if len(_TAIL_CACHE) > _TAIL_MAX:
        _TAIL_CACHE.clear()
    _TAIL_CACHE[str(path)] = (key, copy.deepcopy(t))
    return t


def _read_tail(path: Path, st: os.stat_result, hint: tuple[int, int] | None) -> Tail:
    try:
        m = open_map(path)
    except FileNotFoundError:
        return Tail(str(path), "unreadable", "transcript absent")
    except OSError as exc:
        return Tail(str(path), "unreadable", f"unreadable: {exc.strerror}")
    with m:
        recs = _window_records(m.buf, len(m.buf), hint)
    t = Tail(str(path), "other", "", size=st.st_size, mtime=st.st_mtime)
    if not recs:
        t.state, t.detail = "empty", "no records"
        return t
    for r in recs:
        ts = r.obj.get("timestamp")
        if isinstance(ts, str):
            t.last_ts, t.last_line = ts, r.no
    pending: dict[str, dict] = {}
    superseded: list[dict] = []
    last_conv: TailRecord | None = None
    last_asst: TailRecord | None = None
    td_after = False
    # Walk in TIME order: the interactive client was seen flushing a turn's assistant tool_use
    # BEFORE the user prompt that opened the turn (file order is not conversation order).
    order = sorted(range(len(recs)), key=lambda i: (recs[i].obj.get("timestamp") or "", i)
                   if isinstance(recs[i].obj.get("timestamp"), str) else ("", i))
    has_ts = all(isinstance(recs[i].obj.get("timestamp"), str) for i in range(len(recs))
                 if recs[i].obj.get("type") in ("user", "assistant"))
    walk = [recs[i] for i in order] if has_ts else recs
    for r in walk:
        o = r.obj
        typ = o.get("type")
        if typ == "system" and o.get("subtype") == "turn_duration":
            td_after = True
            continue
        if typ not in ("user", "assistant") or o.get("isMeta") is True:
            continue
        if typ == "assistant":
            last_asst = r
            td_after = False
            msg = R.get_message(o) or {}
            mid = msg.get("id") if isinstance(msg.get("id"), str) else f"L{r.no}"
            # the tail decides: a call made by an EARLIER assistant message is over once the model
            # answered again, whether or not its result reached the disk
            for k in [k for k, p in pending.items() if p["message"] != mid]:
                p = pending.pop(k)
                p["superseded_by_line"] = r.no
                superseded.append(p)
            for b in R.tool_uses(o):
                if isinstance(b.get("id"), str):
                    inp = b.get("input") if isinstance(b.get("input"), dict) else {}
                    qs = inp.get("questions")
                    pending[b["id"]] = {"id": b["id"], "name": b.get("name"), "line": r.no,
                                        "timestamp": o.get("timestamp"),
                                        "questions": len(qs) if isinstance(qs, list) else None, "message": mid}
            last_conv = r
        else:
            results = R.tool_results(o)
            for b in results:
                if isinstance(b.get("tool_use_id"), str):
                    pending.pop(b.get("tool_use_id"), None)
            if not results and "user.message" in r.labels:
                pending.clear()  # a new human prompt: whatever was open before was abandoned
            last_conv = r
    t.pending = [{k: v for k, v in p.items() if k != "message"} for p in pending.values()]
    t.superseded = [{k: v for k, v in p.items() if k != "message"} for p in superseded]
    t.turn_duration_after = td_after
    if last_asst is not None:
        msg = R.get_message(last_asst.obj) or {}
        sr = msg.get("stop_reason")
        t.last_stop_reason = sr if isinstance(sr, str) else None
        if last_asst.obj.get("isApiErrorMessage") is True:
            st = last_asst.obj.get("apiErrorStatus")
            err = last_asst.obj.get("error")
            t.api_error = {"line": last_asst.no, "status": st if isinstance(st, int) else None,
                           "error": err if isinstance(err, str) else None,
                           "text": R.record_text(last_asst.obj).strip() or None}
    if last_conv is None:
        t.state, t.detail = "other", "no user/assistant record in the tail window"
        return t
    lo = last_conv.obj
    if t.pending:
        names = ", ".join(f"{p['name']} (L{p['line']})" for p in t.pending)
        t.state, t.detail = "mid-tool", f"unreturned tool_use: {names}"
    elif lo.get("type") == "assistant":
        if t.last_stop_reason == "end_turn" or (t.last_stop_reason and t.last_stop_reason != "tool_use"):
            t.state = "eot"
            t.detail = f"last assistant record L{last_conv.no} stop_reason={t.last_stop_reason}" + (
                ", turn_duration after it" if td_after else "")
            if t.api_error is not None and last_asst is last_conv:
                a = t.api_error
                t.detail = (f"the last turn ended on an API error: L{a['line']} is the client's error message"
                            + (f" (HTTP {a['status']}" if a["status"] is not None else " (")
                            + (f", {a['error']})" if a["error"] else ")") + f": {a['text'] or '(no text)'}")
        elif t.last_stop_reason is None:
            t.state, t.detail = "streaming", f"last assistant record L{last_conv.no} has no stop_reason yet"
        else:
            t.state, t.detail = "other", f"last assistant record L{last_conv.no} stop_reason={t.last_stop_reason}"
    else:
        labs = set(last_conv.labels)
        if labs & {"harness.interrupt.user", "harness.interrupt.tool"}:
            t.state, t.detail = "interrupted", f"L{last_conv.no} is an interrupt marker"
        else:
            what = ",".join(last_conv.labels) or "user record"
            t.state, t.detail = "awaiting-model", f"L{last_conv.no} ({what}) has no assistant reply after it"
    return t


# --- sidecar, children, journals ------------------------------------------------------------


@dataclass
class SidecarState:
    path: str
    state: str
    """absent | present | unreadable."""
    pending: list[dict] = field(default_factory=list)
    ghosts: int = 0
    unreadable_lines: int = 0


def read_sidecar(session: Session) -> SidecarState:
    p = session.sidecar_dir / SIDECAR_NAME
    out = SidecarState(str(p), "absent")
    try:
        m = open_map(p)
    except FileNotFoundError:
        return out
    except OSError:
        out.state = "unreadable"
        return out
    out.state = "present"
    groups: dict[str, dict] = {}
    with m:
        buf = m.buf
        end = buf.rfind(b"\n") + 1 if len(buf) else 0
        for raw in bytes(buf[:end]).split(b"\n"):
            if not raw.strip():
                continue
            o = parse_line(raw)
            if o is None:
                out.unreadable_lines += 1
                continue
            k, ph = o.get("csiftKey"), o.get("csiftPhase")
            if not isinstance(k, str) or not isinstance(ph, str):
                out.unreadable_lines += 1
                continue
            g = groups.setdefault(k, {"key": k, "kind": o.get("csiftKind"), "pending": None, "resolved": False})
            if ph == "pending":
                g["pending"] = o
            elif ph == "resolved":
                g["resolved"] = True
    open_keys = [g for g in groups.values() if g["pending"] is not None and not g["resolved"]]
    if open_keys:
        try:
            with open_map(session.path) as mm:
                mb = mm.buf
                for g in open_keys:
                    if _structurally_native(mb, g["key"]):
                        out.ghosts += 1
                        continue
                    po = g["pending"]
                    out.pending.append({"key": g["key"], "kind": g["kind"], "timestamp": po.get("timestamp")})
        except OSError:
            out.pending.extend({"key": g["key"], "kind": g["kind"], "timestamp": g["pending"].get("timestamp")}
                               for g in open_keys)
    return out


def _structurally_native(buf, key: str) -> bool:
    """The native transcript outranks the sidecar: a key seen as a tool_use id / tool_result id (ELI-016)."""
    needle = f'"{key}"'.encode()
    pos = buf.find(needle)
    while pos >= 0:
        ls = buf.rfind(b"\n", 0, pos) + 1
        le = buf.find(b"\n", pos)
        le = len(buf) if le < 0 else le
        o = parse_line(bytes(buf[ls:le]))
        if o is not None:
            if any(b.get("id") == key for b in R.tool_uses(o)) or any(
                    b.get("tool_use_id") == key for b in R.tool_results(o)):
                return True
        pos = buf.find(needle, le)
    return False


@dataclass
class ChildState:
    lane: Lane
    last_ts: str | None
    age_secs: float | None
    last_stop_reason: str | None
    live: bool
    why: str


def child_states(session: Session, now: float) -> list[ChildState]:
    out = []
    for lane in session.subagent_lanes():
        t = read_tail(lane.path)
        when = parse_ts(t.last_ts)
        age = round(now - when.timestamp(), 1) if when else None
        if age is None:
            live, why = False, "no timestamped record"
        elif age > CHILD_FRESH_SECS:
            live, why = False, f"last record {age:.0f}s old (> {CHILD_FRESH_SECS:.0f}s)"
        elif t.last_stop_reason == "end_turn" and not t.pending:
            live, why = False, "ended with end_turn"
        else:
            live, why = True, f"last record {age:.0f}s old, last stop_reason={t.last_stop_reason}"
        out.append(ChildState(lane, t.last_ts, age, t.last_stop_reason, live, why))
    return out


@dataclass
class JournalState:
    path: str
    started: int | None
    results: int | None
    failed: int | None
    other: int | None
    why: str | None = None
    """Why the journal could not be read (its counts are then None: unknown, not 0)."""

    @property
    def in_flight(self) -> int | None:
        if self.started is None or self.results is None or self.failed is None:
            return None
        return max(0, self.started - self.results - self.failed)


def journal_states(session: Session) -> list[JournalState]:
    out = []
    for p in session.workflow_journals():
        js = JournalState(str(p), 0, 0, 0, 0)
        try:
            data = p.read_bytes()
        except OSError as exc:
            out.append(JournalState(str(p), None, None, None, None, f"unreadable: {exc.strerror}"))
            continue
        end = data.rfind(b"\n") + 1
        for raw in data[:end].split(b"\n"):
            o = parse_line(raw)
            if o is None:
                continue
            t = o.get("type")
            if t == "started":
                js.started += 1
            elif t == "result":
                js.results += 1
            elif t == "failed":
                js.failed += 1
            else:
                js.other += 1
        out.append(js)
    return out


# --- the verdict ----------------------------------------------------------------------------


@dataclass
class Verdict:
    session: Session
    verdict: str
    reason: str
    evidence: list[dict]
    notes: list[str]
    tail: Tail
    registry: REG.RegistryLookup
    probe: REG.PidProbe | None
    background: list  # BgTask (all)
    tasks: TaskList
    children: list[ChildState]
    journals: list[JournalState]
    sidecar: SidecarState
    settled: str | None = None
    """For stale-dead: mid-tool | settled | unknown (what the tail said when the owner ended)."""
    todos: "TodoState | None" = None
    """The todo list the transcript keeps (TodoWrite calls; providers/claude/live/todos.py)."""
    unreadable: list[dict] = field(default_factory=list)
    """Surfaces that could not be read ({surface, path, why}): the verdict rests on the others,
    and counts taken from them are lower bounds (status exits 3)."""

    @property
    def owner_ended(self) -> bool:
        """No owner process is on record: the registry directory is there and no row names the
        session (the client deletes its row at exit, REG-006/013), or the row's pid is gone. Nothing
        can then write to this session's transcript - an open background launch can no longer report."""
        if self.probe is not None:
            return self.probe.gone
        return self.registry.dir_state == "present" and not self.registry.rows

    @property
    def open_background(self) -> list:
        return [t for t in self.background if t.state == "open"]


def todos_text(td) -> str:
    """One line for the todo list the transcript keeps."""
    if td.unreadable:
        return f"transcript unreadable: {td.unreadable}"
    if td.calls == 0:
        return "no TodoWrite call in the transcript"
    if td.line is None:
        return f"{td.calls} TodoWrite call(s), every one refused (an error result): no list took effect"
    return (f"{len(td.open)} open, {td.completed} completed (TodoWrite at L{td.line}"
            + (f"; {td.failed} refused call(s) ignored" if td.failed else "") + ")")


PROVES = {
    "registry": "whether a live top-level owner process is on record, and the state it last wrote (busy, "
                "idle, waiting, shell); written at transitions, never a heartbeat",
    "pid": "whether the registry row's owner process is still the process that wrote it",
    "tail": "whether the last turn is open (an unreturned tool_use, a reply streaming, a prompt unanswered) or "
            "ended",
    "sidecar": "an elicitation pending with a human that the transcript does not hold yet",
    "children": "subagent lanes still writing (a fresh last record without end_turn)",
    "workflows": "workflow agents started and not yet finished",
    "background": "background launches whose completion is not on disk",
    "tasks": "the harness task list's open items (TaskCreate/TaskUpdate)",
    "todos": "the TodoWrite list the transcript keeps",
}
"""What each of Claude Code's surfaces proves (every evidence row says it)."""


def _ev(surface: str, value: str, **kw) -> dict:
    return {"surface": surface, "value": value, "proves": PROVES.get(surface), **kw}


_SCANS: dict[str, tuple[dict, BackgroundScan, "_thread.LockType"]] = {}
"""main transcript path -> (each lane's (device, inode) when scanned, the session's
BackgroundScan, its lock), per process: a later assessment of the same session (a long-lived
process: serve's live page after every change) reads only the bytes appended since, as `wait`
does. A lane replaced (another inode), shorter than the bytes scanned, or gone starts the session's
scan over. Transcripts are appended to, never rewritten in place (the premise `wait`'s cursors
rely on). Bounded: cleared past _SCANS_MAX sessions."""
_SCANS_MAX = 1 << 16


def _lane_sizes(scan: BackgroundScan) -> dict:
    out = {}
    for k in scan.cursors:
        try:
            st = os.stat(k)
        except OSError:
            continue
        out[k] = (st.st_dev, st.st_ino)
    return out


def _kept_scan(session: Session) -> "tuple[BackgroundScan, _thread.LockType | None]":
    """The session's kept scan (locked: the caller releases it) when every lane it scanned is the
    same file, no shorter; else a new one (kept after its first update). A scan another thread is
    updating is not waited for: this assessment makes its own (not kept)."""
    key = str(session.path)
    got = _SCANS.get(key)
    if got is not None:
        sizes, scan, lock = got
        if not lock.acquire(False):
            return BackgroundScan(session), None
        same = True
        for k, (dev, ino) in sizes.items():
            try:
                st = os.stat(k)
            except OSError:
                same = False
                break
            if (st.st_dev, st.st_ino) != (dev, ino) or st.st_size < scan.cursors[k].offset:
                same = False
                break
        if same and set(sizes) == set(scan.cursors):
            scan.session = session
            scan.problems = []
            return scan, lock
        lock.release()
    lock = _thread.allocate_lock()
    lock.acquire()
    if len(_SCANS) >= _SCANS_MAX:
        _SCANS.clear()
    return BackgroundScan(session), lock


def assess(session: Session, home: Path, bg: BackgroundScan | None = None, now: float | None = None) -> Verdict:
    """Join every surface for one session and apply the fixed precedence."""
    now = now or time.time()
    ev: list[dict] = []
    notes: list[str] = []

    reg = REG.find_rows(home, session.session_id)
    row: REG.RegistryRow | None = None
    probe: REG.PidProbe | None = None
    probes: list[tuple[REG.RegistryRow, REG.PidProbe]] = []
    for r in reg.rows:
        probes.append((r, REG.probe_pid(r.pid, r.data.get("procStart"), r.data.get("pidDomain"))))
    if probes:
        alive = [x for x in probes if x[1].state == "alive"]
        row, probe = (alive or probes)[-1]
    if reg.dir_state != "present":
        ev.append(_ev("registry", f"directory {reg.dir_state}", path=reg.directory))
    elif row is None:
        ev.append(_ev("registry", f"no row names this session ({reg.scanned} rows scanned)", path=reg.directory))
    for r, p in probes:
        d = r.data
        su = d.get("statusUpdatedAt")
        ev.append(_ev("registry", f"status={d.get('status')}", path=r.path, pid=r.pid, status=d.get("status"),
                      waiting_for=d.get("waitingFor"), kind=d.get("kind"), version=d.get("version"),
                      status_updated_at=instant(su / 1000) if isinstance(su, (int, float)) else None,
                      status_age_secs=round(now - su / 1000, 1) if isinstance(su, (int, float)) else None,
                      proc_start=d.get("procStart"), pid_domain=d.get("pidDomain")))
        ev.append(_ev("pid", p.detail, pid=p.pid, state=p.state, reuse_guard=p.guard))
    for path, why in reg.unreadable:
        ev.append(_ev("registry", f"row unreadable: {why}", path=path))
        notes.append(f"registry row {path} could not be read ({why}); if it is this session's row, the "
                     "registry leg of this verdict is missing")

    scan, held = (bg, None) if bg is not None else _kept_scan(session)
    try:
        scan.update()
        cur = scan.cursors.get(str(session.path))
        all_bg = scan.tasks()  # copies: the kept scan's next update leaves this answer as it is
        bg_read = (scan.lines_parsed, scan.bytes_scanned, scan.unmatched_carriers())
        if held is not None:
            _SCANS[str(session.path)] = (_lane_sizes(scan), scan, held)
    finally:
        if held is not None:
            held.release()
    tail = read_tail(session.path, (cur.offset, cur.line_no) if cur else None)
    ev.append(_ev("tail", f"{tail.state}: {tail.detail}", path=tail.path, last_record_at=instant(tail.last_ts),
                  last_record_age_secs=(round(now - parse_ts(tail.last_ts).timestamp(), 1)
                                        if parse_ts(tail.last_ts) else None),
                  last_line=tail.last_line, last_stop_reason=tail.last_stop_reason,
                  pending=tail.pending, superseded=tail.superseded,
                  turn_duration_after=tail.turn_duration_after))
    if tail.superseded:
        notes.append("tool_use " + ", ".join(f"{p['name']} (L{p['line']})" for p in tail.superseded)
                     + " has no result on disk, but the conversation went on after it (its result record was "
                       "lost, e.g. a zero-filled or malformed line): the call is over, not running")

    side = read_sidecar(session)
    ev.append(_ev("sidecar", side.state if not side.pending else f"{len(side.pending)} pending elicitation(s)",
                  path=side.path, pending=side.pending, ghosts_dropped=side.ghosts,
                  unreadable_lines=side.unreadable_lines))

    children = child_states(session, now)
    journals = journal_states(session)
    side_dir = str(session.sidecar_dir) + os.sep
    lost = [p for p in session.problems if p.path.startswith(side_dir)]
    unreadable: list[dict] = [{"surface": "children", "path": p.path, "why": p.why} for p in lost]
    live_children = [c for c in children if c.live]
    ev.append(_ev("children", f"{len(live_children)} live of {len(children)} subagent lanes"
                  + (f"; {len(lost)} could not be read ({lost[0].why})" if lost else ""),
                  live=[{"lane": c.lane.display, "why": c.why, "last_record_at": instant(c.last_ts)}
                        for c in live_children], unreadable=[{"path": p.path, "why": p.why} for p in lost]))
    wf_open = [j for j in journals if j.in_flight]
    bad_j = [j for j in journals if j.why is not None]
    unreadable += [{"surface": "workflows", "path": j.path, "why": j.why} for j in bad_j]
    ev.append(_ev("workflows", f"{len(wf_open)} of {len(journals)} journals with agents in flight"
                  + (f"; {len(bad_j)} unreadable" if bad_j else ""),
                  journals=[{"path": j.path, "started": j.started, "result": j.results, "failed": j.failed,
                             "in_flight": j.in_flight, "why": j.why} for j in journals]))

    open_bg = [t for t in all_bg if t.state == "open"]
    ev.append(_ev("background", f"{len(open_bg)} open of {len(all_bg)} launches",
                  lines_parsed=bg_read[0], bytes_scanned=bg_read[1], unmatched_carriers=bg_read[2]))
    tl = task_list(home, session.session_id)
    if tl.open is None:
        tv = ("could not be read: " + "; ".join(f"{p} ({w})" for p, w in tl.unreadable[:3])
              if tl.unreadable else "no task directory")
    else:
        tv = f"{len(tl.open)} open, {tl.completed} completed" + (
            f" (lower bounds: {len(tl.unreadable)} unreadable)" if tl.unreadable else "")
    ev.append(_ev("tasks", tv, dirs=tl.dirs, unreadable=[{"path": p, "why": w} for p, w in tl.unreadable]))
    unreadable += [{"surface": "tasks", "path": p, "why": w} for p, w in tl.unreadable]
    if side.state == "unreadable":
        unreadable.append({"surface": "sidecar", "path": side.path, "why": "unreadable"})
    unreadable += [{"surface": "registry", "path": p, "why": w} for p, w in reg.unreadable]
    for u in unreadable:
        notes.append(f"{u['surface']}: {u['path']} could not be read ({u['why']}); what it would say is unknown, "
                     "and the verdict rests on the other surfaces")

    from .todos import todo_state

    td = todo_state(session.path)
    ev.append(_ev("todos", todos_text(td), path=td.path, calls=td.calls, failed_calls=td.failed, line=td.line,
                  open=len(td.open) if td.line is not None else None,
                  completed=td.completed if td.line is not None else None))

    v = Verdict(session, "unknown", "", ev, notes, tail, reg, probe, all_bg, tl, children, journals, side, todos=td,
                unreadable=unreadable)
    rstatus = row.status if row is not None else None
    owner_alive = probe is not None and probe.state == "alive"
    owner_gone = probe is not None and probe.gone

    if row is None:
        notes.append("no registry row: whether the owner process still runs cannot be checked; the verdict "
                     "rests on the transcript alone (rows exist only for live top-level sessions, REG-006/013)")
    elif probe is not None and probe.state in ("unprobeable", "unknown"):
        notes.append(f"owner pid could not be probed ({probe.detail}); liveness rests on the other surfaces")

    # an AskUserQuestion whose question count is unknown (None) is not evidence of a multi-question
    # dialog; the count itself is reported as null in the evidence, never as 0
    human_tail = [p for p in tail.pending if p["name"] == "ExitPlanMode" or (
        p["name"] == "AskUserQuestion" and isinstance(p["questions"], int) and p["questions"] > 1)]

    # the shared precedence (providers.liveness.decide): each rung that holds, with its reason
    rungs: dict[str, str | None] = {}
    settled = None
    if owner_gone:
        settled = "mid-tool" if tail.state in ("mid-tool", "streaming", "awaiting-model") else (
            "settled" if tail.state in ("eot", "interrupted") else "unknown")
        rungs["stale-dead"] = (f"registry row names pid {probe.pid}, which is {probe.state} ({probe.detail}); the tail "
                               f"was {settled} when it ended")
    if rstatus == "waiting" or human_tail or side.pending:
        why = []
        if rstatus == "waiting":
            why.append(f"registry status=waiting (waitingFor={row.data.get('waitingFor')!r})")
        if human_tail:
            why.append("unreturned " + ", ".join(f"{p['name']} at L{p['line']}" for p in human_tail))
        if side.pending:
            why.append(f"{len(side.pending)} pending sidecar elicitation(s)")
        rungs["waiting"] = "blocked on a human: " + "; ".join(why)
    tail_open = tail.state in ("mid-tool", "streaming", "awaiting-model")
    if rstatus == "busy" or (tail_open and not (owner_alive and rstatus in ("idle", "shell"))):
        why = []
        if rstatus == "busy":
            why.append("registry status=busy")
        if tail_open:
            why.append(f"tail {tail.state}: {tail.detail}")
        rungs["running"] = "; ".join(why)
    if tail_open:
        rungs["disputed"] = (f"disagreement: registry (owner alive) says status={rstatus} but the tail says "
                             f"{tail.state} ({tail.detail})")
    if live_children or wf_open:
        parts = [f"{c.lane.display} ({c.why})" for c in live_children]
        parts += [f"{Path(j.path).parent.name}: {j.in_flight} agent(s) in flight" for j in wf_open]
        rungs["waiting-children"] = "live children: " + "; ".join(parts)
    if open_bg or rstatus == "shell":
        parts = [f"{t.kind} {t.task_id or t.tool_use_id}" for t in open_bg]
        if rstatus == "shell":
            parts.append("registry status=shell (a background shell is open)")
        rungs["idle-background-open"] = "end of turn with background work open: " + ", ".join(parts)
    if tail.state in ("eot", "interrupted"):
        rungs["idle-eot"] = f"tail {tail.state}: {tail.detail}" + (f"; registry status={rstatus}" if rstatus else "")
    v.verdict, v.reason = decide(rungs, f"no surface decides: tail {tail.state} ({tail.detail}), registry "
                                        f"status={rstatus}")
    if v.verdict == "stale-dead":
        v.settled = settled
    elif v.verdict == "running":
        notes.append(NOTE_NOT_RETURNED)
        notes.append(NOTE_PERMISSION)
    elif v.verdict == "idle-background-open":
        if rstatus == "shell" and not any(t.kind in ("shell", "monitor") for t in open_bg):
            notes.append("registry says a background shell is open but the scan found none open: it was "
                         "launched where the scan could not see or its carrier was not recognised")
        if row is None:
            notes.append("with no live owner process on record, an open launch may have died with its owner "
                         "(a killed shell writes no completion)")
    if v.verdict in ("idle-eot", "idle-background-open", "waiting-children"):
        notes.append(NOTE_PERMISSION)
    if v.verdict != "waiting" and tail.state != "mid-tool":
        notes.append(NOTE_SINGLE_AUQ)
    # de-duplicate notes, keep order
    seen: set[str] = set()
    v.notes = [n for n in notes if not (n in seen or seen.add(n))]
    return v
