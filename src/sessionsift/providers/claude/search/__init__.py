"""Claude Code's `search` capability: its lane scan (label selection, gated kinds, whole-turn
context from the lane index, fork copies counted once, persisted outputs) and its index census,
plugged in as ``ClaudeCode.search`` (search/run.py asks every provider the same way)."""
