"""Claude Code's lane scan (the `search` capability's deep implementation), per transcript:

1. map the file; pick candidate lines with byte needles (search/needles.py, shape.py) - necessity only;
2. parse candidate lines only; classify; apply the label selection, gating and time window;
3. match the pattern (RE2, linear time) against `record_text` - what the transcript holds,
   never a rendered label (NAR-010);
4. for transcripts with hits only, build a LaneIndex so turn numbers, survival and draft
   relabelling (`user.unsent`) agree with `show`.
"""

from __future__ import annotations

import os
import re
import time
from collections import Counter
from pathlib import Path
from typing import Iterator

from ....read.lines import Line, ReadStats, Releaser, Whole, count_released, open_map, open_scan, parse_numbered
from ....timefmt import parse_ts
from ....read import needles as N
from ..discover import Lane
from ..model import record as R
from ..model.known import KNOWN_TYPES
from . import shape as PF
from .types import Hit, LaneOutcome, Opener
from .plan import HOOK_CONTEXT, PERSISTED, Plan, in_window, passes
from ....read.pattern import compiled

_SAVED_TO = re.compile(r"Full output saved to: *(\S[^\n<]*?)\s*(?:\n|<|$)")
_PERSISTED_BLOCK = re.compile(r"<persisted-output>.*?</persisted-output>", re.S)


def _resolve_persisted(obj: dict, text: str, lane: Lane, no: int, problems: list[dict]) -> tuple[str, list[str]]:
    if "<persisted-output>" not in text and "Full output saved to:" not in text:
        return text, []
    paths: list[str] = []
    tur = obj.get("toolUseResult")
    if isinstance(tur, dict) and isinstance(tur.get("persistedOutputPath"), str):
        paths.append(tur["persistedOutputPath"])
    else:
        paths.extend(m.group(1).strip() for m in _SAVED_TO.finditer(text))
    used: list[str] = []
    from ..paths import resolve_recorded

    for ps in paths:
        # a corpus moved or copied elsewhere: re-rooted under the current data root, else the same
        # name in this session's sidecar tool-results/ (providers/claude/paths.py)
        parts = lane.path.parts
        i = len(parts) - 1 - parts[::-1].index("projects") if "projects" in parts else len(parts) - 3
        home, proj = Path(*parts[:i]), Path(*parts[:i + 2])
        r = resolve_recorded(home, ps, also=[proj / lane.session_id / "tool-results", proj / "tool-results"])
        body = None
        err = None
        try:
            body = Path(r.checked).read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            err = exc.strerror or str(exc)
        if body is None:
            problems.append({"path": str(lane.path), "line": no, "persisted_path": ps, "checked": r.checked,
                             "why": (err or "unreadable") + (f"; {r.note}" if r.note else "")})
            continue
        used.append(r.checked)
        if _PERSISTED_BLOCK.search(text):
            text = _PERSISTED_BLOCK.sub(lambda _m: body, text, count=1)
        else:
            text = text + "\n" + body
    return text, used


_CHUNK = 1 << 20


def _count_nl(buf, a: int, b: int) -> int:
    """Newlines in buf[a:b] (mmap has no count(): count cache-sized copies, ~1.8 GB/s)."""
    return count_released(buf, a, b)


def lines_in(buf) -> int:
    size = len(buf)
    n = _count_nl(buf, 0, size)
    if size and buf[size - 1 : size] != b"\n":
        n += 1
    return n


def _spans(p: Plan, buf) -> Iterator[tuple[int, int]]:
    size = len(buf)
    if p.needles is not None:
        lab = [n.encode() for n in p.label_needles] if p.label_needles is not None else None
        for s, e in N.candidate_spans(buf, p.needles, p.needles_ci):
            if lab is not None:
                raw = buf[s:e]
                if not any(n in raw for n in lab):
                    continue
            yield s, e
        return
    if p.label_needles is not None:
        if not p.label_needles:
            return
        yield from N.candidate_spans(buf, p.label_needles, False)
        return
    pos = 0
    find = buf.find
    while pos < size:
        e = find(b"\n", pos)
        if e < 0:
            e = size
        yield pos, e
        pos = e + 1


def scan_lane(p: Plan, pos: int, lane: Lane, cap: int | None = None) -> LaneOutcome:
    """Scan one transcript. `cap` bounds the hits kept (per-session --max-count remainder)."""
    why: list[str] = []
    if p.use_index and cap is None:
        from ..cache import search as IS

        o = IS.census_lane(p, pos, lane, why)
        if o is not None:
            return o
    o = _scan_lane(p, pos, lane, cap)
    if why:
        o.index_why = why[0]
    return o


def _scan_lane(p: Plan, pos: int, lane: Lane, cap: int | None = None) -> LaneOutcome:
    q = p.query
    out = LaneOutcome(pos=pos)
    rx = compiled(p.regex) if p.regex is not None else None
    if p.needles is not None:
        # most files of a store do not hold a pattern's needle: read into one buffer and look
        # (no mapping, no line framing); only files that hold it are scanned line by line
        try:
            held, size, nl = N.file_holds(lane.path, p.needles, p.needles_ci, q.count_lines)
        except OSError as exc:
            out.unreadable = exc.strerror or str(exc)
            return out
        if not held:
            out.bytes = size
            out.lines = nl
            if p.count_left_out and PERSISTED in p.left_out_kinds and not (
                    lane.kind == "main" and os.fspath(lane.path) in p.no_sidecar) and _saved_matching(
                    p, rx, _tool_results_dir(lane)):
                with open_map(lane.path) as m:
                    _count_persisted(p, rx, lane, m.buf, out)
            return out
    stats = ReadStats()
    want_text = rx is not None or p.listing
    cb = q.count_by
    need_names = cb in ("tool", "pairing")
    need_line_no = p.listing or q.sessions_only
    names: dict[str, str] = {}
    user_msg_parents: dict[str, int] = {}
    full_user_view = p.needles is None
    hits: list[Hit] = []
    um_hits: list[tuple[int, object]] = []  # (offset, parentUuid) of each user.message hit
    gate = p.type_gate
    shape = PF.line_shape
    skip_carriers = p.skip_carriers
    fast_asst = p.fast_assistant
    fast_carrier = p.fast_carrier
    shapes = gate is not None or skip_carriers or fast_asst is not None or fast_carrier
    ahead = PF.ASSISTANT_HEAD.match
    one_record = PF.one_record
    watch_types = p.watch_types
    from ....read.lines import parse_line
    try:
        m = open_scan(lane.path)
    except OSError as exc:
        out.unreadable = exc.strerror or str(exc)
        return out
    with m:
        buf = m.buf
        size = len(buf)
        out.bytes = size
        out.lines = lines_in(buf) if q.count_lines else None
        untermed = bool(size) and buf[size - 1 : size] != b"\n"
        last_pos, last_no = 0, 1
        rel = Releaser(buf)
        for s, e in _spans(p, buf):
            rel.passed(s)  # a large mapping: let the pages scanned past go (bounded RSS)
            # the bytes decide where they can (a possibly torn final line is always parsed)
            ht = None
            if shapes and not (untermed and e == size):
                ht, is_carrier, carrier_tid = shape(buf, s, e)
                if is_carrier and skip_carriers:
                    out.shape_skipped += 1
                    continue
                if gate is not None and ht is not None and ht not in gate:
                    if ht not in KNOWN_TYPES:
                        out.unknown_type_lines[ht] = out.unknown_type_lines.get(ht, 0) + 1
                    out.shape_skipped += 1
                    if ht in watch_types:  # a left-out kind holding the needle: count, never match
                        gobj = parse_line(bytes(buf[s:e]))
                        if gobj is not None:
                            out.parsed += 1
                            _count_left_out(p, rx, gobj, R.classify(gobj), out)
                    continue
            raw = buf[s:e]
            if untermed and e == size:
                from ....read.lines import is_complete

                if not is_complete(raw):
                    continue  # torn tail: a write in progress, not a record yet
            elif ht == "assistant":
                if fast_asst is not None and (am := ahead(buf, s, e)) is not None and one_record(raw):
                    h = _fast_assistant(p, am, raw, pos, s, e, names if need_names else None)
                    if h is not None:
                        out.shape_counted += 1
                        hits.append(h)
                        continue
            elif ht == "user" and fast_carrier and carrier_tid is not None and raw.count(PF.TOOL_USE_ID) == 1 \
                    and one_record(raw):
                out.shape_counted += 1
                hits.append(Hit(lane_pos=pos, line=0, offset=s, length=e - s, uuid=None, timestamp=None,
                                labels=[], tool_names=[carrier_tid], text="", span=None, type="user"))
                continue
            obj = parse_numbered(Line(0, s, raw), lane.path, stats)
            if obj is None:
                continue
            out.parsed += 1
            labels = R.classify(obj)
            t = obj.get("type")
            if not isinstance(t, str) or t not in KNOWN_TYPES:
                k = t if isinstance(t, str) else "(no type)"
                out.unknown_type_lines[k] = out.unknown_type_lines.get(k, 0) + 1
            if need_names and t == "assistant":
                for b in R.tool_uses(obj):
                    if b.get("id"):
                        names[str(b["id"])] = str(b.get("name"))
            if labels[:1] == ["user.message"] and t == "user":
                par = obj.get("parentUuid")
                if isinstance(par, str):
                    user_msg_parents[par] = user_msg_parents.get(par, 0) + 1
            if not passes(p, obj, labels):
                if watch_types:
                    _count_left_out(p, rx, obj, labels, out)
                continue
            ts = obj.get("timestamp") if isinstance(obj.get("timestamp"), str) else None
            win = in_window(p, ts)
            if win is None:
                out.undated_skipped += 1
                continue
            if not win:
                continue
            text = ""
            span = None
            used: list[str] = []
            no = 0
            if want_text:
                text = R.record_text(obj)
                if q.resolve_persisted and t == "user":
                    no = last_no + _count_nl(buf, last_pos, s)
                    last_pos, last_no = s, no
                    text, used = _resolve_persisted(obj, text, lane, no, out.persisted_problems)
            if rx is not None:
                mt = rx.search(text)
                if mt is None:
                    continue
                span = mt.span()
            if need_line_no and not no:
                # line numbers only for hits that are shown; hits come in file order, so the
                # newline count runs once up to the last hit
                no = last_no + _count_nl(buf, last_pos, s)
                last_pos, last_no = s, no
            msg = R.get_message(obj) or {}
            if t == "user" and labels[:1] == ["user.message"]:
                um_hits.append((s, obj.get("parentUuid")))
            hits.append(Hit(
                lane_pos=pos, line=no, offset=s, length=e - s,
                uuid=obj.get("uuid") if isinstance(obj.get("uuid"), str) else None,
                timestamp=ts, labels=labels,
                tool_names=R.tool_names(obj) if t == "assistant" else
                [str(b.get("tool_use_id")) for b in R.tool_results(obj)],
                text=text if p.listing else "", span=span, type=t if isinstance(t, str) else None,
                attachment=R.attachment_kind(obj),
                model=msg.get("model") if isinstance(msg.get("model"), str) else None,
                persisted=used,
            ))
            if cap is not None and len(hits) >= cap and "user.message" not in p.record_allowed:
                break
        if p.count_left_out and PERSISTED in p.left_out_kinds:
            _count_persisted(p, rx, lane, buf, out)
        # a zero-filled run (a crash's NULs) in a file with hits, looked for in the bytes read
        # whole (memchr); a mapped file is read again in chunks only if its hits get no chain
        nul = None if not hits or not isinstance(m, Whole) else buf.find(b"\x00") >= 0
        # a needle scan parsed only candidate lines, so it cannot tell a draft (user.unsent) from
        # the bytes it read -- but a draft has a later user sibling of the same parent, whose line
        # holds the parent's uuid: where no other line holds it as a user record's parent, no hit
        # is a draft and a count needs no lane view
        no_draft = DRAFTS_FROM_BYTES and bool(um_hits) and not full_user_view and not p.listing and "user.message" in p.allowed \
            and _no_sibling_in_bytes(buf, um_hits)
    out.malformed = len(stats.malformed_lines)
    # relabelling and turns need the lane view; build it only for lanes with hits
    # (without a needle every user record was read: no parent with two user.message children means
    # no draft - unless user.message itself is not selected (`-t user.unsent`): its hits go)
    relabel = any(h.labels[:1] == ["user.message"] for h in hits) and not no_draft and (
        not full_user_view or any(v > 1 for v in user_msg_parents.values()) or "user.message" not in p.allowed)
    if hits and (relabel or (p.listing and q.context)):
        if not (p.index_relabel and not p.listing and _relabel_from_index(p, lane, hits, out)):
            _apply_index(p, lane, hits, out)
        out.indexed = True
    elif hits:
        # no chain was built for these hits: a zero-filled run in the file (a crash's NULs, whichever
        # lines the scan parsed: the answer must not depend on the path) means no bridge was
        # looked for across it
        if stats.zero_filled_lines or nul:
            out.unchained = stats.zero_filled_lines or 1
        elif nul is None:
            try:
                out.unchained = int(_holds_nul(lane.path))
            except OSError as exc:
                out.unchained = None
                out.reread_failed = f"read again for zero-filled lines: {exc.strerror or exc}"
    # tool names of result carriers (stored provisionally as ids)
    for h in hits:
        if h.type == "user" and not out.indexed:
            ids = h.tool_names
            h.tool_names = []
            missing = [i for i in ids if i not in names]
            if missing and (need_names or p.listing) and not out.indexed and out.reread_failed is None:
                try:
                    names.update(_tool_names_by_id(lane))
                except OSError as exc:
                    out.reread_failed = f"read again for tool names: {exc.strerror or exc}"
            for i in ids:
                nm = names.get(i)
                if nm is not None and nm not in h.tool_names:
                    h.tool_names.append(nm)
    skip = copies_of(p, lane) if hits else None
    if skip:
        kept = [h for h in hits if h.offset not in skip]
        out.copies_skipped = len(hits) - len(kept)
        hits = kept
    if cap is not None:
        hits = hits[:cap]
    out.hit_count = len(hits)
    if cb is not None and cb != "total":
        try:
            out.counts = _count(p, lane, hits, names)
        except OSError as exc:
            # the pairing of calls with results needs a second read: unknown, not "unreturned"
            out.reread_failed = f"read again for tool results: {exc.strerror or exc}"
            out.counts = _count_unpaired(p, lane, hits)
    if p.listing or q.sessions_only:
        out.hits = hits
    return out


DRAFTS_FROM_BYTES = True
"""A counted needle scan rules drafts out from the bytes of the lane (`_no_sibling_in_bytes`)
before it builds the lane view for its user.message hits (off: the lane view decides every time)."""


def _no_sibling_in_bytes(buf, um_hits: list[tuple[int, object]]) -> bool:
    """True when no user.message hit (offset, parentUuid as written) can be a draft: no line of
    `buf` but the hit's own holds its parent uuid as a user record's ``parentUuid`` (every
    line holding that uuid's bytes is parsed to see; one that does not parse counts as a sibling).
    A hit with no parent is never a draft candidate (LaneIndex.build's rule)."""
    from ....read.lines import parse_line

    size = len(buf)
    pars = [par for _off, par in um_hits if par is not None]
    if len(set(pars)) != len(pars):
        return False  # two hits of one parent: siblings
    for own, par in um_hits:
        if par is None:
            continue
        if not isinstance(par, str) or not par:
            return False
        nd = par.encode()
        i = buf.find(nd)
        while i >= 0:
            s = buf.rfind(b"\n", 0, i) + 1
            e = buf.find(b"\n", i)
            e = size if e < 0 else e
            if s != own:  # every other line holding it, another hit's too
                o = parse_line(bytes(buf[s:e]))
                if o is None or (o.get("type") == "user" and o.get("parentUuid") == par):
                    return False
            i = buf.find(nd, e)
    return True


def _relabel_from_index(p: Plan, lane: Lane, hits: list[Hit], out: LaneOutcome) -> bool:
    """Final labels of hits that are only counted, from the lane's index (built now when it has
    none: one streaming pass, as cheap as the lane view it replaces, and kept for next time)."""
    from ..cache import lanes as IL, search as IS

    if IS.relabel_hits(p, lane, hits):
        out.from_index = "index"
        return True
    try:
        _ls, how = IL.lane_stats(lane)
    except OSError:
        return False
    if how.how != "scanned" and IS.relabel_hits(p, lane, hits):
        out.from_index = how.how
        return True
    return False


def related_dirs(p: Plan, d: str) -> list[str]:
    """The project directories in scope a fork of a session of `d` (or its parent) can be in: `d`
    and those of the cwds below or above its own (a fork run from a subdirectory is written
    under that subdirectory's project dir; encoded names extend the parent's with `-<name>`)."""
    head, name = os.path.split(d)
    out = []
    for dd in p.scope_dirs:
        h2, n2 = os.path.split(dd)
        if h2 == head and (n2 == name or n2.startswith(name + "-") or name.startswith(n2 + "-")):
            out.append(dd)
    return out or [d]


def copies_of(p: Plan, lane: Lane) -> frozenset[int] | None:
    """Byte offsets of the lane's records that copy an in-scope parent's (a fork's), or None; the
    forks among the sessions of the lane's project directory and its related ones (`related_dirs`)
    are found on first need (the heads of their sessions)."""
    if not p.copies_known and not lane.is_subagent:
        d = os.path.dirname(os.fspath(lane.path))
        if d not in p.copies_done:
            group = related_dirs(p, d)
            p.copies_done.update(group)
            from ..model.lineage import dir_copy_offsets

            p.copies.update(dir_copy_offsets([x for dd in group for x in p.scope_dirs.get(dd, ())], p.index_off))
    return p.copies.get(str(lane.path)) if p.copies else None


def index_path(p: str) -> str:
    from ....index.store import abspath

    return abspath(p)


def copies_of_root(p: Plan, lane: Lane, root, stats: dict | None = None) -> frozenset[int] | None:
    """`copies_of`, with the heads of the transcripts the root summary knows taken from it
    (`stats`: path -> stat already taken, so a file is not stat'ed twice)."""
    if not p.copies_known and not lane.is_subagent:
        d = os.path.dirname(os.fspath(lane.path))
        if d not in p.copies_done:
            from ..model import lineage

            heads = {}
            for _sid, path in [x for dd in related_dirs(p, d) for x in p.scope_dirs.get(dd, ())]:
                e = root.lanes.get(index_path(path))
                if e is not None and len(e) > 5 and e[5] is not None:
                    st = stats.get(path) if stats else None
                    if st is None:
                        try:
                            st = os.stat(path)
                        except OSError:
                            continue
                    if e[0] == [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]:
                        heads[path] = tuple(e[5])
            with lineage.known_heads(heads):
                return copies_of(p, lane)
    return copies_of(p, lane)


def _count_left_out(p: Plan, rx, obj: dict, labels: list[str], out: LaneOutcome) -> None:
    """Count a record outside the selection as a further hit of its left-out kind, when it is one
    (a watched gated leaf, or a hook-context attachment), lies in the time window and matches."""
    if not labels:
        return
    leaf = labels[0]
    if leaf == "harness.meta.hook":
        if obj.get("type") != "attachment" or leaf not in p.watch_leaves:
            return
        kind = HOOK_CONTEXT
    elif leaf in p.watch_leaves:
        kind = leaf
    else:
        return
    ts = obj.get("timestamp") if isinstance(obj.get("timestamp"), str) else None
    if in_window(p, ts) is not True or rx.search(R.record_text(obj)) is None:
        return
    out.gated_hits[kind] = out.gated_hits.get(kind, 0) + 1


_SAVED: dict[tuple[str, str], tuple[tuple | None, list[str]]] = {}
"""(tool-results dir, regex) -> (the dir's stat identity, names of the saved outputs there whose
text matches), per process: kept while the directory's identity stays (a saved output written
into it moves its mtime), so a long-lived process (serve) sees the ones written later. A saved
output is written once; one rewritten in place is not looked at again."""


def _dir_identity(d: str) -> tuple | None:
    """(device, inode, mtime_ns) of directory `d` (an entry added or removed moves its mtime);
    None when it cannot be stat'ed, or when it changed in the last 50 ms (an entry added in the
    same clock tick as the listing would leave the mtime as it was: not kept, listed again)."""
    try:
        st = os.stat(d)
    except (OSError, ValueError):
        return None
    if time.time_ns() - st.st_mtime_ns < 50_000_000:
        return None
    return (st.st_dev, st.st_ino, st.st_mtime_ns)


_SUBAGENTS = os.sep + "subagents" + os.sep
_TOOL_RESULTS = os.sep + "tool-results"


def _session_dir(lane: Lane) -> str:
    """`<project>/<session>`: the main lane's sibling dir, or what precedes a subagent lane's last
    `subagents` component (string operations: lane paths are normalised, and this runs per lane)."""
    s = os.fspath(lane.path)
    if lane.kind != "main":
        i = s.rfind(_SUBAGENTS)
        if i >= 0:
            return s[:i] or os.sep
    return s[:s.rfind(os.sep) + 1] + lane.session_id


def _tool_results_dir(lane: Lane) -> str:
    d = _session_dir(lane)
    return d + _TOOL_RESULTS if d != os.sep else _TOOL_RESULTS


def _saved_matching(p: Plan, rx, d) -> list[str]:
    key = (os.fspath(d), p.regex or "")
    names: list[str] = []
    if not _maybe_dir(d):
        return names
    ident = _dir_identity(key[0])
    got = _SAVED.get(key)
    if got is not None and got[0] == ident and ident is not None:
        return got[1]
    try:
        files = sorted((e.name, e.path) for e in os.scandir(d) if e.is_file())
    except OSError:
        files = []
    nb = [n.encode() for n in p.needles or ()]
    for name, path in files:
        try:
            data = Path(path).read_bytes()
        except OSError:
            continue
        hay = data.lower() if p.needles_ci else data
        if any(n in hay for n in nb) and rx.search(data.decode("utf-8", "replace")) is not None:
            names.append(name)
    if len(_SAVED) > 1024:
        _SAVED.clear()
    _SAVED[key] = (ident, names)
    return names


_DIRS: dict[str, tuple[tuple | None, set[str] | None]] = {}
"""directory -> (its stat identity, names of its subdirectories; None: could not list), per
process: whether a session has a sidecar (tool-results/) is read from one listing of its project
directory, listed again when the directory's identity moved (a session dir made after an earlier
search, in a long-lived process)."""


def _maybe_dir(d: Path) -> bool:
    """False only when the listing of d's parent's parent shows that d's parent is no directory
    (`<project>/<session>/tool-results`: most sessions have no `<session>/`)."""
    d = os.fspath(d)
    sess = d[:d.rfind(os.sep)]  # normalised paths: dirname and split by the last separator
    j = sess.rfind(os.sep)
    proj, name = (sess[:j] or os.sep) if j >= 0 else "", sess[j + 1:]
    ident = _dir_identity(proj)
    got = _DIRS.get(proj)
    if got is not None and got[0] == ident and ident is not None:
        names = got[1]
    else:
        try:
            with os.scandir(proj) as it:
                names = {e.name for e in it if e.is_dir()}
        except OSError:
            names = None
        if len(_DIRS) > 4096:
            _DIRS.clear()
        _DIRS[proj] = (ident, names)
    return names is None or name in names


def _count_persisted(p: Plan, rx, lane: Lane, buf, out: LaneOutcome) -> None:
    """Further hits --resolve-persisted would give in this lane: tool-result pointer lines in the
    selection whose preview does not match but whose saved output (under the session's
    tool-results/, found by file name, so only files holding the needle are ever read) does."""
    names = _saved_matching(p, rx, _tool_results_dir(lane))
    if not names:
        return
    from ....read.lines import parse_line

    seen: set[int] = set()
    for name in names:
        nb = name.encode()
        i = buf.find(nb)
        while i >= 0:
            s = buf.rfind(b"\n", 0, i) + 1
            e = buf.find(b"\n", i)
            e = len(buf) if e < 0 else e
            i = buf.find(nb, e)
            if s in seen:
                continue
            seen.add(s)
            obj = parse_line(bytes(buf[s:e]))
            if obj is None or obj.get("type") != "user" or not passes(p, obj, R.classify(obj)):
                continue
            ts = obj.get("timestamp") if isinstance(obj.get("timestamp"), str) else None
            plain = R.record_text(obj)
            if in_window(p, ts) is not True or rx.search(plain) is not None:
                continue  # outside the window, or already a hit without resolving
            text, used = _resolve_persisted(obj, plain, lane, 0, [])
            if used and rx.search(text) is not None:
                out.gated_hits[PERSISTED] = out.gated_hits.get(PERSISTED, 0) + 1


def _fast_assistant(p: Plan, am, raw: bytes, pos: int, s: int, e: int, names: dict | None) -> Hit | None:
    """A counted assistant hit from the bytes (ASSISTANT_HEAD matched, top-level type checked), or
    None when the bytes do not decide it (then the line is parsed). Only for counting plans: the
    hit carries its tool names; labels, uuid, timestamp are not read."""
    kind, tid, tname = am.groups()
    n_use = raw.count(PF.TOOL_USE_BLOCK)
    if kind == b"tool_use":
        if n_use != 1 or tname is None:
            return None
        try:
            name = tname.decode("utf-8")
            ident = tid.decode("utf-8")
        except UnicodeDecodeError:
            return None
        if names is not None and ident:
            names[ident] = name
        tools = [name]
    else:
        if n_use != 0 or p.fast_assistant != "all":
            return None
        tools = []
    return Hit(lane_pos=pos, line=0, offset=s, length=e - s, uuid=None, timestamp=None, labels=[],
               tool_names=tools, text="", span=None, type="assistant")


def _tool_names_by_id(lane: Lane) -> dict[str, str]:
    """tool_use id -> name over the whole lane (parses only lines holding a tool_use). Raises
    OSError: a file that cannot be read again has unknown names, not none."""
    from ....read.lines import parse_line

    names: dict[str, str] = {}
    with open_map(lane.path) as m:
        for s, e in N.candidate_spans(m.buf, ['"tool_use"'], False):
            obj = parse_line(bytes(m.buf[s:e]))
            if obj and obj.get("type") == "assistant":
                for b in R.tool_uses(obj):
                    if b.get("id"):
                        names[str(b["id"])] = str(b.get("name"))
    return names


def _result_ids(lane: Lane) -> set[str]:
    """The tool_use ids the lane's tool results answer. Raises OSError: a file that cannot be
    read again has unknown results, not none (every call would read as unreturned)."""
    from ....read.lines import parse_line

    ids: set[str] = set()
    with open_map(lane.path) as m:
        for s, e in N.candidate_spans(m.buf, ['"tool_result"'], False):
            obj = parse_line(bytes(m.buf[s:e]))
            if obj and obj.get("type") == "user":
                ids.update(str(b.get("tool_use_id")) for b in R.tool_results(obj) if b.get("tool_use_id"))
    return ids


class _AtOffset:
    """offset -> the record starting there (made when asked for: the index holds columns)."""

    def __init__(self, idx) -> None:
        self.idx = idx

    def get(self, offset: int):
        return self.idx.entry_at_offset(offset)


def _holds_nul(path) -> bool:
    """Whether the file holds a NUL byte (a zero-filled line: what a crash leaves), read in 1 MiB
    chunks through the page cache (no mapping: the scan's released pages stay released). Raises
    OSError: a file that cannot be read again is not known to hold none."""
    with open(path, "rb", buffering=0) as f:
        buf = bytearray(1 << 20)
        while (n := f.readinto(buf)):
            if buf.find(b"\x00", 0, n) >= 0:
                return True
    return False


def _apply_index(p: Plan, lane: Lane, hits: list[Hit], out: LaneOutcome | None = None) -> None:
    from ..model.lane import LaneIndex

    idx = LaneIndex.build(lane)
    if out is not None:  # the chain the hits' turns and survival come from, with its bridges declared
        out.bridged = len(idx.stats.bridges)
        out.omitted = idx.stats.zero_filled_lines + len(idx.stats.malformed_lines)
    openers: dict[int, object] = {}
    names: dict[str, str] = {}
    c = idx.columns  # read in columns: no Entry is made but for the hits and their openers
    for i in idx.opener_slots():
        t = c.turn[i]
        if t >= 0 and t not in openers:
            openers[t] = c.entry(i)
    for i in c.tool_use_slots():
        for u, n in zip(c.tools(0, i), c.kinds[c.kind[i]][6]):
            names[u] = n
    at = _AtOffset(idx)
    keep: list[Hit] = []
    opener_objs: dict[int, dict] = {}
    for h in hits:
        e = at.get(h.offset)
        if e is not None:
            h.labels = list(e.labels)
            h.turn = e.turn
            h.survival = e.survival
            if h.type != "attachment" and not any(l in p.allowed for l in h.labels) and not (
                    p.default_surface and not h.labels):
                continue
            if h.turn is not None and p.query.context:
                oe = openers.get(h.turn)
                if oe is not None:
                    if oe.no not in opener_objs:
                        opener_objs[oe.no] = idx.load(oe)
                    obj = opener_objs[oe.no]
                    h.opener = Opener(oe.no, oe.uuid, list(oe.labels), oe.timestamp,
                                      R.display_text(obj, list(oe.labels)))
        if h.type == "user":
            h.tool_names = [names.get(i, i) for i in h.tool_names if i in names]
        keep.append(h)
    hits[:] = keep


def _count(p: Plan, lane: Lane, hits: list[Hit], names: dict[str, str]) -> dict:
    cb = p.query.count_by
    c: Counter = Counter()
    if cb == "label":
        for h in hits:
            for l in h.labels:
                if l in p.allowed:
                    c[l] += 1
            if not h.labels:
                c["(unlabelled)"] += 1
    elif cb == "tool":
        # a call is counted once, on its tool_use; a result carrier names the calls it answers
        want = "assistant" if p.tool_count == "calls" else "user"
        for h in hits:
            if h.type == want:
                for n in h.tool_names:
                    c[n] += 1
    elif cb == "attachment":
        for h in hits:
            if h.attachment is not None:
                c[h.attachment] += 1
    elif cb == "session":
        if hits:
            c[lane.session_id] += len(hits)
    elif cb == "project":
        if hits:
            c[lane.path.parent.name if not lane.is_subagent else project_of(lane)] += len(hits)
    elif cb == "day":
        for h in hits:
            d = parse_ts(h.timestamp)
            c[d.astimezone().strftime("%Y-%m-%d") if d else None] += 1
    elif cb == "model":
        for h in hits:
            if h.type == "assistant":
                c[h.model] += 1
    elif cb == "pairing":
        returned = _result_ids(lane)
        pairs: dict[str, list[int]] = {}
        for h in hits:
            if h.type != "assistant":
                continue
            obj_ids = _use_ids_of(lane, h)
            for uid, nm in obj_ids:
                row = pairs.setdefault(nm, [0, 0, 0])
                row[0] += 1
                if uid in returned:
                    row[1] += 1
                else:
                    row[2] += 1
        return {k: tuple(v) for k, v in pairs.items()}
    return dict(c)


def _count_unpaired(p: Plan, lane: Lane, hits: list[Hit]) -> dict:
    """--count-by pairing when the results could not be read: the calls, returned and
    unreturned unknown (None). Calls are named from the hits' own records where they can be
    read, else their count is unknown too."""
    pairs: dict = {}
    for h in hits:
        if h.type != "assistant":
            continue
        try:
            ids = _use_ids_of(lane, h)
        except OSError:
            row = pairs.setdefault("(unread call)", [None, None, None])
            continue
        for _uid, nm in ids:
            row = pairs.setdefault(nm, [0, None, None])
            row[0] += 1
    return {k: tuple(v) for k, v in pairs.items()}


def _use_ids_of(lane: Lane, h: Hit) -> list[tuple[str, str]]:
    from ..model.lane import load_at

    obj = load_at(lane.path, h.offset, h.length)
    return [(str(b.get("id")), str(b.get("name"))) for b in R.tool_uses(obj) if b.get("id")]


def project_of(lane: Lane) -> str:
    parts = lane.path.parts
    if "subagents" in parts:
        i = len(parts) - 1 - parts[::-1].index("subagents")
        return parts[i - 2]
    return lane.path.parent.name


