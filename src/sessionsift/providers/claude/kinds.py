"""`-t`/`-T` across providers: the shared kinds and Claude Code's labels, mapped both ways.

Claude Code sessions are selected by labels (docs/labels.md); every other provider's records by
the shared kinds (`providers.base.Kind`). Either vocabulary works on both:

| shared kind | Claude Code labels it selects | Claude Code label/role -> shared kind |
|---|---|---|
| `prompt` | `user.message`, `user.unsent` | `user.message`, `user.unsent` -> `prompt`; role `user` -> `prompt` |
| `message` | `agent.message` | `agent.message` -> `message` |
| `reasoning` | `agent.thinking` (and `.narration`) | `agent.thinking*` -> `reasoning` |
| `tool_call` | `agent.tool.use`, `agent.communication.sent`, `agent.communication.signal` | those -> `tool_call` |
| `tool_result` | `agent.tool.result`, `user.answer`, `user.rejection` | those -> `tool_result` |
| `meta` | `harness.*`, `user.queued`, `agent.communication.inbox` | those -> `meta`; role `harness` -> `meta` |
| `unknown` | (none: an unmodelled Claude record has no label) | |

Role `agent` -> `message`, `reasoning`, `tool_call`, `tool_result`. The shared kinds are coarser
than the labels: `-t user.answer` on another provider selects every `tool_result`.
"""

from __future__ import annotations

from ...errors import UsageError
from ..searchquery import DEFAULT_KINDS, ROLE_TO_KINDS, SHARED_KINDS  # noqa: F401 - the shared vocabulary

KIND_TO_CLAUDE: dict[str, tuple[str, ...]] = {
    "prompt": ("user.message", "user.unsent"),
    "message": ("agent.message",),
    "reasoning": ("agent.thinking",),
    "tool_call": ("agent.tool.use", "agent.communication.sent", "agent.communication.signal"),
    "tool_result": ("agent.tool.result", "user.answer", "user.rejection"),
    "meta": ("harness.*", "user.queued", "agent.communication.inbox"),
    "unknown": (),
}

def leaf_kind(leaf: str) -> str:
    for kind, sels in KIND_TO_CLAUDE.items():
        for s in sels:
            if (leaf.startswith(s[:-1]) if s.endswith("*") else (leaf == s or leaf.startswith(s + "."))):
                return kind
    return "meta"


def claude_selectors(sels: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """Claude Code label selectors for -t/-T values (shared kinds translated, labels as given)."""
    out: list[str] = []
    for s in sels:
        s = s.strip()
        out.extend(KIND_TO_CLAUDE[s] if s in KIND_TO_CLAUDE else (s,))
    return tuple(out)


def shared_kinds(sels: tuple[str, ...] | list[str]) -> set[str]:
    """Shared kinds for -t/-T values (labels and roles mapped to their nearest kind)."""
    from .model.labels import all_selectors, expand_selector

    out: set[str] = set()
    for s in sels:
        s = s.strip()
        if s in SHARED_KINDS:
            out.add(s)
        elif s in ROLE_TO_KINDS:
            out.update(ROLE_TO_KINDS[s])
        else:
            try:
                leaves = expand_selector(s)
            except UsageError:
                raise UsageError(f"unknown selector {s!r}: use a shared kind ({', '.join(SHARED_KINDS)}) "
                                 f"or a Claude Code label (docs/labels.md): {', '.join(all_selectors())}")
            out.update(leaf_kind(x) for x in leaves)
    return out


def selected_kinds(include: tuple[str, ...], exclude: tuple[str, ...]) -> frozenset[str]:
    inc = shared_kinds(include) if include else set(DEFAULT_KINDS)
    return frozenset(inc - shared_kinds(exclude))
