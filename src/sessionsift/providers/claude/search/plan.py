"""Claude Code's search plan: a `search.Query` checked against Claude Code's labels (docs/labels.md)
and reduced to what a lane scan needs (picklable), the gated kinds a query leaves out, and the
per-record tests (`passes`: the label selection; `in_window`: the time window) the scan and the
index census share."""

from __future__ import annotations

from typing import Any

from dataclasses import dataclass, field

from ....errors import UsageError
from ....timefmt import parse_ts
from ....read import needles as N
from ....read.pattern import compile_regex
from ..model.labels import DEFAULT_SURFACE, LEAF_BY_PATH, LEAVES, ROLES, expand_selector, expand_selectors
from . import shape as PF
from .types import COUNT_BY, Query

GATED_TYPES = ("attachment", "file-history-snapshot", "file-history-delta", "queue-operation")
PERSISTED_MARKERS = ("persisted-output", "persistedOutputPath")


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
    index_off: str | None = None
    """Why the index is off for this answer (Scope.index_off): lineage then reads every family
    member's uuids from its file, never from its index."""
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
    """A census answered from the index where it is fresh (providers/claude/cache/search.py)."""
    left_out_kinds: frozenset[str] = frozenset()
    """The kinds of `left_out`."""
    index_relabel: bool = False
    """Hits that need only their final labels (no turn context shown) take them from the index."""
    fulltext: Any = None
    """The full-text index's candidate picker (passed down: index/fulltext.py Picker, `lanes`),
    set for a pattern without --count-lines (a transcript left out is not read) or
    --resolve-persisted; None: every transcript is scanned."""
    no_sidecar: frozenset = frozenset()
    """Main transcripts (paths as strings) whose session has no `<project>/<session>/` directory,
    as discovery's project listing showed: no saved tool output (tool-results/) to look for."""



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
    needles, ci = N.needles_for(pats, query.ignore_case, query.fixed) if regex is not None else (None, False)
    if needles is not None and query.resolve_persisted:
        needles = sorted(set(needles) | {m.lower() if ci else m for m in PERSISTED_MARKERS})
    lneedles = None if default_surface else PF.label_needles(rec_allowed, False)
    if query.since and query.until and query.since > query.until:
        raise UsageError("--since is after --until: the window is empty")
    tl = PF.type_leaves()
    if not hook_attachments:  # a hook-context attachment passes only when asked for (passes)
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


# --- per-record tests (the scan's and the index census's) ------------------------------------


def passes(p: Plan, obj: dict, labels: list[str]) -> bool:
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


def in_window(p: Plan, ts: str | None) -> bool | None:
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

