"""`search`: linear-time regex over transcripts, whole-turn context, label selection, census.

Pipeline per transcript (one worker process per core, results in scope order):
1. map the file; pick candidate lines with byte needles (prefilter.py) - necessity only;
2. parse candidate lines only; classify; apply the label selection, gating and time window;
3. match the pattern (RE2, linear time) against `record_text` - what the transcript holds,
   never a rendered label (NAR-010);
4. for transcripts with hits only, build a LaneIndex so turn numbers, survival and draft
   relabelling (`user.unsent`) agree with `show`.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from ..providers.claude.model.known import KNOWN_TYPES
from ..providers.claude.discover import Lane, Scope
from ..errors import UsageError
from ..providers.claude.model import record as R
from ..providers.claude.model.labels import DEFAULT_SURFACE, LEAF_BY_PATH, LEAVES, ROLES, expand_selector, expand_selectors
from ..read.lines import Line, ReadStats, Releaser, _Whole, count_released, open_map, open_scan, parse_numbered
from ..timefmt import parse_ts
from . import prefilter as PF
from .types import COUNT_BY, Hit, LaneOutcome, Opener, Query, Summary

GATED_TYPES = ("attachment", "file-history-snapshot", "file-history-delta", "queue-operation")
PERSISTED_MARKERS = ("persisted-output", "persistedOutputPath")
_SAVED_TO = re.compile(r"Full output saved to: *(\S[^\n<]*?)\s*(?:\n|<|$)")
_PERSISTED_BLOCK = re.compile(r"<persisted-output>.*?</persisted-output>", re.S)
PARALLEL_MIN_BYTES = 16 << 20
"""Smaller scopes run in-process: forking workers would cost more than it saves."""
MIN_BATCH_BYTES = 1 << 20


# --- compiling a query ----------------------------------------------------------------------


@dataclass
class Plan:
    """A query checked and reduced to what a worker needs (picklable: no compiled objects)."""

    query: Query
    allowed: frozenset[str]
    """Leaves a hit may carry (after relabelling)."""
    record_allowed: frozenset[str]
    """Leaves accepted at record level (user.message too when user.unsent is wanted)."""
    default_surface: bool
    hook_attachments: bool
    needles: list[str] | None
    needles_ci: bool
    label_needles: list[str] | None
    regex: str | None
    since_ts: float | None
    until_ts: float | None
    listing: bool
    """Hits are returned as records (not only counted)."""
    type_gate: frozenset[str] | None = None
    """Record types that can yield a passing record (None = no gate): a line whose top-level type
    is read from its first bytes (prefilter.HEAD_TYPE) and is not listed is not parsed."""
    skip_carriers: bool = False
    """The selection holds none of prefilter.CARRIER_LEAVES: tool-result carriers recognised by
    their first bytes (prefilter.CARRIER) are not parsed."""
    fast_assistant: str | None = None
    """Counting only (no pattern, window, cap): an assistant record recognised by its bytes is
    counted without parsing when it surely passes: "all" (default surface: every assistant record
    passes) or "tool" (it holds a tool_use block, so it carries agent.tool.use, which is selected)."""
    fast_carrier: bool = False
    """Counting only: a tool-result carrier naming one tool_use_id first is counted unparsed
    (every carrier leaf is selected)."""
    copies: dict = field(default_factory=dict)
    """transcript path -> byte offsets of records that copy a record of an in-scope session
    (a `--fork-session` fork, providers/claude/model/lineage.py): each original record is counted once. Filled
    per project directory on first need (`copies_of`) from `scope_dirs`, unless `copies_known`."""
    scope_dirs: dict = field(default_factory=dict)
    """project dir -> [(session id, transcript path)] of the in-scope sessions there (forks and
    their parents share a project directory)."""
    copies_known: bool = True
    """`copies` is complete (else filled per project directory by `copies_of`)."""
    copies_done: set = field(default_factory=set)
    """Project dirs whose forks are in `copies` already."""
    left_out: tuple[tuple[str, str], ...] = ()
    """(kind, flag) of every gated kind or source this query does not search (left_out_kinds)."""
    count_left_out: bool = False
    """Count the hits each left-out kind would add: the pattern has a literal needle (so only lines
    holding it are looked at) and no -m/-l cuts the scan short."""
    watch_leaves: frozenset[str] = frozenset()
    """Left-out gated leaves whose candidate lines are classified and matched (count_left_out)."""
    watch_types: frozenset[str] = frozenset()
    """Record types whose lines can carry a watched leaf (read from the bytes, like type_gate)."""
    tool_count: str = "calls"
    """--count-by tool counts "calls" (tool_use blocks of assistant hits), or "results" (the result
    carriers' calls) when the selection holds result leaves and no call leaf."""
    use_index: bool = False
    """A census answered from the index where it is fresh (sessionsift/index/search.py)."""
    left_out_kinds: frozenset[str] = frozenset()
    """The kinds of `left_out`."""
    index_relabel: bool = False
    """Hits that need only their final labels (no turn context shown) take them from the index."""
    no_sidecar: frozenset = frozenset()
    """Main transcripts (paths as strings) whose session has no `<project>/<session>/` directory,
    as discovery's project listing showed: no saved tool output (tool-results/) to look for."""


def _re2():
    import re2

    opts = re2.Options()
    opts.log_errors = False
    return re2, opts


def compile_regex(patterns: tuple[str, ...], ignore_case: bool, fixed: bool) -> str | None:
    """Validate every pattern under RE2 and return one combined pattern (None = match all)."""
    if not patterns or any(p == "" for p in patterns):
        return None
    re2, opts = _re2()
    parts = []
    for p in patterns:
        if fixed:
            src = re.escape(p)
        else:
            why = PF.has_nonlinear(p)
            if why:
                raise UsageError(
                    f"pattern {p!r} uses {why}, which cannot run in linear time; "
                    "search uses a linear-time engine (RE2) and refuses it",
                    hint="rewrite without backreferences/lookaround, or match a superset and filter the JSON output",
                )
            src = p
        try:
            re2.compile(src, opts)
        except Exception as exc:  # re2 raises its own error type
            msg = exc.args[0] if exc.args else str(exc)
            if isinstance(msg, bytes):
                msg = msg.decode("utf-8", "replace")
            if "invalid perl operator: (?<" in msg or "invalid perl operator: (?=" in msg or "(?!" in msg:
                raise UsageError(f"pattern {p!r} uses a lookaround assertion, which cannot run in linear time; refused")
            if "invalid escape sequence: \\" in msg and re.search(r"\\[1-9]", p):
                raise UsageError(f"pattern {p!r} uses a backreference, which cannot run in linear time; refused")
            raise UsageError(f"invalid regular expression {p!r}: {msg}")
        parts.append(src)
    combined = parts[0] if len(parts) == 1 else "|".join(f"(?:{x})" for x in parts)
    if ignore_case:
        combined = "(?i)" + combined
    return combined


HOOK_CONTEXT = "hook-context"
"""Left-out kind: hook_additional_context attachments (leaf harness.meta.hook on an attachment
line), searched only with --additional-context / --attachments."""
PERSISTED = "persisted-output"
"""Left-out source: the text of a tool output the client saved under tool-results/ (only its
preview is in the transcript), searched only with --resolve-persisted."""


def left_out_kinds(allowed: set[str] | frozenset[str], hook_attachments: bool,
                   resolve_persisted: bool) -> list[tuple[str, str]]:
    """(kind, flag) of every gated kind or source a query with this selection does not search: each
    gated leaf not selected (docs/labels.md), hook-context attachments, persisted outputs (when
    tool results are selected at all)."""
    out = []
    for leaf in LEAVES:
        if leaf.gated and leaf.path not in allowed:
            out.append((leaf.path, "--attachments" if leaf.path == "harness.meta.attachment" else f"-t {leaf.path}"))
    if not hook_attachments:
        out.append((HOOK_CONTEXT, "--additional-context"))
    if not resolve_persisted and "agent.tool.result" in allowed:
        out.append((PERSISTED, "--resolve-persisted"))
    return out


def plan(query: Query) -> Plan:
    if query.count_by not in (None, "total") and query.count_by not in COUNT_BY:
        raise UsageError(f"unknown --count-by {query.count_by!r}; valid: {', '.join(COUNT_BY)}")
    if query.max_count is not None and query.max_count < 1:
        raise UsageError("--max-count must be at least 1")
    regex = compile_regex(query.patterns, query.ignore_case, query.fixed)
    sel = expand_selectors(query.include, query.exclude)
    explicit: set[str] = set()
    for s in query.include:
        if s.strip() not in ROLES:
            explicit |= expand_selector(s)
    extra: set[str] = set()
    if query.attachments:
        extra |= {"harness.meta.attachment", "harness.meta.hook"}
    if query.additional_context:
        extra.add("harness.meta.hook")
    include_attachment_census = query.count_by == "attachment" and not query.include and not query.attachments
    if include_attachment_census:
        extra |= {"harness.meta.attachment", "harness.meta.hook"}
    default_surface = sel is None
    allowed = set(DEFAULT_SURFACE if sel is None else sel) | extra
    hook_attachments = bool(query.attachments or query.additional_context or include_attachment_census
                            or "harness.meta.hook" in explicit)
    rec_allowed = set(allowed)
    if "user.unsent" in allowed:
        rec_allowed.add("user.message")
    pats = query.patterns
    needles, ci = PF.needles_for(pats, query.ignore_case, query.fixed) if regex is not None else (None, False)
    if needles is not None and query.resolve_persisted:
        needles = sorted(set(needles) | {m.lower() if ci else m for m in PERSISTED_MARKERS})
    lneedles = None if default_surface else PF.label_needles(rec_allowed, False)
    if query.since and query.until and query.since > query.until:
        raise UsageError("--since is after --until: the window is empty")
    tl = PF.type_leaves()
    if not hook_attachments:  # a hook-context attachment passes only when asked for (_passes)
        tl["attachment"] = tl["attachment"] - {"harness.meta.hook"}
    type_gate = frozenset(
        t for t, leaves in tl.items()
        if (leaves & rec_allowed) or (default_surface and t in ("user", "assistant")))
    skip_carriers = not default_surface and not (rec_allowed & PF.CARRIER_LEAVES)
    counting = (query.count_by in ("total", "tool", "session", "project") and regex is None
                and query.since is None and query.until is None and query.max_count is None
                and not query.resolve_persisted)
    fast_assistant = None
    if counting:
        fast_assistant = "all" if default_surface else ("tool" if "agent.tool.use" in rec_allowed else None)
    fast_carrier = counting and PF.CARRIER_LEAVES <= rec_allowed
    call_leaves = {"agent.tool.use", "agent.communication.sent", "agent.communication.signal"}
    tool_count = ("results" if not default_surface and rec_allowed & PF.CARRIER_LEAVES
                  and not rec_allowed & call_leaves else "calls")
    left_out = left_out_kinds(allowed, hook_attachments, query.resolve_persisted)
    count_left_out = (regex is not None and needles is not None and query.max_count is None
                      and not query.sessions_only)
    watch = {k for k, _ in left_out if k in LEAF_BY_PATH}
    wtypes = {t for t, leaves in PF.type_leaves().items() if t != "user" and leaves & watch}
    if any(k == HOOK_CONTEXT for k, _ in left_out):
        watch.add("harness.meta.hook")
        wtypes.add("attachment")
    if count_left_out and lneedles is not None:
        # lines of the left-out kinds must stay candidates (to be counted, never matched)
        lneedles = PF.label_needles(rec_allowed | watch, False)
    return Plan(
        query=query, allowed=frozenset(allowed), record_allowed=frozenset(rec_allowed),
        default_surface=default_surface, hook_attachments=hook_attachments,
        needles=needles, needles_ci=ci, label_needles=lneedles, regex=regex,
        since_ts=query.since.timestamp() if query.since else None,
        until_ts=query.until.timestamp() if query.until else None,
        listing=query.count_by is None and not query.sessions_only,
        type_gate=type_gate, skip_carriers=skip_carriers, fast_assistant=fast_assistant,
        fast_carrier=fast_carrier, left_out=tuple(left_out), count_left_out=count_left_out,
        watch_leaves=frozenset(watch) if count_left_out else frozenset(),
        watch_types=frozenset(wtypes) if count_left_out else frozenset(), tool_count=tool_count,
        left_out_kinds=frozenset(k for k, _ in left_out),
    )


# --- scanning one transcript ----------------------------------------------------------------

_RX_CACHE: dict[str, object] = {}


def _rx(pattern: str):
    r = _RX_CACHE.get(pattern)
    if r is None:
        re2, opts = _re2()
        r = re2.compile(pattern, opts)
        _RX_CACHE[pattern] = r
    return r


def _passes(p: Plan, obj: dict, labels: list[str]) -> bool:
    t = obj.get("type")
    if t == "attachment":
        if not labels:
            return False
        if labels[0] == "harness.meta.hook":
            return p.hook_attachments and "harness.meta.hook" in p.allowed
        return labels[0] in p.record_allowed
    if not labels:
        return p.default_surface and t in ("user", "assistant")
    return any(l in p.record_allowed for l in labels)


def _in_window(p: Plan, ts: str | None) -> bool | None:
    if p.since_ts is None and p.until_ts is None:
        return True
    d = parse_ts(ts)
    if d is None:
        return None
    x = d.timestamp()
    if p.since_ts is not None and x < p.since_ts:
        return False
    if p.until_ts is not None and x > p.until_ts:
        return False
    return True


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
    from ..providers.claude.paths import resolve_recorded

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


def _lines_in(buf) -> int:
    size = len(buf)
    n = _count_nl(buf, 0, size)
    if size and buf[size - 1 : size] != b"\n":
        n += 1
    return n


def _spans(p: Plan, buf) -> Iterator[tuple[int, int]]:
    size = len(buf)
    if p.needles is not None:
        lab = [n.encode() for n in p.label_needles] if p.label_needles is not None else None
        for s, e in PF.candidate_spans(buf, p.needles, p.needles_ci):
            if lab is not None:
                raw = buf[s:e]
                if not any(n in raw for n in lab):
                    continue
            yield s, e
        return
    if p.label_needles is not None:
        if not p.label_needles:
            return
        yield from PF.candidate_spans(buf, p.label_needles, False)
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
        from ..index import search as IS

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
    rx = _rx(p.regex) if p.regex is not None else None
    if p.needles is not None:
        # most files of a store do not hold a pattern's needle: read into one buffer and look
        # (no mapping, no line framing); only files that hold it are scanned line by line
        try:
            held, size, nl = PF.file_holds(lane.path, p.needles, p.needles_ci, q.count_lines)
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
    gate = p.type_gate
    shape = PF.line_shape
    skip_carriers = p.skip_carriers
    fast_asst = p.fast_assistant
    fast_carrier = p.fast_carrier
    shapes = gate is not None or skip_carriers or fast_asst is not None or fast_carrier
    ahead = PF.ASSISTANT_HEAD.match
    one_record = PF.one_record
    watch_types = p.watch_types
    from ..read.lines import parse_line
    try:
        m = open_scan(lane.path)
    except OSError as exc:
        out.unreadable = exc.strerror or str(exc)
        return out
    with m:
        buf = m.buf
        size = len(buf)
        out.bytes = size
        out.lines = _lines_in(buf) if q.count_lines else None
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
                from ..read.lines import _is_complete

                if not _is_complete(raw):
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
            if not _passes(p, obj, labels):
                if watch_types:
                    _count_left_out(p, rx, obj, labels, out)
                continue
            ts = obj.get("timestamp") if isinstance(obj.get("timestamp"), str) else None
            win = _in_window(p, ts)
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
        nul = None if not hits or not isinstance(m, _Whole) else buf.find(b"\x00") >= 0
    out.malformed = len(stats.malformed_lines)
    # relabelling and turns need the lane view; build it only for lanes with hits
    # (without a needle every user record was read: no parent with two user.message children means
    # no draft - unless user.message itself is not selected (`-t user.unsent`): its hits go)
    relabel = any(h.labels[:1] == ["user.message"] for h in hits) and (
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


def _relabel_from_index(p: Plan, lane: Lane, hits: list[Hit], out: LaneOutcome) -> bool:
    """Final labels of hits that are only counted, from the lane's index (built now when it has
    none: one streaming pass, as cheap as the lane view it replaces, and kept for next time)."""
    from ..index import lanes as IL, search as IS

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
            from ..providers.claude.model.lineage import dir_copy_offsets

            p.copies.update(dir_copy_offsets([x for dd in group for x in p.scope_dirs.get(dd, ())]))
    return p.copies.get(str(lane.path)) if p.copies else None


def _abs(p: str) -> str:
    from ..index.store import abspath

    return abspath(p)


def copies_of_root(p: Plan, lane: Lane, root, stats: dict | None = None) -> frozenset[int] | None:
    """`copies_of`, with the heads of the transcripts the root summary knows taken from it
    (`stats`: path -> stat already taken, so a file is not stat'ed twice)."""
    if not p.copies_known and not lane.is_subagent:
        d = os.path.dirname(os.fspath(lane.path))
        if d not in p.copies_done:
            from ..providers.claude.model import lineage

            heads = {}
            for _sid, path in [x for dd in related_dirs(p, d) for x in p.scope_dirs.get(dd, ())]:
                e = root.lanes.get(_abs(path))
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
    if _in_window(p, ts) is not True or rx.search(R.record_text(obj)) is None:
        return
    out.gated_hits[kind] = out.gated_hits.get(kind, 0) + 1


_SAVED: dict[tuple[str, str], list[str]] = {}
"""(tool-results dir, regex) -> names of the saved outputs there whose text matches (per process)."""


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
    names = _SAVED.get(key)
    if names is not None:
        return names
    names = []
    if not _maybe_dir(d):
        return names
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
    _SAVED[key] = names
    return names


_DIRS: dict[str, set[str] | None] = {}
"""directory -> names of its subdirectories (None: could not list), per process: whether a
session has a sidecar (tool-results/) is read from one listing of its project directory."""


def _maybe_dir(d: Path) -> bool:
    """False only when the listing of d's parent's parent shows that d's parent is no directory
    (`<project>/<session>/tool-results`: most sessions have no `<session>/`)."""
    d = os.fspath(d)
    sess = d[:d.rfind(os.sep)]  # normalised paths: dirname and split by the last separator
    j = sess.rfind(os.sep)
    proj, name = (sess[:j] or os.sep) if j >= 0 else "", sess[j + 1:]
    names = _DIRS.get(proj, ())
    if names == ():
        try:
            with os.scandir(proj) as it:
                names = {e.name for e in it if e.is_dir()}
        except OSError:
            names = None
        if len(_DIRS) > 4096:
            _DIRS.clear()
        _DIRS[proj] = names
    return names is None or name in names


def _count_persisted(p: Plan, rx, lane: Lane, buf, out: LaneOutcome) -> None:
    """Further hits --resolve-persisted would give in this lane: tool-result pointer lines in the
    selection whose preview does not match but whose saved output (under the session's
    tool-results/, found by file name, so only files holding the needle are ever read) does."""
    names = _saved_matching(p, rx, _tool_results_dir(lane))
    if not names:
        return
    from ..read.lines import parse_line

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
            if obj is None or obj.get("type") != "user" or not _passes(p, obj, R.classify(obj)):
                continue
            ts = obj.get("timestamp") if isinstance(obj.get("timestamp"), str) else None
            plain = R.record_text(obj)
            if _in_window(p, ts) is not True or rx.search(plain) is not None:
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
    from ..read.lines import parse_line

    names: dict[str, str] = {}
    with open_map(lane.path) as m:
        for s, e in PF.candidate_spans(m.buf, ['"tool_use"'], False):
            obj = parse_line(bytes(m.buf[s:e]))
            if obj and obj.get("type") == "assistant":
                for b in R.tool_uses(obj):
                    if b.get("id"):
                        names[str(b["id"])] = str(b.get("name"))
    return names


def _result_ids(lane: Lane) -> set[str]:
    """The tool_use ids the lane's tool results answer. Raises OSError: a file that cannot be
    read again has unknown results, not none (every call would read as unreturned)."""
    from ..read.lines import parse_line

    ids: set[str] = set()
    with open_map(lane.path) as m:
        for s, e in PF.candidate_spans(m.buf, ['"tool_result"'], False):
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
    from ..providers.claude.model.lane import LaneIndex

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
            c[lane.path.parent.name if not lane.is_subagent else _project_of(lane)] += len(hits)
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
    from ..providers.claude.model.lane import load_at

    obj = load_at(lane.path, h.offset, h.length)
    return [(str(b.get("id")), str(b.get("name"))) for b in R.tool_uses(obj) if b.get("id")]


def _project_of(lane: Lane) -> str:
    parts = lane.path.parts
    if "subagents" in parts:
        i = len(parts) - 1 - parts[::-1].index("subagents")
        return parts[i - 2]
    return lane.path.parent.name


# --- the scope ------------------------------------------------------------------------------


@dataclass
class Unit:
    """A batch of whole sessions for one worker call: [(lane position, lane)] in scope order."""

    lanes: list[tuple[int, Lane, str]]
    bytes: int = 0


def lanes_of(scope: Scope, subagents: bool) -> list[Lane]:
    """Every lane to scan, in scope order. A session has subagent lanes only under its sidecar
    directory `<project>/<session_id>/`: the project listing of discovery says which sessions
    have one (`Session.sidecar`; else each project directory is listed once here), and sessions
    without one skip the per-session directory probes. The subagent lanes listed are kept in
    `scope.listed_lanes` for this answer's coverage count (Selection.subagent_counts)."""
    out: list[Lane] = []
    sidecars: dict[Path, set[str] | None] = {}
    listed = scope.listed_lanes
    for s in scope.sessions:
        if s.session_id in scope.explicit_lanes:
            out.append(scope.explicit_lanes[s.session_id])
            continue
        if not subagents:
            out.append(s.main)
            continue
        has = s.sidecar
        if has is None:
            names = sidecars.get(s.project_dir, ())
            if names == ():
                try:
                    with os.scandir(s.project_dir) as it:
                        names = {e.name for e in it if e.is_dir()}
                except OSError:
                    names = None  # cannot tell: probe per session
                sidecars[s.project_dir] = names
            has = names is None or s.session_id in names
        if not has:
            listed[s.session_id] = []
            out.append(s.main)
            continue
        subs = s.subagent_lanes()
        listed[s.session_id] = subs
        out.append(s.main)
        out.extend(subs)
    return out


def _units(lanes: list[Lane], sizes: list[int], target: int) -> list[Unit]:
    units: list[Unit] = []
    cur = Unit([])
    prev_sid = None
    for i, (ln, sz) in enumerate(zip(lanes, sizes)):
        if cur.lanes and ln.session_id != prev_sid and cur.bytes >= target:
            units.append(cur)
            cur = Unit([])
        cur.lanes.append((i, ln, ln.session_id))
        cur.bytes += sz
        prev_sid = ln.session_id
    if cur.lanes:
        units.append(cur)
    return units


_FORKED: tuple[Plan, list[Unit], bool] | None = None
"""The plan and units of the running parallel search, and whether plain outcomes are folded,
inherited by forked workers (so a task is an index, not a pickled batch of lanes)."""


def _run_forked(i: int):
    assert _FORKED is not None
    p, units, fold = _FORKED
    outs = _run_unit((p, units[i]))
    return _fold_plain(outs) if fold else outs


def _fold_plain(outs: list[LaneOutcome]) -> tuple[list[LaneOutcome], int, int, int]:
    """(the outcomes that are not plain, and the plain ones' count, bytes and lines): a plain
    outcome (LaneOutcome.plain: no hit, nothing parsed, nothing unusual - most lanes of a
    selective search) adds only those three to the summary, so a worker sends them as sums."""
    kept = []
    n = size = lines = 0
    for o in outs:
        if o.index_why is None and o.plain():
            n += 1
            size += o.bytes
            if o.lines is not None:
                lines += o.lines
        else:
            kept.append(o)
    return kept, n, size, lines


def _run_unit(args: tuple[Plan, Unit]) -> list[LaneOutcome]:
    p, unit = args
    outs: list[LaneOutcome] = []
    per_session: dict[str, int] = {}
    mc = 1 if p.query.sessions_only else p.query.max_count
    for pos, lane, sid in unit.lanes:
        cap = None
        if mc is not None:
            cap = mc - per_session.get(sid, 0)
            if cap <= 0:
                o = LaneOutcome(pos=pos)
                try:
                    with open_map(lane.path) as m:
                        o.bytes = len(m.buf)
                        o.lines = _lines_in(m.buf) if p.query.count_lines else None
                except OSError as exc:
                    o.unreadable = exc.strerror or str(exc)
                outs.append(o)
                continue
        o = scan_lane(p, pos, lane, cap)
        per_session[sid] = per_session.get(sid, 0) + o.hit_count
        outs.append(o)
    return outs


@dataclass
class SearchRun:
    """The result of `search`: iterate `outcomes()` (scope order); `summary` is complete after."""

    plan: Plan
    scope: Scope
    lanes: list[Lane]
    summary: Summary = field(default_factory=Summary)
    workers: int = 1
    _done: bool = False
    _stats: list | None = None

    def outcomes(self, plain: bool = True) -> Iterator[tuple[Lane, LaneOutcome]]:
        """(lane, outcome) of every lane in scope order; `plain=False`: not the plain ones
        (LaneOutcome.plain), which a caller that prints hits and counts has nothing to do with
        (the summary still counts them: it is the same either way)."""
        sm = self.summary
        sm.lines = 0 if self.plan.query.count_lines else None
        sm.sessions = len(self.scope.sessions)
        sm.unreadable = [{"path": pr.path, "why": pr.why} for pr in self.scope.problems]
        sm.prefilter = self.plan.needles if self.plan.needles is not None else (
            self.plan.label_needles if self.plan.label_needles is not None else None)
        stats = self._stat_lanes()
        sizes = [st.st_size if st is not None else 0 for st in stats]
        sess_hit: set[str] = set()
        todo = list(range(len(self.lanes)))
        pre: dict[int, LaneOutcome] = {}
        root = None
        if self.plan.use_index:
            root, pre = self._from_root_summary(stats)
            todo = [i for i in todo if i not in pre]
        if not pre:
            yield from self._scan_all(list(range(len(self.lanes))), sizes, sess_hit, root,
                                      fold=not plain and not self.plan.use_index)
        else:
            got = {o.pos: o for o in self._collect(todo, sizes, root)}
            for i in range(len(self.lanes)):
                o = pre.get(i) or got.get(i)
                if o is not None:
                    yield self._emit(o, sess_hit), o
        if root is not None:
            root.save()
        self._finish(sess_hit)

    def _stat_lanes(self) -> list:
        """One stat per lane (None: could not), taken once per run: the root summary, the sizes
        and the answer cache's digest all judge the same stat."""
        if self._stats is None:
            out = []
            for ln in self.lanes:
                try:
                    out.append(os.stat(ln.path))
                except OSError:
                    out.append(None)
            self._stats = out
        return self._stats

    def census(self) -> dict:
        """A census query (`count_by` set, no cap): the merged counts (empty for "total"); the
        summary is complete after. Answered whole from the data root's kept answers
        (index/answers.py) when they hold this query over exactly these transcripts, unchanged;
        else folded from `outcomes()`, and kept when every transcript came from a fresh index."""
        by = self.plan.query.count_by
        cache = k = dig = None
        if self.plan.use_index and by is not None and self.plan.query.max_count is None \
                and not self.plan.query.sessions_only:
            from ..index import answers

            dig = answers.digest(self.lanes, self._stat_lanes(), self.scope.sessions)
            if dig is not None:
                cache = answers.Answers.load(self.scope.home.path)
                k = answers.key(self.plan.query)
                got = cache.answer(k, dig, self.summary)
                if got is not None:
                    return self._replay(got)
        counts: dict = {}
        froms: dict = {}
        for _lane, o in self.outcomes(plain=cache is not None):  # to keep it: every lane's source
            if by != "total":
                merge_counts(by, counts, o.counts)
            froms[o.from_index] = froms.get(o.from_index, 0) + 1
        sm = self.summary
        if cache is not None and list(froms) == ["index"] and not sm.unreadable and not sm.persisted_unresolved \
                and self.workers == 1:
            from ..index import answers

            ans = {f: getattr(sm, f) for f in answers.kept_fields(sm)}
            ans["counts"] = counts
            cache.put(k, dig, ans)
        return counts

    def _replay(self, got: dict) -> dict:
        from ..index import answers

        sm = self.summary
        sm.sessions = len(self.scope.sessions)
        sm.unreadable = [{"path": pr.path, "why": pr.why} for pr in self.scope.problems]
        sm.prefilter = self.plan.needles if self.plan.needles is not None else (
            self.plan.label_needles if self.plan.label_needles is not None else None)
        for f in answers.kept_fields(sm):
            setattr(sm, f, got[f])
        self._finish(None)
        return got["counts"]

    def _from_root_summary(self, stat_list: list):
        """Census outcomes of the lanes the data root's summary answers (index/summary.py): a stat
        each, no index file read. The rest are scanned or read from their own index."""
        from ..index import search as IS
        from ..index.summary import RootSummary, entry_view

        if IS.per_record(self.plan):
            return None, {}
        root = RootSummary.load(self.scope.home.path)
        pre: dict[int, LaneOutcome] = {}
        stats: dict = {os.fspath(ln.path): st for ln, st in zip(self.lanes, stat_list) if st is not None}
        for i, lane in enumerate(self.lanes):
            st = stats.get(os.fspath(lane.path))
            if st is None:
                continue
            e = root.get(_abs(os.fspath(lane.path)), st)
            if e is None or copies_of_root(self.plan, lane, root, stats) is not None:
                continue
            v = entry_view(e, root.keys, lane)
            pre[i] = IS.census_from_view(self.plan, i, lane, v)
        return root, pre

    def _collect(self, idxs: list[int], sizes: list[int], root) -> list[LaneOutcome]:
        return [o for _l, o in self._scan_all(idxs, sizes, None, root, emit=False)]

    def _scan_all(self, idxs: list[int], sizes: list[int], sess_hit, root, emit: bool = True, fold: bool = False):
        """`fold`: plain outcomes are summed where they are made (a worker) and not yielded (never
        with the index: a census lane's outcome carries why it was scanned)."""
        lanes = [self.lanes[i] for i in idxs]
        lsizes = [sizes[i] for i in idxs]
        total = sum(lsizes)
        workers = os.cpu_count() or 1

        all_lanes = self.lanes
        account = self._emit

        def out(o: LaneOutcome) -> Lane:
            # (a plain function, not a generator: it runs once per lane, ~10k times a store)
            o.pos = idxs[o.pos]
            if root is not None and o.view is not None:
                root.put(os.path.abspath(all_lanes[o.pos].path), o.view)
            o.view = None
            return account(o, sess_hit) if emit else all_lanes[o.pos]

        from ..read.fanout import can_fork

        if workers > 1 and total >= PARALLEL_MIN_BYTES and len(lanes) > 1 and can_fork():
            # about 8 byte-balanced batches per worker: small enough to even out, few enough that
            # the per-task cost stays negligible; workers are forked and read the batches from
            # the inherited _FORKED (a task is its index); each takes the next batch when free
            global _FORKED
            units = _units(lanes, lsizes, max(MIN_BATCH_BYTES, total // (workers * 8)))
            from ..read.fanout import imap_forked

            self.workers = min(workers, len(units))
            _FORKED = (self.plan, units, fold)
            try:
                for outs in imap_forked(_run_forked, len(units), self.workers):
                    if fold:
                        outs = self._add_plain(*outs)
                    for o in outs:
                        yield out(o), o
            finally:
                _FORKED = None
        else:
            for u in _units(lanes, lsizes, 1 << 62):
                outs = _run_unit((self.plan, u))
                if fold:
                    outs = self._add_plain(*_fold_plain(outs))
                for o in outs:
                    yield out(o), o

    def _add_plain(self, kept: list[LaneOutcome], n: int, size: int, lines: int) -> list[LaneOutcome]:
        """Account `n` plain outcomes of `size` bytes and `lines` lines (what `_emit` adds for each:
        a file read, scanned without the index); the outcomes that are not plain."""
        sm = self.summary
        if n:
            sm.files += n
            sm.bytes += size
            if sm.lines is not None:
                sm.lines += lines
            sm.index_counts["scanned"] = sm.index_counts.get("scanned", 0) + n
        return kept

    def _finish(self, sess_hit: set[str] | None) -> None:
        sm = self.summary
        if sess_hit is not None:  # None: replayed (sessions_with_hits is set)
            sm.sessions_with_hits = len(sess_hit)
        p = self.plan
        sm.left_out = [{"kind": k, "flag": f, "further_hits": (
            sm.gated_hits.get(k, 0) if p.count_left_out else (0 if k == PERSISTED and p.regex is None else None))}
            for k, f in p.left_out]
        if p.left_out and not p.count_left_out:
            sm.left_out_note = ("further hits not counted: the pattern has no literal needle" if p.needles is None
                                else "further hits not counted: -m/-l stop the scan early")
        self._done = True

    def _emit(self, o: LaneOutcome, sess_hit: set[str]) -> Lane:
        """Account lane outcome `o` in the summary; its lane."""
        sm = self.summary
        lane = self.lanes[o.pos]
        if o.unreadable is not None:
            sm.unreadable.append({"path": str(lane.path), "why": o.unreadable})
        else:
            sm.files += 1
        if o.lines is not None and sm.lines is not None:
            sm.lines += o.lines
        sm.shape_skipped += o.shape_skipped
        sm.shape_counted += o.shape_counted
        sm.bytes += o.bytes
        sm.hits += o.hit_count
        sm.records_parsed += o.parsed
        sm.malformed_lines += o.malformed
        if o.bridged:
            sm.bridged_records += o.bridged
            sm.bridged_transcripts += 1
        if o.omitted:
            sm.omitted_lines += o.omitted
        if o.unchained:
            sm.unchained_transcripts += 1
        elif o.unchained is None:
            sm.unchained_unknown += 1
        if o.reread_failed is not None:
            sm.unreadable.append({"path": str(lane.path), "why": o.reread_failed})
        sm.undated_skipped += o.undated_skipped
        sm.copies_skipped += o.copies_skipped
        if o.from_index is not None:
            sm.index_counts[o.from_index] = sm.index_counts.get(o.from_index, 0) + 1
        elif o.unreadable is None:
            sm.index_counts["scanned"] = sm.index_counts.get("scanned", 0) + 1
            if o.index_why:
                sm.index_why[o.index_why] = sm.index_why.get(o.index_why, 0) + 1
        sm.persisted_unresolved.extend(o.persisted_problems)
        for k, v in o.unknown_type_lines.items():
            sm.unknown_type_lines[k] = sm.unknown_type_lines.get(k, 0) + v
        for k, v in o.gated_hits.items():
            sm.gated_hits[k] = sm.gated_hits.get(k, 0) + v
        if o.hit_count:
            sess_hit.add(lane.session_id)
        return lane


def search(query: Query, scope: Scope, use_index: bool = False) -> SearchRun:
    """Plan `query` over `scope` (raises UsageError on a bad query). Iterate the result.
    `use_index`: answer from the index where it is fresh (sessionsift/index; the caller decides,
    e.g. not when the index directory lies inside the data root)."""
    p = plan(query)
    p.copies, p.copies_known = {}, False
    for s in scope.sessions:
        p.scope_dirs.setdefault(os.fspath(s.project_dir), []).append((s.session_id, os.fspath(s.path)))
    if use_index:
        from ..index import config, shapes

        if config.enabled(scope.index_off):
            p.use_index = shapes.usable(p)
            p.index_relabel = not p.listing
    if p.count_left_out and PERSISTED in p.left_out_kinds:
        p.no_sidecar = frozenset(os.fspath(s.path) for s in scope.sessions if s.sidecar is False)
    return SearchRun(p, scope, lanes_of(scope, query.subagents))


def merge_counts(by: str, acc: dict, counts: dict) -> None:
    for k, v in counts.items():
        if by == "pairing":
            # (calls, returned, unreturned); None where a lane's results could not be read: the
            # sum is unknown, never the known part read as the whole
            row = acc.setdefault(k, [0, 0, 0])
            for i in range(3):
                row[i] = None if row[i] is None or v[i] is None else row[i] + v[i]
        else:
            acc[k] = acc.get(k, 0) + v
