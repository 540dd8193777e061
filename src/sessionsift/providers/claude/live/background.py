"""Background work of a session: launches and their completion carriers, from a whole-file scan.

Nothing persists background-task state on disk (BG-027, BG-035, REG-015): the only way to know
which tasks are open is to replay every launch against every completion carrier in the
transcripts. To stay fast on very large transcripts the scan is PREFILTERED on bytes: only lines
holding one of `NEEDLES` are parsed at all.

- A launch is a `Bash`/`PowerShell` tool_use with `input.run_in_background: true` (BG-001), a
  `Monitor` tool_use (BG-006/007), or an `Agent`/`Task` launched async (`run_in_background`, or an
  ack whose `toolUseResult.status == "async_launched"`, BG-004). The KIND comes from the tool name,
  never from the shape of the task id (BG-008: a command monitor's id looks like a shell's).
- Its tool_result names the task id (`toolUseResult.backgroundTaskId` / `taskId` / `agentId`, or
  the text) and the output file (BG-002, BG-028).
- A completion is a `<task-notification>` carried by a queue-operation `enqueue`, an
  `attachment` of type `queued_command`, or a `type:"user"` record (QT-008, BG-013); records can
  batch several sections (CLS-006). A section with `<status>` is terminal; a Monitor EVENT pulse has
  `<event>` and no `<status>` and keeps the monitor open (BG-016, BG-017). The join key is
  `<tool-use-id>`, falling back to `<task-id>` (BG-012).
- An orphan summary (`<task-id>__orphan_summary__:<kind>`, BG-020) closes that kind's tasks
  launched before it; `__orphan_summary_live__:` ones are excluded from it. A plain-text
  "background agent(s) ... stopped by the user" record (BG-025) carries no join key: it closes
  agents whose prompt prefix it quotes.
- Launches appear in every lane; completions land in the MAIN transcript (BG-014, SUB-025), so
  all lanes of the session are scanned.
"""

from __future__ import annotations

import os
import stat
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..discover import Lane, Session
from ..model import record as R
from ....read.lines import Releaser, open_map, parse_line
from ....timefmt import parse_ts
from .prefilter import candidate_lines, compile_needles, count_newlines, find_id, run_split

NEEDLES = (rb"_in_background", rb'Monitor"', rb"<task-notification>", rb"_launched", rb"y the user[.:]")
"""Lines worth parsing, each needle searched in its own RE2 pass and anchored on a rare first byte
(see prefilter.py): `_in_background` (launch flag `run_in_background`), `Monitor"` (the Monitor
tool name), `<task-notification>` (completion carriers), `_launched` (`async_launched` agent acks,
BG-004), `y the user[.:]` (BG-025 "... stopped by the user"). Each is a substring of what it stands
for, so the candidate set is a superset; the parsed record decides. A launch's own tool_result is
found by searching its tool_use id forward from the launch (it pairs sub-second, BG-003/TAIL-011),
not by a needle of its own."""
_PATS = compile_needles(NEEDLES)
_QOP = re.compile(rb'^\{"type":"queue-operation","operation":"(\w+)","timestamp":"([^"]*)"')

SHELL_TOOLS = frozenset({"Bash", "PowerShell"})
AGENT_TOOLS = frozenset({"Agent", "Task"})
_ID_TEXT = re.compile(r"(?:running in background with ID: |Monitor started \(task |agentId: )([A-Za-z0-9_-]+)")
_OUT_TEXT = re.compile(r"Output is being written to: (\S+?)\.?(?:\s|$)")
_STOPPED_NAMES = re.compile(r'"([^"]*)"')


@dataclass
class BgTask:
    tool_use_id: str
    kind: str
    """shell | monitor | agent (from the tool name)."""
    tool_name: str
    lane: str
    line: int
    launched_at: str | None
    command: str | None
    description: str | None
    task_id: str | None = None
    output_file: str | None = None
    persistent: bool | None = None
    state: str = "open"
    """open | closed."""
    status: str | None = None
    """The terminal status a carrier named (completed/failed/killed/stopped/...), verbatim."""
    closed_by: str | None = None
    """queue-operation | queued_command | user-record | orphan-summary | stopped-by-user | launch-error."""
    closed_at: str | None = None
    closed_line: int | None = None
    events: int = 0
    carriers: list[str] = field(default_factory=list)
    launch_acknowledged: bool = False

    def output_stat(self, now: float | None = None) -> dict:
        """Size and age of the output file: null when no file was named or it cannot be read."""
        if not self.output_file:
            return {"output_file": None, "output_size": None, "output_age_secs": None,
                    "output_state": "no output file named"}
        try:
            st = os.stat(self.output_file)
        except FileNotFoundError:
            return {"output_file": self.output_file, "output_size": None, "output_age_secs": None,
                    "output_state": "absent"}
        except OSError as exc:
            return {"output_file": self.output_file, "output_size": None, "output_age_secs": None,
                    "output_state": f"unreadable: {exc.strerror}"}
        return {"output_file": self.output_file, "output_size": st.st_size,
                "output_age_secs": round((now or time.time()) - st.st_mtime, 1), "output_state": "present"}


@dataclass
class _Carrier:
    lane: str
    line: int
    ts: str | None
    via: str
    fields: dict


@dataclass
class _LaneCursor:
    offset: int = 0
    line_no: int = 1


@dataclass
class _Part:
    """What one region of one lane yields. Line numbers are relative to the region's start line
    (shifted when merged), so a region scanned by a forked helper merges like one scanned here."""

    newlines: int = 0
    launches: dict = field(default_factory=dict)
    results: dict = field(default_factory=dict)
    """From candidate user lines: the last one wins (as a sequential scan would)."""
    found: dict = field(default_factory=dict)
    """From the forward search of a launch's id: the first one wins, and only if no result is known."""
    carriers: list = field(default_factory=list)
    stops: list = field(default_factory=list)
    lines_parsed: int = 0


class BackgroundScan:
    """Incremental scanner: `update()` reads only bytes appended since the last call."""

    def __init__(self, session: Session, parallel: bool = True):
        self.session = session
        self.parallel = parallel
        """May a large scan fork a helper process (prefilter.py)? It does only when no threads run."""
        self.cursors: dict[str, _LaneCursor] = {}
        self.launches: dict[str, BgTask] = {}
        self.results: dict[str, tuple[dict, dict, str, int, str | None]] = {}
        self.carriers: list[_Carrier] = []
        self.stops: list[tuple[str, str | None, int]] = []
        self.lines_parsed = 0
        self.bytes_scanned = 0
        self.problems: list[tuple[str, str]] = []
        self._generation = 0
        self._tasks: tuple[int, list[BgTask]] | None = None

    def lanes(self) -> list[Lane]:
        return self.session.lanes(subagents=True)

    def update(self) -> "BackgroundScan":
        for lane in self.lanes():
            self._scan_lane(lane)
        return self

    def _scan_lane(self, lane: Lane) -> None:
        key = str(lane.path)
        cur = self.cursors.setdefault(key, _LaneCursor())
        try:
            m = open_map(lane.path)
        except FileNotFoundError:
            return
        except OSError as exc:
            self.problems.append((key, f"unreadable: {exc.strerror}"))
            return
        with m:
            buf = m.buf
            size = len(buf)
            if size < cur.offset:  # truncated/replaced: start over
                cur.offset, cur.line_no = 0, 1
            end = buf.rfind(b"\n", cur.offset, size) + 1  # complete lines only; a torn tail waits
            if end <= cur.offset:
                return
            self.bytes_scanned += end - cur.offset
            known = self.results

            def work(a: int, b: int) -> _Part:
                return _Region(lane.display, buf, end, known).run(a, b)

            parts = run_split(buf, cur.offset, end, work, self.parallel)
        base = cur.line_no - 1
        for part in parts:
            self._merge(part, base)
            base += part.newlines
        cur.line_no = base + 1
        cur.offset = end
        self._generation += 1

    def _merge(self, part: _Part, base: int) -> None:
        def shift(r: tuple) -> tuple:
            return r[:3] + (r[3] + base if r[3] >= 0 else r[3],) + r[4:]

        for k, t in part.launches.items():
            t.line += base
            self.launches[k] = t
        for k, r in part.found.items():
            if k not in part.results and k not in self.results:
                self.results[k] = shift(r)
        for k, r in part.results.items():
            self.results[k] = shift(r)
        for c in part.carriers:
            c.line += base
        self.carriers.extend(part.carriers)
        self.stops.extend((text, ts, no + base) for text, ts, no in part.stops)
        self.lines_parsed += part.lines_parsed


    # --- the table ------------------------------------------------------------------------

    def tasks(self) -> list[BgTask]:
        """Replay launches against results and carriers (recomputed after each update that read
        something; the caller gets its own copies)."""
        import copy

        if self._tasks is None or self._tasks[0] != self._generation:
            self._tasks = (self._generation, self._replay())
        return [_copy_task(t) for t in self._tasks[1]]

    def _replay(self) -> list[BgTask]:
        import copy

        tasks = {k: copy.copy(v) for k, v in self.launches.items()}
        for t in tasks.values():
            t.carriers = []
        # async acks for agents launched without the flag
        for tid, (blk, tur, lane, no, ts) in self.results.items():
            if tid not in tasks and tur.get("status") == "async_launched":
                tasks[tid] = BgTask(tid, "agent", "Agent", lane, no, ts, tur.get("prompt") if isinstance(tur.get("prompt"), str) else None,
                                    tur.get("description") if isinstance(tur.get("description"), str) else None)
        by_task_id: dict[str, BgTask] = {}
        for tid, t in tasks.items():
            r = self.results.get(tid)
            if r is None:
                continue
            blk, tur, lane, no, ts = r
            t.launch_acknowledged = True
            text = R.tool_result_text(blk)
            task_id = None
            for k in ("backgroundTaskId", "taskId", "agentId"):
                if isinstance(tur.get(k), str):
                    task_id = tur[k]
                    break
            if task_id is None:
                m = _ID_TEXT.search(text)
                task_id = m.group(1) if m else None
            t.task_id = task_id
            if isinstance(tur.get("outputFile"), str):
                t.output_file = tur["outputFile"]
            else:
                m = _OUT_TEXT.search(text)
                if m:
                    t.output_file = m.group(1)
            if isinstance(tur.get("persistent"), bool):
                t.persistent = tur["persistent"]
            if blk.get("is_error") is True:
                t.state, t.status, t.closed_by, t.closed_at, t.closed_line = "closed", "launch-error", "launch-error", ts, no
            if task_id:
                by_task_id[task_id] = t
        for c in self.carriers:
            f = c.fields
            tid = f.get("task-id", "")
            if tid.startswith("__orphan_summary__"):
                kind = tid.split(":", 1)[1] if ":" in tid else ""
                kinds = {"shell": ("shell", "monitor"), "agent": ("agent",)}.get(kind, (kind,))
                cts = parse_ts(c.ts)
                for t in tasks.values():
                    lt = parse_ts(t.launched_at)
                    if t.state == "open" and t.kind in kinds and (cts is None or lt is None or lt <= cts):
                        t.state, t.status, t.closed_by = "closed", f.get("status") or "stopped", "orphan-summary"
                        t.closed_at, t.closed_line = c.ts, c.line
                continue
            t = tasks.get(f.get("tool-use-id", "")) or by_task_id.get(tid)
            if t is None:
                continue
            t.carriers.append(c.via)
            if f.get("output-file") and not t.output_file:
                t.output_file = f["output-file"]
            if "status" in f:
                if t.state == "open" or t.closed_by == "launch-error":
                    t.state, t.status, t.closed_by, t.closed_at, t.closed_line = "closed", f["status"], c.via, c.ts, c.line
            elif "event" in f:
                t.events += 1
        for text, ts, no in self.stops:
            names = _STOPPED_NAMES.findall(text)
            for t in tasks.values():
                if t.state == "open" and t.kind == "agent":
                    hay = (t.command or "") + "\n" + (t.description or "")
                    if any(n.rstrip(".…") and n.rstrip(".…") in hay for n in names):
                        t.state, t.status, t.closed_by, t.closed_at, t.closed_line = "closed", "stopped", "stopped-by-user", ts, no
        return sorted(tasks.values(), key=lambda t: (t.launched_at or "", t.lane, t.line))

    def unmatched_carriers(self) -> int:
        known = set(self.launches) | {t.task_id for t in self.tasks() if t.task_id}
        n = 0
        for c in self.carriers:
            tid = c.fields.get("task-id", "")
            if tid.startswith("__orphan_summary__"):
                continue
            if c.fields.get("tool-use-id") not in known and tid not in known:
                n += 1
        return n


class _Region:
    """Parse the candidate lines of one region of one lane into a `_Part` (pure: no shared state)."""

    def __init__(self, lane: str, buf, end: int, known: dict):
        self.lane = lane
        self.buf = buf
        self.end = end
        """The end of the lane's complete lines: a launch's result is searched up to here."""
        self.known = known
        self.part = _Part()
        self.memo: dict[str, list[dict[str, str]]] = {}

    def run(self, a: int, b: int) -> _Part:
        buf, part = self.buf, self.part
        starts, ends, nos, part.newlines = candidate_lines(buf, _PATS, a, b)
        rel = Releaser(buf, a)
        for ls, le, no in zip(starts, ends, nos):
            rel.passed(ls)  # candidates and the results looked for ahead: let passed pages go
            raw = buf[ls:le]
            q = _QOP.match(raw)
            if q is not None and not (q.group(1) == b"enqueue" and b"<task-notification>" in raw):
                continue  # queue lines other than a notification's enqueue carry nothing new
            obj = parse_line(raw)
            part.lines_parsed += 1
            if obj is not None:
                uses = self._take(no, obj)
                if uses:
                    self._find_results(le, no, uses)
        return part

    # --- record handling ----------------------------------------------------------------

    def _take(self, no: int, obj: dict) -> list[dict] | None:
        """Record what the line says; an assistant record's tool_use blocks are returned."""
        typ = obj.get("type")
        ts = obj.get("timestamp") if isinstance(obj.get("timestamp"), str) else None
        if typ == "assistant":
            uses = R.tool_uses(obj)
            for b in uses:
                self._launch(no, ts, b)
            return uses
        if typ == "queue-operation":
            if obj.get("operation") == "enqueue" and isinstance(obj.get("content"), str):
                self._notifications(no, ts, obj["content"], "queue-operation")
            return
        if typ == "attachment":
            att = obj.get("attachment") or {}
            if isinstance(att, dict) and att.get("type") == "queued_command":
                p = att.get("prompt")
                if isinstance(p, str):
                    self._notifications(no, ts or att.get("timestamp"), p, "queued_command")
            return
        if typ == "user":
            for b in R.tool_results(obj):
                tid = b.get("tool_use_id")
                if isinstance(tid, str):
                    tur = obj.get("toolUseResult")
                    self.part.results[tid] = (b, tur if isinstance(tur, dict) else {}, self.lane, no, ts)
            s = R.string_text(obj)
            if s is None:
                texts = [b.get("text") for b in R.blocks_of(obj) if b.get("type") == "text"]
                s = "\n".join(t for t in texts if isinstance(t, str)) or None
            if s:
                if "<task-notification>" in s:
                    self._notifications(no, ts, s, "user-record")
                elif R.AGENTS_STOPPED.match(s.strip()):
                    self.part.stops.append((s.strip(), ts, no))

    def _find_results(self, after: int, no: int, uses: list[dict]) -> None:
        """Parse the tool_result lines answering this record's launches (searched by id)."""
        part, buf = self.part, self.buf
        for b in uses:
            tid = b.get("id")
            if not isinstance(tid, str):
                continue
            if tid not in part.launches or tid in part.results or tid in part.found or tid in self.known:
                continue
            pos = find_id(buf, b'"tool_use_id":"' + tid.encode() + b'"', after, self.end)
            if pos < 0:
                continue
            ls = buf.rfind(b"\n", 0, pos) + 1
            le = buf.find(b"\n", pos, self.end)
            o = parse_line(buf[ls:le])
            part.lines_parsed += 1
            if o is not None and o.get("type") == "user":
                tur = o.get("toolUseResult")
                for blk in R.tool_results(o):
                    if blk.get("tool_use_id") == tid:
                        # the result line's number: the launch's plus the newlines in between
                        part.found[tid] = (blk, tur if isinstance(tur, dict) else {}, self.lane,
                                           no + count_newlines(buf, after, ls),
                                           o.get("timestamp") if isinstance(o.get("timestamp"), str) else None)

    def _launch(self, no: int, ts: str | None, b: dict) -> None:
        name = b.get("name")
        inp = b.get("input") if isinstance(b.get("input"), dict) else {}
        tid = b.get("id")
        if not isinstance(tid, str) or not isinstance(name, str):
            return
        bg = inp.get("run_in_background") is True
        if name in SHELL_TOOLS and bg:
            kind = "shell"
        elif name == "Monitor":
            kind = "monitor"
        elif name in AGENT_TOOLS and bg:
            kind = "agent"
        else:
            return
        cmd = inp.get("command") if isinstance(inp.get("command"), str) else None
        if cmd is None and isinstance(inp.get("prompt"), str):
            cmd = inp["prompt"]
        desc = inp.get("description") if isinstance(inp.get("description"), str) else None
        self.part.launches[tid] = BgTask(tid, kind, name, self.lane, no, ts, cmd, desc,
                                    persistent=inp.get("persistent") if isinstance(inp.get("persistent"), bool) else None)

    def _notifications(self, no: int, ts: str | None, text: str, via: str) -> None:
        # the same notification text usually comes twice (queue enqueue + attachment/user record)
        memo = self.memo
        sections = memo.get(text)
        if sections is None:
            if len(memo) > 64:
                memo.clear()
            sections = memo[text] = notification_fields(text)
        for f in sections:
            self.part.carriers.append(_Carrier(self.lane, no, ts, via, dict(f)))

_TAG_NAMES = frozenset(("task-id", "tool-use-id", "output-file", "status", "summary", "event", "result"))


def notification_fields(text: str) -> list[dict[str, str]]:
    """`model.record.parse_task_notification` with str.find instead of a backtracking regex: the
    same sections (`<task-notification>` to the first close after it), the same tags (first of
    each name wins, value stripped, a tag without its close is skipped), ~5x faster. A test
    pins the equivalence."""
    out = []
    pos = 0
    find = text.find
    while True:
        a = find("<task-notification>", pos)
        if a < 0:
            return out
        a += 19
        b = find("</task-notification>", a)
        if b < 0:
            return out
        f: dict[str, str] = {}
        i = find("<", a, b)
        while i >= 0:
            j = find(">", i + 1, b)
            if j < 0:
                break
            name = text[i + 1:j]
            if name in _TAG_NAMES:
                c = find("</" + name + ">", j + 1, b)
                if c >= 0:
                    if name not in f:
                        f[name] = text[j + 1:c].strip()
                    i = find("<", c + len(name) + 3, b)
                    continue
            i = find("<", i + 1, b)
        out.append(f)
        pos = b + 20


def _copy_task(t: BgTask) -> BgTask:
    import copy

    c = copy.copy(t)
    c.carriers = list(t.carriers)
    return c


def scan(session: Session) -> BackgroundScan:
    return BackgroundScan(session).update()


# --- the harness task list (<home>/tasks/) -----------------------------------------------


@dataclass
class TaskList:
    dirs: list[str]
    """The owner directories that exist (both name forms probed, REG-007/BG-034)."""
    open: list[dict] | None
    completed: int | None
    unreadable: list[tuple[str, str]]


def task_list(home: Path, session_id: str) -> TaskList:
    """Tasks of one session from `<home>/tasks/<uuid>/` and `<home>/tasks/session-<first 8>/`.

    No directory at all -> `open`/`completed` are None (the session never used the task tools);
    a directory with nothing open -> [] (MISC-005: `activeForm`, `owner`, `metadata` optional).
    A directory (or tasks/ itself) we cannot look into, or a task file we cannot read, is listed in
    `unreadable`; when a directory cannot be listed at all the counts are None (unknown, not 0),
    otherwise they are lower bounds."""
    root = Path(home) / "tasks"
    dirs = [root / session_id, root / f"session-{session_id[:8]}"]
    found = []
    bad: list[tuple[str, str]] = []
    for d in dirs:
        try:
            st = os.stat(d)
        except (FileNotFoundError, NotADirectoryError):
            continue
        except OSError as exc:  # e.g. tasks/ not searchable: the directory may well be there
            bad.append((str(d), f"cannot look: {exc.strerror}"))
            continue
        if stat.S_ISDIR(st.st_mode):
            found.append(d)
    if not found and not bad:
        return TaskList([], None, None, [])
    open_: list[dict] = []
    completed = 0
    listed = 0
    seen: set[str] = set()
    for d in found:
        try:
            names = sorted(os.listdir(d))
        except OSError as exc:
            bad.append((str(d), f"unreadable: {exc.strerror}"))
            continue
        listed += 1
        for n in names:
            if not n.endswith(".json"):
                continue
            p = d / n
            try:
                obj = __import__("orjson").loads(p.read_bytes())
            except Exception as exc:  # noqa: BLE001 - report, do not hide
                bad.append((str(p), f"unreadable or not JSON ({type(exc).__name__}; caught mid-write?)"))
                continue
            if not isinstance(obj, dict):
                bad.append((str(p), "not a JSON object"))
                continue
            key = f"{d.name}/{obj.get('id')}"
            if key in seen:
                continue
            seen.add(key)
            if obj.get("status") == "completed":
                completed += 1
            else:
                open_.append({"id": obj.get("id"), "subject": obj.get("subject"), "status": obj.get("status"),
                              "active_form": obj.get("activeForm"), "owner": obj.get("owner"),
                              "blocked_by": obj.get("blockedBy"), "dir": d.name, "path": str(p)})
    if listed == 0 or any(not w.startswith("unreadable or not JSON") and w != "not a JSON object" for _, w in bad):
        # a directory we could not list: how many tasks it holds is unknown
        return TaskList([str(d) for d in found], None, None, bad)
    return TaskList([str(d) for d in found], open_, completed, bad)
