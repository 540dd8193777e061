"""Claude Code's live surfaces: the session registry, the transcript tail, background work, todos, subagent topology and the verdict joined from them."""
