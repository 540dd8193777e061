"""Each lane's file events as small facts the index keeps, so a warm `files` reads no record and
a warm `recover --file X` reads only the records of the events that name X.

`encode(ev)` takes, from the events read off the records (events.py `_events_of`), what `files`
and `recover` read of each event that does not name the file asked about: per call its tool, id,
line, instants, turn, cwd, result line and status, survival, resolved and raw path, its touch
(op, detail: `Call.touch`), the staleReadFileStateHint paths (`Call.hint`) and the shell
analysis (operands with their paths, ops, verbs and resolutions, markers, the read anchor, the
parse error and, then only, the command's first 200 characters - heredoc bodies are not kept:
their presence is); per attachment its kind, line, instant, turn, file name, cwd and slug; every
file-history backup whole; the snapshot lines and the lane's first cwd. `light(...)` makes the
events back from them (`Call.light`, `Attach.light`), `hydrate` reads the records of the light
events a question needs whole (recover: the ones that name its file) by offset.

The facts are a cache of rules (this module, events.py, providers/claude/model/record.py, read/lines.py
and the shell grammar's own rules: files/shell.py and tree-sitter's versions, ``grammar.rules()``):
they are kept with `rules(grammar)`, a digest of those sources and versions, and facts kept under
other rules are derived again, never used (providers/claude/cache/filesummary.py keeps them per transcript, with
the identity of the file they were read from). The shell analysis is kept and made back by the
grammar itself (``grammar.encode``/``grammar.decode``): this package never imports it.
"""

from __future__ import annotations

import os
from types import MappingProxyType

from ....index.store import abspath
from .events import Attach, Backup, Call, LaneEvents, LaneFacts

_RULES: dict = {}


def rules(grammar) -> str:
    """The digest the facts are kept under: the sources that derive them and the shell grammar's
    own rules (a change to either derives them again)."""
    g = grammar.rules() if grammar is not None else "no grammar"
    got = _RULES.get(g)
    if got is None:
        import hashlib

        from ..model import record
        from ....read import lines

        h = hashlib.blake2b(digest_size=12)
        here = os.path.dirname(os.path.abspath(__file__))
        for p in (os.path.join(here, "facts.py"), os.path.join(here, "events.py"), record.__file__, lines.__file__):
            try:
                with open(p, "rb") as f:
                    h.update(f.read())
            except OSError:
                from .... import __version__

                h.update(f"unreadable {p} {__version__}".encode())
        h.update(g.encode())
        got = _RULES[g] = "facts.2:" + h.hexdigest()
    return got


# -- encode ---------------------------------------------------------------------------------------


_SAME: dict = {}
"""One object per equal value among the strings and tuples `encode` keeps (paths, cwds, tools,
shell analyses repeat across calls and lanes): marshal then writes each once and refers to it."""


def _same(x):
    if x is None:
        return None
    if len(_SAME) >= 1 << 18:
        _SAME.clear()
    return _SAME.setdefault(x, x)


def encode(ev: LaneEvents) -> list:
    """The facts of a lane's events (marshal-able; `light` inverts it)."""
    calls = []
    o = _same
    g = ev.grammar
    enc = g.encode if g is not None else (lambda sh: None)
    for c in ev.calls:
        hint = c.hint
        calls.append((o(c.tool), c.tool_use_id, c.line, c.timestamp, c.turn, o(c.cwd), c.result_line, c.result_ts,
                      c.is_error, o(c.survival), o(c.path), o(c.raw_path) if type(c.raw_path) is str else c.raw_path,
                      o(c.touch), None if not hint[0] and not hint[1] else (list(hint[0]), hint[1]),
                      o(enc(c.shell)) if c.shell is not None else None))
    atts = [(o(a.kind), a.line, a.timestamp, a.turn, o(fn) if type(fn := a.payload.get("filename")) is str else fn,
             "filename" in a.payload, o(a.cwd), o(a.slug)) for a in ev.attachments]
    bks = [(b.line, o(b.kind), b.timestamp, o(b.path), o(b.tracked_as), b.version, b.backup_file, b.backup_time)
           for b in ev.backups]
    return [calls, atts, bks, list(ev.snapshot_lines), o(ev.first_cwd)]


# -- light events ---------------------------------------------------------------------------------

_NO_HINT: tuple = ([], False)
_NO_INPUT = MappingProxyType({})
"""A light call's `input` (not read: its facts are kept; read-only, shared)."""


def light(lane, facts: list, read: list, load, grammar=None) -> LaneEvents:
    """A lane's events from its facts (`encode`); `read` the lane's reading counts (the ``fev``
    section's ``read``), `load` gives every record's (line, turn, instant) when asked for
    (`LaneFacts`); `grammar` makes each kept shell analysis back (``grammar.decode``)."""
    from ..cache import codec

    calls, atts, bks, snaps, first_cwd = facts
    ev = LaneEvents(lane, grammar=grammar)
    dec = grammar.decode if grammar is not None else (lambda o: None)
    ev.first_cwd = first_cwd
    ev.index = LaneFacts(stats=codec.read_from(read), load=load)
    ev.calls = [Call(lane, tool, tid, line, ts, turn, cwd, _NO_INPUT, rline, rts, err, None, None,
                     dec(sh) if sh is not None else None, surv, None, True, path, raw, touch,
                     _NO_HINT if hint is None else hint)
                for (tool, tid, line, ts, turn, cwd, rline, rts, err, surv, path, raw, touch, hint, sh) in calls]
    ev.attachments = [Attach(lane, kind, line, ts, turn, {"filename": fn} if has else {}, cwd, slug, light=True)
                      for kind, line, ts, turn, fn, has, cwd, slug in atts]
    ev.backups = [Backup(lane, *b) for b in bks]
    ev.snapshot_lines = [tuple(x) for x in snaps]
    return ev


def from_summary(lane, root, rules: str, grammar=None) -> LaneEvents | None:
    """A lane's light events from the data root's summary (providers/claude/cache/filesummary.py) while a stat of
    the transcript matches its entry and its facts were kept under `rules`; else None."""
    p = os.fspath(lane.path)
    ab = abspath(p)
    try:
        st = os.stat(p)
    except OSError:
        return None
    e = root.get(ab, st, p)
    if e is None:
        return None
    kept = root.facts(ab, rules)
    if kept is None:
        return None
    try:
        ev = light(lane, kept, root.read(ab), _facts_loader(lane, st), grammar)
    except (KeyError, TypeError, ValueError):
        return None
    ev.source = Source(lambda: root.fev(ab), [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns])
    return ev


def _facts_loader(lane, st):
    def load():
        from ....index import store
        from .events import _facts_of

        return _facts_of(lane, store.identity_of(st, st.st_size, ()))
    return load


# -- hydrate ----------------------------------------------------------------------------------------


class Source:
    """Where a light lane's records are: `fev()` gives its ``fev`` section (offsets of the records
    that carry file events; None when it is not at hand), `ident` the identity of the transcript
    (device, inode, size, mtime, ctime) the facts were read from."""

    __slots__ = ("fev", "ident")

    def __init__(self, fev, ident: list):
        self.fev, self.ident = fev, ident


def hydrate(le: LaneEvents, wanted: list) -> dict[int, object]:
    """The whole events (records read by offset and parsed, as events.py reads them) for the
    light events `wanted` of lane `le` (calls and attachments); id(light) -> whole. An event
    whose records cannot be read as the facts say (the transcript changed meanwhile) comes from
    a reading of the whole lane."""
    from bisect import bisect_left, bisect_right

    from ..cache.fileslots import FileSlots
    from ..cache.turns import SURVIVAL_NAME
    from ....read.lines import parse_line
    from .events import _Ent, lane_events

    out: dict[int, object] = {}
    src: Source | None = getattr(le, "source", None)
    fs = None
    if src is not None:
        try:
            o = src.fev()
            fs = FileSlots(o) if o is not None else None
        except (KeyError, TypeError, ValueError):
            fs = None
    todo = list(wanted)
    if fs is not None:
        try:
            st = os.stat(le.lane.path)
            same = [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns] == list(src.ident)
        except OSError:
            same = False
        if same:
            todo = []
            kinds = fs.kinds
            cw_slots, cw_vals = fs.cw_slots, fs.cw_vals

            def cwd_at(e) -> str | None:
                j = bisect_right(cw_slots, e.slot) - 1
                return cw_vals[j] if j >= 0 else None

            fd = os.open(le.lane.path, os.O_RDONLY)
            try:
                def pair(no: int):
                    j = bisect_left(fs.no, no)
                    if j >= len(fs.no) or fs.no[j] != no:
                        return None
                    obj = parse_line(os.pread(fd, fs.ln[j], fs.off[j])) or {}
                    t, sub, att = kinds[fs.kind[j]]
                    turn = fs.turn[j]
                    return _Ent(fs.slot[j], fs.no[j], t, sub, att, fs.ts[j], None if turn < 0 else turn,
                                SURVIVAL_NAME[fs.surv[j]], fs.uses[j], fs.res[j]), obj

                for x in wanted:
                    got = _one(le, x, pair, cwd_at)
                    if got is None:
                        todo.append(x)
                    else:
                        out[id(x)] = got
            finally:
                os.close(fd)
    if todo:  # the transcript is not the one the facts were read from: what it holds now
        whole = lane_events(le.lane, keep_view=False, grammar=le.grammar)
        for x in todo:
            got = _match(whole, x, le, check=False)
            if got is not None:
                out[id(x)] = got
    return out


def _one(le: LaneEvents, x, pair, cwd_at):
    """The whole event of light `x`, from its own records; None when they do not give it."""
    from .events import _events_of

    scratch = LaneEvents(le.lane, grammar=le.grammar)
    if isinstance(x, Call):
        nos = [x.line] + ([x.result_line] if x.result_line is not None and x.result_line != x.line else [])
    else:
        nos = [x.line]
    pairs = []
    for no in nos:
        p = pair(no)
        if p is None:
            return None
        pairs.append(p)
    _events_of(scratch, pairs, cwd_at)
    return _match(scratch, x, le)


def _match(ev: LaneEvents, x, within: LaneEvents, check: bool = True):
    """The event of `ev` that light `x` (an event of `within`) stands for: same line and id, the
    same place among the events of that line, and (`check`) the same facts; else None."""
    if isinstance(x, Call):
        k = _ordinal(within.calls, x, lambda c: (c.line, c.tool_use_id))
        cands = [c for c in ev.calls if c.line == x.line and c.tool_use_id == x.tool_use_id]
        if k >= len(cands):
            return None
        c = cands[k]
        if check and (c.tool, c.path, c.result_line, c.is_error, c.result_ts, c.cwd, c.turn, c.survival) != (
                x.tool, x.path, x.result_line, x.is_error, x.result_ts, x.cwd, x.turn, x.survival):
            return None
        c.copy_of = x.copy_of
        return c
    cands = [a for a in ev.attachments if a.line == x.line and a.kind == x.kind]
    if not cands or (check and (cands[0].payload.get("filename"), cands[0].turn, cands[0].cwd)
                     != (x.payload.get("filename"), x.turn, x.cwd)):
        return None
    a = cands[0]
    a.copy_of = x.copy_of
    return a


def _ordinal(xs: list, x, key) -> int:
    k, n = key(x), 0
    for y in xs:
        if y is x:
            return n
        if key(y) == k:
            n += 1
    return n
