"""`list`: one row per session, newest first, found by reading each transcript's head and tail.

Only a bounded head window and a bounded tail window are read (never the whole file), so a
field that lies outside both windows is reported as unknown (`null`) with the reason, never
guessed from elsewhere.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from .discover import Problem, Scope, Session
from .model import record as R
from ...read.lines import parse_line

HEAD_START = 4 * 1024
HEAD_BYTES = 1024 * 1024
"""The head window starts at HEAD_START bytes and doubles until the first prompt is found, up to
HEAD_BYTES; the tail window likewise from TAIL_START up to TAIL_BYTES."""
TAIL_START = 8 * 1024
TAIL_BYTES = 2 * 1024 * 1024


@dataclass
class SessionRow:
    session_id: str
    path: str
    project_dir: str
    project: str | None
    first_prompt: str | None = None
    first_prompt_at: str | None = None
    last_prompt: str | None = None
    last_prompt_at: str | None = None
    last_agent_message: str | None = None
    last_agent_message_at: str | None = None
    first_at: str | None = None
    last_at: str | None = None
    git_branch: str | None = None
    version: str | None = None
    size: int = 0
    mtime: float = 0.0
    subagents: int | None = None
    bytes_read: int = 0
    notes: list[str] = field(default_factory=list)
    forked_from: dict | None = None
    """The session this one was forked from (`--fork-session`, providers/claude/model/lineage.py): session_id, path,
    line (the parent's line of the last record copied), uuid, copied_records. None: not a fork."""
    forks: list[str] = field(default_factory=list)
    """Sessions forked from this one."""


@dataclass
class ListResult:
    rows: list[SessionRow]
    problems: list[Problem]
    bytes_total: int
    bytes_read: int


def _lines_of(chunk: bytes, at_start: bool, at_end: bool) -> list[bytes]:
    parts = chunk.split(b"\n")
    if not at_start:
        parts = parts[1:]  # first piece is a partial line
    if not at_end or (parts and parts[-1] and not chunk.endswith(b"\n")):
        # a final piece without newline is partial (or torn): drop it unless it parses
        last = parts[-1] if parts else b""
        if last and parse_line(last) is None:
            parts = parts[:-1]
    return [p for p in parts if p.strip()]


def _genuine_prompt(obj: dict) -> str | None:
    if obj.get("type") != "user" or obj.get("isSidechain"):
        return None
    labels = R.classify(obj)
    if labels[:1] == ["user.message"]:
        return R.string_text(obj) or R.record_text(obj)
    return None


def _agent_message(obj: dict) -> str | None:
    if obj.get("type") != "assistant":
        return None
    texts = [b.get("text") for b in R.blocks_of(obj) if b.get("type") == "text" and isinstance(b.get("text"), str)]
    return "\n".join(texts) if texts else None


def summarize_session(s: Session, subagents: bool = True) -> SessionRow:
    st = os.stat(s.path)
    size = st.st_size
    row = SessionRow(s.session_id, str(s.path), str(s.project_dir), None, size=size, mtime=st.st_mtime)
    with open(s.path, "rb") as f:
        # head: grow the window until the project and first prompt are known
        want = HEAD_START
        head = b""
        while True:
            if len(head) < min(want, size):
                f.seek(len(head))
                head += f.read(min(want, size) - len(head))
            _scan_head(row, _lines_of(head, True, len(head) >= size))
            if (row.project and row.first_prompt) or len(head) >= size or want >= HEAD_BYTES:
                break
            want *= 2
        # tail: grow the window (never re-reading the head) until the last facts are known
        want = TAIL_START
        tail_start = size
        tail = b""
        while True:
            new_start = max(len(head), size - want)
            if new_start < tail_start:
                f.seek(new_start)
                tail = f.read(tail_start - new_start) + tail
                tail_start = new_start
            region = head + tail if tail_start == len(head) else tail
            at_start = tail_start == len(head)
            _scan_tail(row, _lines_of(region, at_start and True, True) if at_start else _lines_of(region, False, True))
            if (row.last_prompt and row.last_agent_message and row.version and row.last_at) \
                    or tail_start <= len(head) or want >= TAIL_BYTES:
                break
            want *= 2
        row.bytes_read = len(head) + len(tail)
    whole = row.bytes_read >= size
    if row.first_prompt is None:
        row.notes.append("no genuine prompt in the file" if whole else f"no genuine prompt in the first {len(head)} bytes")
    if row.last_prompt is None and not whole:
        row.notes.append(f"no genuine prompt in the last {len(tail)} bytes")
    if row.last_agent_message is None:
        row.notes.append("no agent message in the file" if whole else f"no agent message in the last {len(tail)} bytes")
    if subagents:
        before = len(s.problems)
        lanes = s.subagent_lanes()
        new = [p for p in s.problems[before:] if p.path.startswith(str(s.sidecar_dir) + os.sep)]
        if any(p.path == str(s.sidecar_dir / "subagents") for p in new):
            row.subagents = None  # we could not look: not zero
            row.notes.append("subagents: " + "; ".join(p.why for p in new if p.path == str(s.sidecar_dir / "subagents")))
        else:
            row.subagents = len(lanes)
            if new:
                row.notes.append(f"subagents: {len(lanes)} readable lane(s); {len(new)} more could not be read "
                                 "(a lower bound): " + "; ".join(f"{os.path.basename(p.path)}: {p.why}" for p in new[:3]))
    return row


def _str_field(key: str):
    return lambda obj: obj[key] if isinstance(obj.get(key), str) else None


def _with_time(fn):
    def pick(obj: dict):
        v = fn(obj)
        return None if v is None else (v, obj.get("timestamp"))
    return pick


# (row attribute(s), extractor): the first record that yields a value fills the attribute(s)
_HEAD_FIELDS = (
    ("project", _str_field("cwd")),
    ("first_at", _str_field("timestamp")),
    (("first_prompt", "first_prompt_at"), _with_time(_genuine_prompt)),
)
_TAIL_FIELDS = (
    ("last_at", _str_field("timestamp")),
    ("git_branch", _str_field("gitBranch")),
    ("version", _str_field("version")),
    (("last_prompt", "last_prompt_at"), _with_time(_genuine_prompt)),
    (("last_agent_message", "last_agent_message_at"), _with_time(_agent_message)),
)


def _scan(row: SessionRow, lines, fields) -> None:
    """Fill each still-unknown field from the first record (in `lines` order) that yields it."""
    for raw in lines:
        todo = [(a, fn) for a, fn in fields if getattr(row, a if isinstance(a, str) else a[0]) is None]
        if not todo:
            return
        obj = parse_line(raw)
        if not obj:
            continue
        for attr, fn in todo:
            v = fn(obj)
            if v is None:
                continue
            if isinstance(attr, str):
                setattr(row, attr, v)
            else:
                for a, x in zip(attr, v):
                    setattr(row, a, x)


def _scan_head(row: SessionRow, lines: list[bytes]) -> None:
    _scan(row, lines, _HEAD_FIELDS)


def _scan_tail(row: SessionRow, lines: list[bytes]) -> None:
    for attr, _ in _TAIL_FIELDS:  # the tail window grows: rescan it from scratch
        for a in ((attr,) if isinstance(attr, str) else attr):
            setattr(row, a, None)
    _scan(row, reversed(lines), _TAIL_FIELDS)


def list_sessions(scope: Scope, subagents: bool = True) -> ListResult:
    rows: list[SessionRow] = []
    problems: list[Problem] = []
    total = read = 0
    for s in scope.sessions:
        try:
            r = summarize_session(s, subagents)
        except OSError as exc:
            problems.append(Problem(str(s.path), exc.strerror or str(exc)))
            continue
        rows.append(r)
        total += r.size
        read += r.bytes_read
    from .model.lineage import lineage_for

    for sid, f in lineage_for(scope.sessions).items():
        for r in rows:
            if r.session_id == sid:
                r.forked_from = f.as_json()
            elif r.session_id == f.parent_session_id and sid not in r.forks:
                r.forks.append(sid)
    rows.sort(key=lambda r: (r.last_at or "", r.mtime), reverse=True)
    # the scope's problems last: reading the sessions' side files (subagents/) adds to them
    return ListResult(rows, list(scope.problems) + [p for p in problems if p not in scope.problems], total, read)
