"""`export markdown|html` written as the session is read: memory bounded by what waits for a
tool result, not by the transcript (<= 300 MB whatever the corpus size).

The output is byte for byte what ``render(build(...))`` gives (markdown.py / html.py; held equal
by tests/test_export_stream.py on every real-client corpus), but two things in it are known only
later than the text around them: a tool call's result (folded into the call; it comes after the
call, possibly much later, possibly never) and the subagent lanes a call spawned (nested under
it; their records come after the main lane's), and the top of the page (what the reading could not
take in, the title) is known only at the end. So the body goes to an anonymous spool file as it is
rendered, each lane as a list of segments -- byte ranges of the spool, a slot for a result that
had not come when its call was written, a slot for the lanes under a call -- and the file is then
put together: the top, the main lane (slots filled in, nested lanes copied in where they go),
the other lanes, the children.

A lane's blocks wait (in memory) only while the first of them is a tool call whose result may
still come; past ``MAX_WAIT`` characters waiting, the call is written with a slot instead.
"""

from __future__ import annotations

import tempfile
from collections import deque
from pathlib import Path
from typing import Callable

from ..providers.base import Provider, SessionRef
from . import keep
from .document import Block, Document, Lane, blocks

MAX_WAIT = 4 << 20
"""Characters of text a lane may hold back waiting for one tool result."""
_COPY = 1 << 20


class _Range:
    __slots__ = ("off", "n")

    def __init__(self, off: int, n: int) -> None:
        self.off, self.n = off, n


class _Slot:
    """Where a result goes that had not come when its call was written."""

    __slots__ = ("rng",)

    def __init__(self) -> None:
        self.rng: _Range | None = None


class _LaneOut:
    __slots__ = ("name", "segs", "turn", "items", "wait", "held", "title")

    def __init__(self, name: str) -> None:
        self.name = name
        self.segs: list = []
        """_Range, _Slot, or a list of lane names (the lanes nested under a call, filled at the end)."""
        self.turn: object = _LaneOut
        self.items = 0
        self.wait: deque = deque()
        """Items not written yet: turn headings (str) and blocks."""
        self.held = 0
        self.title: str | None = None


class _Writer:
    def __init__(self, mod, spool, spawners: set[str], doc: Document | None = None) -> None:
        self.mod, self.spool, self.spawners = mod, spool, spawners
        self.doc = doc
        self.pos = 0
        self.lanes: dict[str, _LaneOut] = {}
        self.calls: dict[str, object] = {}
        """call id -> the tool Block its result would fold into, or its _Slot once written
        (only calls still waiting for a result)."""
        self.spawned_by_call: dict[str, list[str]] = {}
        """call id -> the lanes list of the last tool Block with that id (where its subagent
        lanes nest)."""

    def _put(self, lo: _LaneOut, s: str) -> None:
        if not s:
            return
        data = s.encode("utf-8")
        off = self.pos
        self.spool.write(data)
        self.pos += len(data)
        last = lo.segs[-1] if lo.segs else None
        if type(last) is _Range and last.off + last.n == off:
            last.n += len(data)
        else:
            lo.segs.append(_Range(off, len(data)))

    def _waiting(self, b: Block) -> bool:
        cid = b.record.call_id
        return b.kind == "tool" and bool(cid) and self.calls.get(cid) is b

    def _item(self, lo: _LaneOut) -> None:
        if lo.items:
            self._put(lo, self.mod.SEP)
        lo.items += 1

    def _write(self, lo: _LaneOut, b: Block, final: bool) -> None:
        m = self.mod
        self._item(lo)
        cid = b.record.call_id
        slot = not final and self._waiting(b)
        spawner = b.kind == "tool" and bool(cid) and cid in self.spawners
        if not (slot or spawner):
            self._put(lo, m.block(b))
            return
        self._put(lo, m.tool_open(b))
        if b.result is not None:
            self._put(lo, m.result_part(b.result))
        elif slot:
            s = _Slot()
            self.calls[cid] = s
            lo.segs.append(s)
        self._put(lo, m.TOOL_MID)
        if spawner:
            lo.segs.append(b.lanes)
        self._put(lo, m.TOOL_CLOSE)

    def _flush(self, lo: _LaneOut, final: bool = False) -> None:
        w = lo.wait
        while w:
            x = w[0]
            if type(x) is str:
                self._item(lo)
                self._put(lo, x)
            else:
                if not final and lo.held <= MAX_WAIT and self._waiting(x):
                    return
                self._write(lo, x, final)
                lo.held -= _size(x)
            w.popleft()

    def add(self, b: Block) -> None:
        """One block in read order: what build() does with it, written out as soon as nothing
        before it in its lane waits for a result."""
        r = b.record
        lo = self.lanes.get(r.lane)
        if lo is None:
            lo = self.lanes[r.lane] = _LaneOut(r.lane)
        if lo.turn is _LaneOut or lo.turn != r.turn:
            if lo.turn is not _LaneOut:
                self._foot(lo)
            lo.turn = r.turn
            lo.wait.append(self.mod.turn_head(r.lane, r.turn, self._stats(r.lane, r.turn)))
        cid = r.call_id
        if b.kind == "result" and cid:
            # folded into the last call of that id if it has none yet (a second result of the
            # id is a block of its own: the entry goes when the first folds in)
            target = self.calls.pop(cid, None)
            if type(target) is _Slot:
                data = self.mod.result_part(b).encode("utf-8")
                target.rng = _Range(self.pos, len(data))
                self.spool.write(data)
                self.pos += len(data)
                return
            if target is not None:
                target.result = b
                owner = self.lanes[target.record.lane]
                owner.held += _size(b)
                self._flush(owner)
                return
        if b.kind == "tool" and cid:
            self.calls[cid] = b
            if cid in self.spawners:
                self.spawned_by_call[cid] = b.lanes
        if b.kind == "prompt" and lo.title is None and b.text.strip():
            lo.title = b.text.strip().split("\n", 1)[0][:100]
        lo.wait.append(b)
        lo.held += _size(b)
        self._flush(lo)

    def _stats(self, lane: str, turn):
        return None if self.doc is None else self.doc.turns.get((lane, turn))

    def _foot(self, lo: _LaneOut) -> None:
        """What the turn that just ended took (written after its blocks, as the oracle does)."""
        foot = self.mod.turn_foot(lo.name, lo.turn, self._stats(lo.name, lo.turn))
        if foot:
            lo.wait.append(foot)

    def finish(self) -> None:
        for lo in self.lanes.values():
            if lo.turn is not _LaneOut:
                self._foot(lo)
            self._flush(lo, final=True)


def _size(b: Block) -> int:
    return len(b.text) + sum(len(d) for _, d in b.images) + (_size(b.result) if b.result is not None else 0)


def write_document(mod, prov: Provider, ref: SessionRef, dest: Path, *,
                   redact: Callable[[str], tuple[str, int]] | None = None,
                   children: list[tuple[SessionRef, str]] | None = None, secrets: int = 0,
                   meta: bool = False) -> tuple[Document, str]:
    """Read the session and write its document (``mod``: export.markdown or export.html) to
    ``dest`` atomically. Returns the Document's counts (its lanes without turns) and the title."""
    doc = Document(ref)
    spawned = prov.spawned_lanes(ref)
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryFile(dir=dest.parent) as spool:
        w = _Writer(mod, spool, set(spawned.values()), doc)
        for b in blocks(prov, ref, doc, redact=redact, meta=meta):
            w.add(b)
        w.finish()
        nested: set[str] = set()
        for name in w.lanes:
            doc.lanes[name] = Lane(name, spawned_by=spawned.get(name))
            sb = spawned.get(name)
            if sb and sb in w.spawned_by_call and name != "main":
                w.spawned_by_call[sb].append(name)
                nested.add(name)
        title = ref.title or next((lo.title for lo in w.lanes.values() if lo.title is not None), ref.session_id)

        def put(f) -> None:
            busy: set[str] = set()

            def copy(rng: _Range) -> None:
                spool.seek(rng.off)
                left = rng.n
                while left:
                    chunk = spool.read(min(left, _COPY))
                    if not chunk:
                        raise OSError("the export's spool file ended early")
                    f.write(chunk)
                    left -= len(chunk)

            def lane(name: str) -> None:
                if name in busy:  # a lane nested under its own call: the whole-document path recursed
                    raise RecursionError(f"lane {name} is nested under itself")
                busy.add(name)
                for s in w.lanes[name].segs:
                    if type(s) is _Range:
                        copy(s)
                    elif type(s) is _Slot:
                        if s.rng is not None:
                            copy(s.rng)
                    else:
                        for n in s:
                            f.write(mod.sub_open(n).encode("utf-8"))
                            lane(n)
                            f.write(mod.SUB_CLOSE.encode("utf-8"))
                busy.discard(name)

            f.write(mod.top(doc, title, secrets).encode("utf-8"))
            if "main" in w.lanes:
                f.write(mod.TOP_SEP.encode("utf-8"))
                lane("main")
            for name in w.lanes:
                if name != "main" and name not in nested:
                    f.write((mod.TOP_SEP + mod.lane_open(name)).encode("utf-8"))
                    lane(name)
                    f.write(mod.LANE_CLOSE.encode("utf-8"))
            if children:
                f.write((mod.TOP_SEP + mod.children_part(children)).encode("utf-8"))
            f.write(mod.BOTTOM.encode("utf-8"))

        keep.write_atomic(dest, put, binary=True)
    return doc, title
