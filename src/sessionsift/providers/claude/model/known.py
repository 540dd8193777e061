"""The record types Claude Code's deep model reads (a line of another type is counted by its
type, never interpreted). Its own module so a command can name them without importing the census
(providers/claude/stats.py) and everything it pulls in."""

from __future__ import annotations

KNOWN_TYPES = {
    "user", "assistant", "system", "attachment", "file-history-snapshot", "file-history-delta",
    "queue-operation", "last-prompt", "mode", "permission-mode", "ai-title", "agent-name",
    "summary", "fork-context-ref", "atis-latch", "bridge-session", "cost-state", "continued-in",
}
