"""Claude Code's lane cache: what its deep model computed for each transcript (lane censuses,
turn skeletons, file-history slots, search answers and shapes), kept through the shared store
(``sessionsift.index``: the database, its configuration, progress and report) so a transcript
already read is not read again. It is Claude Code's own: the store knows no agent (docs/index.md)."""
