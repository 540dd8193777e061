"""One pass over a Claude Code lane: every record that says something about a file, as typed events.

Joins each file-tool / Bash `tool_use` to its `tool_result` by id (REC-075), takes the cwd from
the TOOL_USE record (BASH-007), and reads the file-history snapshot/delta lines (FH-001, FH-004).
A Bash command is read by the shell grammar the question passes in (`grammar`: files/shell.py's,
given through ``FileQuery.shell``; this package never imports the question's).
"""

from __future__ import annotations

import os
import posixpath
import re
from dataclasses import dataclass, field
from typing import Any

from ..discover import Lane
from ..model import record as R
from ..model.lane import LaneIndex

FILE_TOOLS = frozenset({"Read"}) | R.MUTATING_FILE_TOOLS
SHELL_TOOLS = ("Bash",)
MODIFIED_SINCE_READ = "File has been modified since read"
NOT_READ_YET = "File has not been read yet"
STALE_NOTE = "the file had been modified on disk since you last read it"


_WINDOWS = re.compile(r"^[A-Za-z]:[\\/]")


def is_absolute(p: str) -> bool:
    """An absolute POSIX or Windows path (as files/shell.py's grammar reads one)."""
    return p.startswith("/") or bool(_WINDOWS.match(p)) or p.startswith("\\\\")


def norm(p: str) -> str:
    if p[:1] != "/" and (_WINDOWS.match(p) or p.startswith("\\\\")):
        import ntpath

        return ntpath.normpath(p)
    return posixpath.normpath(p)


_UNSET: Any = type("_Unset", (), {"__repr__": lambda self: "<not derived yet>"})()


@dataclass(slots=True)
class Call:
    """A tool call joined to its result (slots: a store holds hundreds of thousands)."""
    lane: Lane
    tool: str
    tool_use_id: str
    line: int                      # tool_use record line
    timestamp: str | None
    turn: int | None
    cwd: str | None                # from the tool_use record
    input: dict
    result_line: int | None = None
    result_ts: str | None = None
    is_error: bool | None = None   # None: no result recorded
    result_text: str | None = None
    echo: Any = None               # toolUseResult (dict, str or None)
    shell: Any = None
    """The shell grammar's analysis of a Bash command (files/shell.py ``ShellAnalysis``); None for
    other tools, and when no grammar was given."""
    survival: str | None = None
    copy_of: tuple[str, int] | None = None
    """(session id, line) of the record this one copies (a `--fork-session` fork whose parent is
    in scope, providers/claude/model/lineage.py): counted once, on the original."""
    light: bool = False
    """Made from the index's call facts (providers/claude/files/facts.py), not from the records: `input`, `echo`
    and `result_text` are empty and `shell` keeps no heredoc body (`Operand.heredoc` is "" where
    one was, None elsewhere), while every derived fact below (`path`, `raw_path`, `touch`, `hint`)
    and the shell analysis' paths, verbs, markers and read anchor are the records' own. `files`
    reads nothing else; `recover` reads the records of the calls that name its file
    (facts.py `hydrate`)."""
    _path: Any = field(default=_UNSET, repr=False, compare=False)
    _raw: Any = field(default=_UNSET, repr=False, compare=False)
    _touch: Any = field(default=_UNSET, repr=False, compare=False)
    _hint: Any = field(default=_UNSET, repr=False, compare=False)
    """The derived facts below, once derived (given by a light call)."""

    @property
    def pos(self) -> int:
        return self.result_line if self.result_line is not None else self.line

    @property
    def path(self) -> str | None:
        """The file the call names, resolved against its cwd (computed once: input and cwd are
        not changed once the call is read)."""
        p = self._path
        if p is _UNSET:
            p = self._path = self._resolve()
        return p

    def _resolve(self) -> str | None:
        p = self.input.get("file_path") if self.tool != "NotebookEdit" else self.input.get("notebook_path")
        if not isinstance(p, str) or not p:
            return None
        if not is_absolute(p) and self.cwd:
            return norm(posixpath.join(self.cwd, p))
        return norm(p)

    @property
    def ok(self) -> bool:
        return self.is_error is False

    @property
    def raw_path(self):
        """The path the call's input names, as written (`files` rows' `raw`; any JSON value)."""
        r = self._raw
        if r is _UNSET:
            r = self._raw = self.input.get("file_path") or self.input.get("notebook_path")
        return r

    @property
    def touch(self) -> tuple[str, str | None] | None:
        """(op, detail) of a file tool's call as `files` lists it; None for other tools."""
        t = self._touch
        if t is _UNSET:
            t = self._touch = _touch_of(self)
        return t

    @property
    def hint(self) -> tuple[list[str], bool]:
        """`stale_hint_paths`: the paths a Bash result's staleReadFileStateHint names (FH-005),
        and whether it names more than it lists."""
        h = self._hint
        if h is _UNSET:
            h = self._hint = _hint_of(self)
        return h


TOOL_OP = {"Read": "read", "Write": "write", "Edit": "edit", "MultiEdit": "multiedit", "NotebookEdit": "notebook-edit"}


def _touch_of(c: Call) -> tuple[str, str | None] | None:
    if c.tool not in TOOL_OP:
        return None
    op = TOOL_OP[c.tool]
    detail = None
    if c.tool == "Write" and isinstance(c.echo, dict) and c.echo.get("type") in ("create", "update"):
        op = c.echo["type"]
    if c.is_error and MODIFIED_SINCE_READ in (c.result_text or ""):
        detail = "rejected: modified since read"
    elif c.is_error:
        detail = (c.result_text or "")[:200]
    if isinstance(c.echo, dict) and c.echo.get("staleRecovered"):
        detail = "staleRecovered: applied to a file changed on disk since the last Read"
    if c.tool == "Read" and isinstance(c.echo, dict):
        f = c.echo.get("file") if isinstance(c.echo.get("file"), dict) else {}
        if c.echo.get("type") == "file_unchanged":
            detail = "file_unchanged"
        elif isinstance(f.get("startLine"), int) and isinstance(f.get("numLines"), int):
            detail = f"lines {f['startLine']}+{f['numLines']} of {f.get('totalLines')}" + (
                " truncatedByTokenCap" if f.get("truncatedByTokenCap") else "")
    return op, detail


@dataclass
class Attach:
    lane: Lane
    kind: str                      # edited_text_file | file | read_truncation_notice | plan_mode | plan_file_reference
    line: int
    timestamp: str | None
    turn: int | None
    payload: dict
    cwd: str | None
    slug: str | None = None
    copy_of: tuple[str, int] | None = None
    light: bool = False
    """Made from the index's facts (providers/claude/files/facts.py): `payload` holds only the `filename`."""


@dataclass
class Backup:
    """One tracked-file entry of a file-history snapshot or delta line."""
    lane: Lane
    line: int
    kind: str                      # snapshot | delta
    timestamp: str | None          # snapshot.timestamp (FH-001) or the delta's own timestamp
    path: str                      # absolute when resolvable
    tracked_as: str
    version: int | None
    backup_file: str | None
    backup_time: str | None
    copy_of: tuple[str, int] | None = None


class LineFact:
    """What `recover --at` reads of one record: its line, turn and timestamp."""

    __slots__ = ("no", "turn", "timestamp")

    def __init__(self, no: int, turn: int | None, timestamp: str | None):
        self.no, self.turn, self.timestamp = no, turn, timestamp


class LaneFacts:
    """The few facts of a lane's full view that files/recover keep once the events are read (the
    view itself - every record's entry - is let go: a store's worth of it is gigabytes): the
    reading's omissions, and per record its line, turn and timestamp, in compact arrays. Answers
    the part of `LaneIndex` they use (`stats`, `entries`, `entry_at_line`)."""

    __slots__ = ("stats", "_no", "_turn", "_ts", "_tsoff", "_load")

    def __init__(self, idx: LaneIndex | None = None, *, stats=None, no=None, turn=None, ts=None, load=None):
        """From a lane view, or from its parts: `no` and `turn` arrays ('I', 'i': -1 none), `ts`
        the timestamps (None or str per record); or `load`, a function returning (no, turn, ts),
        called when a record's facts are first asked for."""
        if idx is not None:
            stats = idx.stats
            if self._from_columns(idx):
                self.stats, self._load = stats, None
                return
            no, turn, ts = self._parts(idx)
        self.stats = stats
        self._load = load
        if load is None:
            self._set(no, turn, ts)

    def _from_columns(self, idx: LaneIndex) -> bool:
        """The facts straight from the index's columns when every timestamp is ASCII (the
        buffer's byte offsets are then its character offsets): no string per record."""
        from array import array

        c = idx.columns
        ts = c.ts_data.decode("utf-8", "surrogatepass")
        if len(ts) != len(c.ts_data):
            return False
        self._no, self._turn = array("I", c.no), array("i", c.turn)
        self._ts = ts
        self._tsoff = array("I", [0])
        self._tsoff.extend(c.ts_ends.tolist())
        return True

    @staticmethod
    def _parts(idx: LaneIndex) -> tuple:
        from array import array

        c = idx.columns  # the index's own columns: no Entry is made
        return (array("I", c.no), array("i", c.turn), [c.timestamp(i) for i in range(len(c))])

    def _set(self, no, turn, ts) -> None:
        from array import array

        self._no, self._turn = no, turn
        parts = [t or "" for t in ts]
        off = array("I", [0])
        for t in parts:
            off.append(off[-1] + len(t))
        self._ts = "".join(parts)
        self._tsoff = off
        """record i's timestamp is _ts[_tsoff[i]:_tsoff[i + 1]] ("" when it has none)."""

    def _ready(self) -> None:
        if self._load is not None:
            load, self._load = self._load, None
            self._set(*load())

    def _fact(self, i: int) -> LineFact:
        t = self._turn[i]
        ts = self._ts[self._tsoff[i]:self._tsoff[i + 1]]
        return LineFact(self._no[i], None if t < 0 else t, ts or None)

    @property
    def entries(self):
        self._ready()
        return (self._fact(i) for i in range(len(self._no)))

    def entry_at_line(self, no: int) -> LineFact | None:
        import bisect

        self._ready()
        i = bisect.bisect_left(self._no, no)
        return self._fact(i) if i < len(self._no) and self._no[i] == no else None


@dataclass
class LaneEvents:
    lane: Lane
    calls: list[Call] = field(default_factory=list)
    attachments: list[Attach] = field(default_factory=list)
    backups: list[Backup] = field(default_factory=list)
    snapshot_lines: list[tuple[int, str | None]] = field(default_factory=list)
    slugs: list[tuple[int, str, str | None, str | None]] = field(default_factory=list)  # line, slug, type, subtype
    index: "LaneIndex | LaneFacts | None" = None
    """The lane's full view while the events are read (`lane_events`), then `LaneFacts` (`keep_view`
    False: what files/recover hold for a whole store)."""
    first_cwd: str | None = None
    source: object = None
    """Where the records of a lane made from the index's facts are (providers/claude/files/facts.py `Source`):
    `recover` reads the ones it needs whole from there."""
    grammar: Any = None
    """The shell grammar its Bash calls were read with (``FileQuery.shell``; None: not analysed),
    kept so the records read again later (facts.py `hydrate`) are read the same way."""


_WANT_ATT = frozenset({"edited_text_file", "file", "read_truncation_notice", "plan_mode", "plan_file_reference"})


def lane_events(lane: Lane, keep_view: bool = True, grammar=None) -> LaneEvents:
    """Every file event of one lane. `keep_view` False keeps `LaneFacts` instead of the lane's
    full view (bounded memory over a whole store). `grammar`: the shell grammar Bash commands are
    read with (None: their calls carry no analysis)."""
    idx = LaneIndex.build(lane)
    ev = LaneEvents(lane, index=idx, grammar=grammar)
    _events(ev, idx)
    if not keep_view:
        ev.index = LaneFacts(idx)
    return ev


def _events(ev: LaneEvents, idx: LaneIndex) -> None:
    # the records with tool ids, file-history records, the wanted attachments and every
    # conversation record (their cwd and slug), as light views of the index's columns (no
    # `Entry`: the uuids, parent, message id and usage are not read here)
    want = idx.columns.light(lambda k: k[0] in _WANT_TYPES or k[5] in _WANT_ATT)
    _events_of(ev, idx.load_many(want))


_WANT_TYPES = frozenset({"file-history-snapshot", "file-history-delta", "user", "assistant", "system", "attachment"})


def _events_of(ev: LaneEvents, pairs, cwd_at=None) -> None:
    """The file events of (entry, record) pairs in file order. `cwd_at(entry)`: the last non-empty
    cwd at or before that record among the records `_events` reads (given when `pairs` holds only
    the records that carry events: lane_events_indexed); else it is followed here, with the first
    cwd and the slugs."""
    lane = ev.lane
    grammar = ev.grammar
    pending: dict[str, Call] = {}
    last_cwd = None
    for e, obj in pairs:
        cwd = obj.get("cwd") if isinstance(obj.get("cwd"), str) else None
        slug = obj.get("slug")
        if cwd_at is not None:
            last_cwd = cwd_at(e)
        else:
            if cwd and ev.first_cwd is None:
                ev.first_cwd = cwd
            if cwd:
                last_cwd = cwd
            if isinstance(slug, str) and slug:
                ev.slugs.append((e.no, slug, e.type, e.subtype))
        t = e.type
        if t == "assistant" and e.tool_use_ids:
            for b in R.tool_uses(obj):
                name = b.get("name")
                inp = b.get("input") if isinstance(b.get("input"), dict) else {}
                if not isinstance(name, str) or (name not in FILE_TOOLS and name not in SHELL_TOOLS
                                                 and name != "ExitPlanMode"):
                    continue
                c = Call(lane, str(name), str(b.get("id")), e.no, e.timestamp, e.turn, cwd or last_cwd, inp,
                         survival=e.survival)
                if name in SHELL_TOOLS and grammar is not None and isinstance(inp.get("command"), str):
                    c.shell = grammar.analyze(inp["command"], c.cwd)
                pending[c.tool_use_id] = c
                ev.calls.append(c)
        elif t == "user" and e.tool_result_ids:
            tur = obj.get("toolUseResult")
            for b in R.tool_results(obj):
                c = pending.get(str(b.get("tool_use_id")))
                if c is None:
                    continue
                c.result_line = e.no
                c.result_ts = e.timestamp
                c.is_error = bool(b.get("is_error"))
                c.result_text = R.tool_result_text(b)
                c.echo = tur
                if isinstance(tur, str) and not b.get("is_error") and tur.startswith(("Error", "InputValidationError")):
                    c.is_error = True
        elif t == "attachment" and e.attachment in _WANT_ATT:
            a = obj.get("attachment") if isinstance(obj.get("attachment"), dict) else {}
            ev.attachments.append(Attach(lane, e.attachment, e.no, e.timestamp, e.turn, a, cwd or last_cwd,
                                         slug if isinstance(slug, str) else None))
        elif t == "file-history-snapshot":
            snap = obj.get("snapshot") if isinstance(obj.get("snapshot"), dict) else {}
            ts = snap.get("timestamp") if isinstance(snap.get("timestamp"), str) else None
            ev.snapshot_lines.append((e.no, ts))
            tfb = snap.get("trackedFileBackups") if isinstance(snap.get("trackedFileBackups"), dict) else {}
            for p, b in tfb.items():
                if isinstance(b, dict):
                    ev.backups.append(_backup(lane, e.no, "snapshot", ts, p, b, last_cwd))
        elif t == "file-history-delta":
            b = obj.get("backup") if isinstance(obj.get("backup"), dict) else {}
            p = obj.get("trackingPath")
            if isinstance(p, str):
                ts = obj.get("timestamp") if isinstance(obj.get("timestamp"), str) else None
                ev.backups.append(_backup(lane, e.no, "delta", ts, p, b, last_cwd))


def _backup(lane: Lane, no: int, kind: str, ts: str | None, p: str, b: dict, cwd: str | None) -> Backup:
    base = b.get("realParentDir") if isinstance(b.get("realParentDir"), str) else None
    if is_absolute(p):
        path = norm(p)
    elif base:
        path = norm(posixpath.join(base, p))
    elif cwd:
        path = norm(posixpath.join(cwd, p))  # FH-002: no realParentDir on older builds; joined to the lane cwd
    else:
        path = p
    v = b.get("version")
    return Backup(lane, no, kind, ts, path, p, v if isinstance(v, int) else None,
                  b.get("backupFileName") if isinstance(b.get("backupFileName"), str) else None,
                  b.get("backupTime") if isinstance(b.get("backupTime"), str) else None)


def stale_hint_paths(call: Call) -> tuple[list[str], bool]:
    """Paths named by a Bash `staleReadFileStateHint` (FH-005), and whether more were unnamed
    (`Call.hint`: taken once; the list is not to be changed)."""
    return call.hint


def _hint_of(call: Call) -> tuple[list[str], bool]:
    echo = call.echo if isinstance(call.echo, dict) else {}
    h = echo.get("staleReadFileStateHint")
    if not isinstance(h, str):
        return [], False
    body = h
    m = re.search(r":\s*(.+?)\.\s*Call\s", h, re.S)
    if m:
        body = m.group(1)
    more = False
    mm = re.search(r"\s+and\s+(\d+)\s+more\s*$", body)
    if mm:
        more = True
        body = body[: mm.start()]
    out = []
    for part in body.split(", "):
        part = part.strip().strip("[]")
        if not part:
            continue
        if not is_absolute(part) and call.cwd:
            part = posixpath.join(call.cwd, part)
        out.append(norm(part))
    return out, more


_GUTTER = re.compile(r"^\s*(\d+)[\t\u2192:](.*)$")


def parse_gutter(text: str) -> list[tuple[int, str]]:
    """`N<TAB>text` / `N→text` (FH-008, FH-049) lines of a snippet or rendered Read."""
    out = []
    for ln in text.split("\n"):
        m = _GUTTER.match(ln)
        if m:
            out.append((int(m.group(1)), m.group(2).rstrip("\r") if False else m.group(2)))
    return out


# -- from the index (sessionsift/index) ------------------------------------------------------------

_CALL_TOOLS = FILE_TOOLS | frozenset(SHELL_TOOLS) | {"ExitPlanMode"}


def lane_events_indexed(lane: Lane, root=None, grammar=None) -> "LaneEvents | None":
    """`lane_events(lane, keep_view=False)` from the lane's index: only the records that carry
    file events are read and parsed (tool calls of file tools, Bash and ExitPlanMode, their
    results, file attachments, file-history lines), as the index's ``fev`` section lists them
    (providers/claude/cache/fileslots.py); turns and survival come from the index. Slugs are not gathered (`plan`
    reads the lane itself). The per-record facts (`LaneFacts`: line, turn, timestamp of every
    record) are read from the index when first asked for. `root`: the data root's
    providers/claude/cache/filesummary.py FilesSummary, which answers (a stat, no index file read) while the
    transcript is unchanged, and takes the sections read here, and the events' facts
    (providers/claude/files/facts.py), from which it answers alone the next time. The events come back light
    (`Call.light`: their facts, not the records' content; recover reads again the few it needs).
    `grammar`: the shell grammar (``FileQuery.shell``), whose rules are part of the facts' digest.
    None when the index cannot answer (then read the lane)."""
    from bisect import bisect_right

    from ....index import config, store
    from ..cache import lanes as IL
    from ..cache.turns import SURVIVAL_NAME
    from ....read.lines import parse_line
    from . import facts as F

    if config.why_off(lane.index_off) is not None:
        return None
    fs = None
    if root is not None:
        from ..cache.fileslots import FileSlots

        ab = store.abspath(os.fspath(lane.path))
        try:
            st = os.stat(lane.path)
        except OSError:
            return None
        e = root.get(ab, st, os.fspath(lane.path))
        if e is not None:
            ident = store.identity_of(st, st.st_size, ())
            kept = root.facts(ab, F.rules(grammar))
            if kept is not None:
                try:
                    ev = F.light(lane, kept, root.read(ab), _loader(lane, ident), grammar)
                except (KeyError, TypeError, ValueError):
                    ev = None
                if ev is not None:
                    ev.source = F.Source(lambda: root.fev(ab), _ident(st))
                    return ev
            o = root.fev(ab)
            if o is not None:
                try:
                    fs = FileSlots(o)
                except (KeyError, TypeError, ValueError):
                    fs = None
                if fs is not None and not fs.matches(_CALL_TOOLS, _WANT_ATT):
                    fs = None
    if fs is None:
        try:
            f, st, verdict = IL._open(lane)
            if f is not None and verdict == store.GROWN:
                IL.lane_stats(lane)
                f, st, verdict = IL._open(lane)
        except OSError:
            return None
        if f is None or verdict != store.FRESH or f.identity.end != st.st_size:
            return None
        fs = IL.file_slots(lane, f, _CALL_TOOLS, _WANT_ATT)
        if fs is None:
            return None
        ident = f.identity
        if root is not None:
            root.put(ab, ident, fs.obj, os.fspath(lane.path))
    from ..cache import codec

    cw_slots, cw_vals = fs.cw_slots, fs.cw_vals

    def cwd_at(e) -> str | None:
        j = bisect_right(cw_slots, e.slot) - 1
        return cw_vals[j] if j >= 0 else None

    ev = LaneEvents(lane, grammar=grammar)
    ev.first_cwd = cw_vals[0] if cw_vals else None
    ev.index = LaneFacts(stats=codec.read_from(fs.read), load=_loader(lane, ident))
    fd = os.open(lane.path, os.O_RDONLY)
    kinds = fs.kinds

    def pairs():
        for j in range(len(fs.slot)):
            obj = parse_line(os.pread(fd, fs.ln[j], fs.off[j])) or {}
            t, sub, att = kinds[fs.kind[j]]
            turn = fs.turn[j]
            yield _Ent(fs.slot[j], fs.no[j], t, sub, att, fs.ts[j], None if turn < 0 else turn,
                       SURVIVAL_NAME[fs.surv[j]], fs.uses[j], fs.res[j]), obj

    try:
        _events_of(ev, pairs(), cwd_at)
    finally:
        os.close(fd)
    kept = F.encode(ev)
    if root is not None:
        root.put_facts(ab, ident, F.rules(grammar), kept)
    # the events as a later run makes them from the facts (the records' content let go: a store's
    # tool results are gigabytes); recover reads again the few it needs whole
    out = F.light(lane, kept, fs.read, _loader(lane, ident), grammar)
    obj = fs.obj
    out.source = F.Source(lambda: obj, _ident(st))
    return out


def _loader(lane: Lane, ident):
    return lambda: _facts_of(lane, ident)


def _ident(st: os.stat_result) -> list:
    return [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


def _stat_part(i) -> tuple:
    return (i.end, i.size, i.dev, i.ino, i.mtime_ns, i.ctime_ns)


def _facts_of(lane: Lane, ident) -> tuple:
    """(no, turn, ts) of every record of a lane (`LaneFacts`), from its index while that is still
    the one the events were read from (same identity), else from the lane itself."""
    from ....index import store
    from ..cache import codec, lanes as IL

    f = store.IndexFile.open(store.index_path(IL.KIND, lane.path), IL.KIND, str(lane.path))
    if f is not None and _stat_part(f.identity) == _stat_part(ident):
        co = f.section("cols")
        if co is not None:
            cols = codec.cols_from(co)
            turns = IL.turns_of(lane, f, cols)
            if turns is not None:
                return cols.no, turns.turn, [t if t is not None else cols.snap.get(i) for i, t in enumerate(cols.ts)]
    idx = LaneIndex.build(lane)
    return LaneFacts._parts(idx)


class _Ent:
    """The entry fields `_events_of` reads, from the index."""

    __slots__ = ("slot", "no", "type", "subtype", "attachment", "timestamp", "turn", "survival", "tool_use_ids",
                 "tool_result_ids")

    def __init__(self, slot, no, type_, subtype, attachment, timestamp, turn, survival, uses, results):
        self.slot, self.no, self.type, self.subtype, self.attachment = slot, no, type_, subtype, attachment
        self.timestamp, self.turn, self.survival = timestamp, turn, survival
        self.tool_use_ids, self.tool_result_ids = uses, results
