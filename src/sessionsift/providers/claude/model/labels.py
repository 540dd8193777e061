"""The label taxonomy: 33 leaves across three roles (CLS-001), plus selector expansion.

A leaf's `llm_visible` follows the one measured visibility instrument: whether the record it
labels carries a `message{}` object (CLS-002, QT-027). A `gated` leaf labels a record kind that a
default scan does not parse (attachment lines, promoted telemetry/system lines, snapshot lines,
queue lines): it is reached only by an explicit selector or `--attachments` /
`--additional-context`.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass

from ....errors import UsageError


@dataclass(frozen=True)
class Leaf:
    path: str
    llm_visible: bool
    gated: bool
    doc: str


LEAVES: tuple[Leaf, ...] = (
    Leaf("user.message", True, False, "genuine operator prose (or a subagent's seed prompt)"),
    Leaf("user.answer", True, False, "an answered AskUserQuestion, riding a tool_result carrier"),
    Leaf("user.rejection", True, False, "a tool-use rejection carrying the operator's typed instruction"),
    Leaf("user.queued", False, True, "human prose in an input-queue enqueue line"),
    Leaf("user.unsent", False, False, "a superseded draft: recalled, edited and re-sent; never delivered"),
    Leaf("agent.message", True, False, "assistant text block"),
    Leaf("agent.thinking", True, False, "assistant reasoning block (thinking / redacted_thinking)"),
    Leaf("agent.thinking.narration", True, False, "the narration summary sibling of a reasoning block"),
    Leaf("agent.tool.use", True, False, "a tool call: every tool_use block, spawns and SendMessage included"),
    Leaf("agent.tool.result", True, False, "a tool result carrier (type user, tool_result blocks)"),
    Leaf("agent.communication.inbox", True, False, "an inbound peer / child message"),
    Leaf("agent.communication.sent", True, False, "a spawn (Agent/Task/Workflow) or a SendMessage; the record carries agent.tool.use too"),
    Leaf("agent.communication.signal", True, False, "a control signal between sessions (a SendMessage signal also carries agent.tool.use)"),
    Leaf("harness.notification.background-command", True, False, "background shell pulse"),
    Leaf("harness.notification.monitor", True, False, "Monitor event / termination pulse"),
    Leaf("harness.notification.subagent", True, False, "async agent / workflow pulse, agents-stopped notice"),
    Leaf("harness.notification.task", True, False, "other task pulses (orphan summaries, remote tasks, ...)"),
    Leaf("harness.schedule.continuation", True, False, "'Continue from where you left off.' marker"),
    Leaf("harness.schedule.wakeup", True, False, "a fired autonomous-loop / ScheduleWakeup tick"),
    Leaf("harness.compaction.boundary", False, False, "system compact_boundary record"),
    Leaf("harness.compaction.summary", True, False, "isCompactSummary user record"),
    Leaf("harness.command.invocation", True, False, "slash-command wrapper record (a command with non-empty `<command-args>` also carries `user.message`: the arguments are typed prose, TURN-008)"),
    Leaf("harness.command.stdout", True, False, "<local-command-stdout>/<local-command-stderr> record"),
    Leaf("harness.interrupt.user", True, False, "[Request interrupted by user]"),
    Leaf("harness.interrupt.tool", True, False, "[Request interrupted by user for tool use]"),
    Leaf("harness.meta.attachment", False, True, "attachment line (any payload kind but hook context)"),
    Leaf("harness.meta.hook", True, False, "hook-injected feedback or context"),
    Leaf("harness.meta.snapshot", False, True, "file-history-snapshot / file-history-delta line"),
    Leaf("harness.meta.turn-duration", False, True, "system turn_duration line"),
    Leaf("harness.meta.away-summary", False, True, "system away_summary line"),
    Leaf("harness.meta.stop-hooks", False, True, "system stop_hook_summary line"),
    Leaf("harness.meta.loop", True, False, "autonomous-loop driver tick"),
    Leaf("harness.meta.system", False, True, "other system subtypes (api_error, informational, ...)"),
)

LEAF_BY_PATH: dict[str, Leaf] = {leaf.path: leaf for leaf in LEAVES}
assert len(LEAVES) == 33

ROLES = ("user", "agent", "harness")


def all_selectors() -> list[str]:
    """Every valid selector: roles, intermediate dotted prefixes and leaves."""
    out: set[str] = set(ROLES)
    for leaf in LEAVES:
        parts = leaf.path.split(".")
        for i in range(1, len(parts) + 1):
            out.add(".".join(parts[:i]))
    return sorted(out)


def _segment_prefix(sel: str, path: str) -> bool:
    return path == sel or path.startswith(sel + ".")


def expand_selector(sel: str) -> set[str]:
    """Leaves named by one selector: a leaf, a dot-segment prefix, a glob, or a bare role.

    A bare role expands to its LLM-visible leaves; an explicit prefix or glob reaches gated leaves
    too. Unknown selectors raise a UsageError listing the valid ones.
    """
    sel = sel.strip()
    if sel in ROLES:
        return {l.path for l in LEAVES if l.path.split(".")[0] == sel and l.llm_visible}
    if any(c in sel for c in "*?["):
        hits = {l.path for l in LEAVES if fnmatch.fnmatchcase(l.path, sel)}
    else:
        hits = {l.path for l in LEAVES if _segment_prefix(sel, l.path)}
    if not hits:
        raise UsageError(
            f"unknown label {sel!r}; valid selectors: {', '.join(all_selectors())}"
        )
    return hits


def expand_selectors(include: list[str] | tuple[str, ...], exclude: list[str] | tuple[str, ...]) -> set[str] | None:
    """The leaf set selected by -t/-T. None = no -t given (the default surface)."""
    inc: set[str] | None = None
    if include:
        inc = set()
        for s in include:
            inc |= expand_selector(s)
    exc: set[str] = set()
    for s in exclude:
        exc |= expand_selector(s)
    if inc is None:
        if not exc:
            return None
        inc = {l.path for l in LEAVES if not l.gated}
    return inc - exc


DEFAULT_SURFACE: frozenset[str] = frozenset(l.path for l in LEAVES if not l.gated)
