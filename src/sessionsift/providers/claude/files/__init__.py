"""Claude Code's file events: its implementation of the ``file_events`` capability, and of ``plans``
and ``images``.

Claude Code's transcripts say more about files than the shared records carry: every Read's echo
(whole or windowed, with the file's line count), Write and Edit echoes with their pre-image and
patch hunks, the client's own freshness signals (``edited_text_file`` and post-compaction ``file``
attachments, ``staleReadFileStateHint``), and its file-history checkpoints. So it answers with
lane events (providers/fileevents.py ``LaneFileEvents``): events.py reads them off each lane
(index-backed through facts.py and the index's file-event slots, collect.py), touches.py lists
them as `files` rows, replay.py rebuilds one file, backups.py lists its checkpoints. The tool names
(``Read``, ``Write``, ``Edit``, ``MultiEdit``, ``NotebookEdit``, ``Bash``) live here and in
providers/claude/model/record.py only.
"""

from __future__ import annotations

from ...fileevents import Cutoff, FileEvents, FileQuery, LaneFileEvents, Replay


class ClaudeFileEvents(LaneFileEvents):
    """The lane events of a Claude Code scope, read once for a question (`files`, `recover`)."""

    def __init__(self, scope, selected: bool, query: FileQuery):
        from ....index.report import IndexReport
        from .collect import collect

        self.scope = scope
        self.selected = selected
        self.query = query
        self.root = scope.home.path
        self.index = IndexReport.for_root(scope.home.path, scope.index_off)
        hows: list[str] = []
        with _Progress(self.index.on and query.progress):
            self.lane_evs, self.problems = collect(scope, query.subagents or query.subagents_only, self.index.on,
                                                   hows, query.shell)
        from ..cache.lanes import Outcome

        for h in hows:
            self.index.add(Outcome(h, None if h != "scanned" else ("index off" if not self.index.on
                                                                   else "a torn final line")))
        self.transcripts = len(self.lane_evs)
        self._touches = None

    def _lane_touches(self):
        if self._touches is None:
            from .touches import touches

            self._touches = touches(self.lane_evs, self.problems, self.query.subagents, self.query.subagents_only)
        return self._touches

    @property
    def touches(self):
        return self._lane_touches().touches

    @property
    def copies(self) -> int:
        return self._lane_touches().copies

    @property
    def unparsed(self) -> int:
        return self._lane_touches().unparsed

    @property
    def omissions(self) -> dict:
        return self._lane_touches().omissions

    def replay(self, path: str, at: Cutoff | None = None) -> Replay:
        from .replay import recover

        return recover(self.scope, path, at, self.query.subagents, self.lane_evs, self.problems)

    def backups(self, path: str) -> list[dict]:
        from .backups import list_backups

        return list_backups(self.scope, path, self.lane_evs)


class _Progress:
    """A long first build of the index shows progress on the terminal (index/progress.py), as
    `stats` and `index update` do."""

    def __init__(self, on: bool):
        self.on = on

    def __enter__(self):
        if self.on:
            from ..cache import lanes as IL
            from ....index.progress import Progress

            IL.PROGRESS = Progress()

    def __exit__(self, *exc):
        if self.on:
            from ..cache import lanes as IL

            if IL.PROGRESS is not None:
                IL.PROGRESS.done()
            IL.PROGRESS = None
        return False


def file_events(prov, sel, query: FileQuery) -> FileEvents | None:
    """The ``file_events`` capability for Claude Code: its sessions in the selection (their deep
    Scope, ``sel.claude``) as lane events. An empty scope of its root when the selection holds none
    (the summary's index report is still its root's); None when Claude Code was not looked at."""
    entry = sel.survey.entry(prov.name)
    if entry is None or entry.provider is None:
        return None
    scope = sel.claude if sel.claude is not None else _empty_scope(entry)
    ev = FileEvents(prov.name, prov.display)
    ev.lanes = ClaudeFileEvents(scope, sel.claude is not None, query)
    return ev


def _empty_scope(entry):
    from pathlib import Path

    from ..discover import HomeChoice, Scope

    root = entry.root
    path = root.path if root is not None and root.path is not None else Path("-")
    return Scope(HomeChoice(path, root.source if root is not None else "~/.claude"))  # type: ignore[arg-type]
