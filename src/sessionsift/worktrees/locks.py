"""What a worktree's lock reason says: the client's own lease, or a person's standing lock.

Claude Code 2.1.258 locks every worktree it creates with `git worktree lock --reason`, and the
reason is generated: `claude session <name> (pid <pid> start <procStart>)` for a `--worktree`
session, `claude agent <name> (pid <pid> start <procStart>)` for a subagent's isolated
worktree, without ` start ...` when the start time could not be read. Its own reader is the
regex its provider declares (``Provider.worktree_lock_reason``, verbatim from the binary: `j1`); on Linux the start is clock ticks since boot
(`/proc/<pid>/stat` field 22), elsewhere the `ps -o lstart=` string. Measured: a print-mode
session that ends leaves its worktree AND this lock behind, naming a pid that no longer exists.

Codex CLI 0.171.0 does not lock its managed worktrees (measured: no `locked` file); it marks
them with `codex-thread.json` in the worktree's git dir instead (see harness.py).

Any other lock - a different text, or a lock with no reason at all - was written by a person
or a tool for its own purpose: standing infrastructure, never removed by default.
"""

from __future__ import annotations

import re
from dataclasses import dataclass



def client_locks() -> list[tuple[str, re.Pattern]]:
    """(agent, its lock reason's regex: groups kind, name, pid, start) of every reader that
    declares one (``Provider.worktree_lock_reason``)."""
    from ..providers import having, load

    out = []
    for name in having("worktree_lock_reason"):
        cls = load(name)
        if cls is not None and cls.worktree_lock_reason:
            out.append((name, re.compile(cls.worktree_lock_reason)))
    return out


@dataclass
class Lock:
    state: str
    """`none` (unlocked) | `client` (the client's own generated reason) | `custom`."""
    reason: str | None = None
    client: str | None = None
    """`claude-code` for a client lock."""
    kind: str | None = None
    """`session` | `agent` (Claude Code's two generated forms)."""
    name: str | None = None
    pid: int | None = None
    start: str | None = None

    def to_json(self) -> dict:
        return {"state": self.state, "reason": self.reason, "client": self.client, "kind": self.kind,
                "name": self.name, "pid": self.pid, "start": self.start}


def classify(locked: bool, reason: str | None) -> Lock:
    if not locked:
        return Lock("none")
    r = reason if reason is not None else ""
    for agent, rx in client_locks():
        m = rx.fullmatch(r)
        if m:
            return Lock("client", r, agent, m.group(1), m.group(2), int(m.group(3)), m.group(4))
    return Lock("custom", r)
