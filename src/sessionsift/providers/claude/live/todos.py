"""The session's todo list as the transcript keeps it: the last TodoWrite call that took effect.

Claude Code's TodoWrite writes no side file in print mode (and the task tools' `tasks/<session>/`
directory is a different list, background.task_list): the list lives in the transcript, as the
`input.todos` of each TodoWrite tool_use, which replaces the whole list. The current list is the
last call whose tool_result is not an error (a call the client refused - "No such tool available:
TodoWrite" - changed nothing). Lines are found by the byte needle `TodoWrite` and only those are
parsed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from ..model import record as R
from ....read.lines import count_released, find_released, open_map, parse_line

NEEDLE = b"TodoWrite"
ERROR_KEY = b'"is_error"'
_ERROR_TRUE = re.compile(rb'"is_error"\s*:\s*true')
"""A line whose `is_error` key is not followed by `true` holds no error result (no parse)."""


@dataclass
class TodoState:
    path: str
    calls: int = 0
    """TodoWrite calls in the transcript."""
    failed: int = 0
    """Calls whose tool_result is an error (they changed nothing)."""
    line: int | None = None
    """Line of the call whose list is current (None: no call took effect)."""
    timestamp: str | None = None
    items: list[dict] = field(default_factory=list)
    """The current list: {content, status, activeForm} as written."""
    unreadable: str | None = None

    @property
    def open(self) -> list[dict]:
        return [t for t in self.items if t.get("status") != "completed"]

    @property
    def completed(self) -> int:
        return sum(1 for t in self.items if t.get("status") == "completed")


def _newlines(buf, a: int, b: int) -> int:
    return count_released(buf, a, b)


_TODO_CACHE: dict[str, tuple[tuple, TodoState]] = {}
"""The last TodoState read per transcript, reused while the file's stat identity (device, inode,
size, mtime_ns) stays (serve's live page assesses every session after each change: only the
changed transcripts are read again). Bounded: cleared past _TODO_MAX paths."""
_TODO_MAX = 1 << 16


def todo_state(path: Path) -> TodoState:
    """The session's todo list from its last successful TodoWrite call (kept per file identity)."""
    import copy
    import os

    try:
        s = os.stat(path)
    except OSError:
        return _todo_state(path)
    key = (s.st_dev, s.st_ino, s.st_size, s.st_mtime_ns)
    hit = _TODO_CACHE.get(str(path))
    if hit is not None and hit[0] == key:
        return copy.deepcopy(hit[1])
    st = _todo_state(path)  # the identity taken before the read: a write during it is read again
    if len(_TODO_CACHE) >= _TODO_MAX:
        _TODO_CACHE.clear()
    _TODO_CACHE[str(path)] = (key, copy.deepcopy(st))
    return st


def _todo_state(path: Path) -> TodoState:
    st = TodoState(str(path))
    try:
        m = open_map(path)
    except OSError as exc:
        st.unreadable = exc.strerror or str(exc)
        return st
    calls: list[tuple[int, str, str | None, list]] = []  # (line, id, timestamp, todos)
    errors: set[str] = set()
    with m:
        buf = m.buf
        i = find_released(buf, NEEDLE)
        last_pos, no = 0, 1
        while i >= 0:
            s = buf.rfind(b"\n", 0, i) + 1
            e = buf.find(b"\n", i)
            e = len(buf) if e < 0 else e
            no += _newlines(buf, last_pos, s)
            last_pos = s
            obj = parse_line(bytes(buf[s:e]))
            if obj is not None and obj.get("type") == "assistant":
                for b in R.tool_uses(obj):
                    inp = b.get("input") if isinstance(b.get("input"), dict) else {}
                    if b.get("name") == "TodoWrite" and isinstance(b.get("id"), str):
                        todos = inp.get("todos")
                        ts = obj.get("timestamp") if isinstance(obj.get("timestamp"), str) else None
                        calls.append((no, b["id"], ts, todos if isinstance(todos, list) else []))
            i = find_released(buf, NEEDLE, e)
        ids = {c[1] for c in calls}
        if ids:
            # results name the call by id only: an error result carries the `is_error` key, so one
            # pass over the lines holding that key finds them all (not one pass per call id)
            j = find_released(buf, ERROR_KEY)
            while j >= 0:
                s = buf.rfind(b"\n", 0, j) + 1
                e = buf.find(b"\n", j)
                e = len(buf) if e < 0 else e
                raw = bytes(buf[s:e])
                obj = parse_line(raw) if _ERROR_TRUE.search(raw) else None
                if obj is not None and obj.get("type") == "user":
                    for b in R.tool_results(obj):
                        cid = b.get("tool_use_id")
                        if b.get("is_error") is True and isinstance(cid, str) and cid in ids:
                            errors.add(cid)
                j = find_released(buf, ERROR_KEY, e)
    st.calls = len(calls)
    st.failed = sum(1 for c in calls if c[1] in errors)
    for no, cid, ts, todos in reversed(calls):
        if cid not in errors:
            st.line, st.timestamp = no, ts
            st.items = [t for t in todos if isinstance(t, dict)]
            break
    return st
