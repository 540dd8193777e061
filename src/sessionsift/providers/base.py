"""The providers layer: one shared shape for what every coding agent leaves on disk.

Each client (Claude Code, Codex CLI, Gemini CLI, opencode, Crush, and readers registered from
outside the package) answers the same three questions through a :class:`Provider`:

1. **where** its data lives: :meth:`Provider.locate` resolves a :class:`Root` by the documented
   precedence (the provider's own flag, then ``--home DIR`` joined with the client's default
   relative path, then the client's own environment variable, then its default under ``~``);
2. **which** sessions exist: :meth:`Provider.discover` returns a :class:`Discovery` -- the
   :class:`SessionRef` rows, the :class:`Coverage` of that provider (a count that is ``None``
   unless we looked and could read), and the :class:`Problem` rows for what could not be read;
3. **how** a session reads: :meth:`Provider.read` yields :class:`Record` objects in one shared
   shape (locator back to the bytes or the row, instant, role, kind, text, tool call facts,
   file changes, tokens, model, and the raw record), filling a :class:`ReadReport` with what
   the reading did not take in (malformed lines, zero-filled lines, unknown record kinds ...).

Invariants (the product's principles, in types):
- Unknown is not zero: ``Coverage.sessions`` is ``int | None``; ``None`` always carries a
  ``state`` other than ``ok``/``absent`` and a ``reason``. ``absent`` (we looked where the client
  keeps data and found none) is the only way to a true 0.
- Unknown record kinds are never dropped: they are yielded with ``kind="unknown"`` and counted
  in ``ReadReport.unknown_kinds`` under their native type.
- A record that duplicates another (a UI echo of a model-facing item, a replayed history, a
  forked copy) is yielded with ``copy_of`` set to the locator it duplicates, so censuses count
  each original once and the copy stays visible.
- Tokens are never summed blindly: ``Tokens.dedup_key`` names the unit the provider writes one
  usage object per (a message id, a response id, a step); ``Tokens.cumulative`` marks running
  totals that must not be summed at all.
- The library never reads this machine's home implicitly in tests: every default goes through
  ``os.environ`` / ``Path.home()`` at call time, so a test that sets HOME is isolated.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable, ClassVar, Iterator, Literal, Mapping

from ..read.tail import last_jsonl_instant  # noqa: F401 - re-exported (Provider.last_activity's default)
from .record import FileChange, ReadReport, Record, Tokens  # noqa: F401 - re-exported
from .session import Discovery, SessionRef  # noqa: F401 - re-exported
from .summary import SessionSummary  # noqa: F401 - re-exported
from .vocab import Coverage, CoverageState, FileAction, Kind, Problem, Role, Root  # noqa: F401 - re-exported


ActivityGranularity = Literal["session", "project", "provider"]


def _inside_dir(child: str, parent: str) -> bool:
    def under(c: str, p: str) -> bool:
        return c == p or c.startswith(p.rstrip("/") + "/")

    c, p = os.path.normpath(child), os.path.normpath(parent)
    if under(c, p):
        return True
    try:
        return under(os.path.realpath(c), os.path.realpath(p))
    except OSError:
        return False


class Provider:
    """Base of every reader. Subclasses set the class attributes and implement the methods.

    A provider is registered under the entry-point group ``sessionsift.providers`` (the built-in
    ones are registered the same way in pyproject.toml), so readers can come from outside.
    """

    name: ClassVar[str]
    """Stable id used in JSON and ``--provider``: ``claude-code``, ``codex``, ``gemini-cli``, ..."""
    display: ClassVar[str]
    """Human name: ``Claude Code``, ``Codex CLI``, ..."""
    home_flag: ClassVar[str]
    """The CLI flag naming its root, e.g. ``--codex-home``."""
    env_var: ClassVar[str | None] = None
    """The client's own environment variable for its root, e.g. ``CODEX_HOME``."""
    default_rel: ClassVar[str]
    """Default root relative to the home directory, e.g. ``.codex`` or ``.local/share/opencode``
    (XDG-based providers override :meth:`locate` to honour ``XDG_DATA_HOME``)."""
    process_names: ClassVar[tuple[str, ...]] = ()
    """Executable names of the client's processes (for activity gates). Match a process with
    :meth:`is_client_argv`, not by ``/proc/<pid>/comm`` alone: a client that runs under an
    interpreter (Gemini CLI's comm is ``node``) names itself only in its script argument."""
    activity_granularity: ClassVar[ActivityGranularity] = "provider"
    """The finest activity signal its data allows (see clean's activity gate)."""
    text_in_bytes: ClassVar[bool] = False
    """Its records' matchable text is JSON string values written in the session's own files, so a
    session none of whose files holds a search's literal needle holds no match and is not parsed
    (search/gate.py; held on the real samples by tests/test_shared_prefilter.py)."""
    text_not_in_bytes: ClassVar[frozenset[str]] = frozenset()
    """The record kinds for which ``text_in_bytes`` does not hold (text the reader composes): a
    query selecting one of them is never ruled out by its bytes."""
    truncation_marker: ClassVar[bytes | None] = None
    """A regular expression (RE2, over a session file's bytes) for the mark the client writes where
    it cut a record's text and kept the rest nowhere; None: the client writes none that the reader
    knows. A search does not rule out by its bytes a session whose files hold it (so the reader
    can flag those records ``truncated`` and the answer count them)."""
    truncation_literal: ClassVar[tuple[bytes, ...] | None] = None
    """Byte strings one of which every match of ``truncation_marker`` contains (optional): a file
    holding none is not searched with the expression (plain finds are many times faster than the
    RE2 scan)."""
    shell_tools: ClassVar[dict[str, tuple[str, str | None]]] = {}
    """The client's shell tools: tool name -> (the ``tool_input`` key holding the command, the key
    holding the directory it ran in, or None). A shell command a session ran leaves no
    ``FileChange`` even when it writes a file; `recover` reads these to say that a command after
    the last recorded content may have changed the file (a string, or an argv such as Codex's
    ``["bash", "-lc", CMD]``). Empty: the reader names no shell tool."""
    file_tools: ClassVar[dict[str, tuple[str, str]]] = {}
    """The client's structured file tools: tool name -> (the ``tool_input`` key naming the file, the
    op: ``read`` for a read tool, else the action a change would be: ``update`` for an edit,
    ``write`` for a write whose create/update is not known beforehand). `files` lists a read
    call as a ``read`` row and a change call whose result is an error as a failed row (a
    successful change is its reader's ``FileChange``). Empty: the reader names none."""
    @classmethod
    def tool_names(cls) -> frozenset[str]:
        """Every tool name this reader knows (shell, file, plan, spawn tools...): names only code
        under providers/ compares (tests/test_architecture.py). Default: the keys of
        :attr:`shell_tools` and :attr:`file_tools`."""
        return frozenset(cls.shell_tools) | frozenset(cls.file_tools)

    record_labels: ClassVar[bool] = False
    """True for the reader whose own record labels -t/-T take beside the shared kinds, for every
    agent's records (Claude Code's, docs/labels.md): its :meth:`selected_kinds` maps them."""

    @classmethod
    def selected_kinds(cls, include: tuple[str, ...], exclude: tuple[str, ...]) -> frozenset[str]:
        """The shared kinds -t/-T select (`include` empty: the default kinds), each value a shared
        kind or a role (providers/searchquery.py ``shared_selected_kinds``), or one of this reader's
        labels where it has :attr:`record_labels`."""
        from .searchquery import shared_selected_kinds

        return shared_selected_kinds(include, exclude)

    lacks: ClassVar[dict[str, str]] = {}
    """Capabilities this reader cannot offer, each with the reason its client's data cannot answer
    (capability name -> what the client writes and does not write). A question asks the session's
    provider for a capability and, where it is declared here, answers with this reason rather than
    refusing the agent; an undeclared capability is one the reader answers."""
    ccusage_agent: ClassVar[str | None] = None
    """The name ccusage (the peer usage reporter) gives this client's agent in its JSON (`agent`,
    `metadata.agents`), so `usage --json` names it the same; None where ccusage reads no such
    client (our `name` is given then)."""
    usage_dedup: ClassVar[str | None] = None
    """How `usage` deduplicates this client's responses when that is its own rule (the header's
    ``dedup``); None: the shared rule (``Tokens.dedup_key`` per session)."""
    usage_live: ClassVar[bool] = False
    """True when `usage blocks --live` follows this client's transcripts as they grow (usage/live.py)."""
    usage_unrecorded: ClassVar[str | None] = None
    """Set (to the reason) when this client records no per-response usage at all, so no record
    ever carries :class:`Tokens`: token sums over its sessions are unknown (null), never 0."""

    def locate(self, explicit: str | None = None, home: str | None = None,
               env: Mapping[str, str] | None = None) -> Root:
        """Flag, then ``--home DIR``/default_rel, then env var (non-empty), then ~/default_rel."""
        env = os.environ if env is None else env
        if explicit:
            return Root(Path(explicit).expanduser(), self.home_flag, True)
        if home:
            return Root(Path(home).expanduser() / self.default_rel, "--home", True)
        if self.env_var and env.get(self.env_var):
            return Root(Path(env[self.env_var]).expanduser(), self.env_var)
        return Root(Path.home() / self.default_rel, "default")

    client_packages: ClassVar[tuple[str, ...]] = ()
    """The npm packages that are this client (``@anthropic-ai/claude-code``): a process runs it when a
    package runner names it (``npx``, ``npm exec``, ``pnpm dlx``, ``bunx``) or its script lies inside
    it (``node …/node_modules/<package>/cli.js``). See :meth:`is_client_argv`."""
    client_path_parts: ClassVar[tuple[str, ...]] = ()
    """Path fragments only this client's programs hold (a native installer's version dir)."""

    @classmethod
    def is_client_argv(cls, argv: list[str]) -> bool:
        """Whether a process's command line (``/proc/<pid>/cmdline`` split on NUL) runs this client,
        however it was launched (``providers.launch``): a native binary, a script under node, bun
        or deno (a local ``node_modules/.bin/<name>`` included), a package runner, a shell running a
        script, or a wrapper staying alive as its parent -- by :attr:`process_names` (a program's
        basename), :attr:`client_packages` and :attr:`client_path_parts`. A reader overriding this
        must not raise: clean's activity gate treats a recognition that raises as blocking."""
        from .launch import matches

        return bool(argv) and matches(argv, cls.process_names, cls.client_packages, cls.client_path_parts)

    def discover(self, root: Root) -> Discovery:  # pragma: no cover - interface
        raise NotImplementedError

    def read(self, ref: SessionRef, report: ReadReport, *, raw: bool = False) -> Iterator[Record]:  # pragma: no cover
        raise NotImplementedError

    def file_lines(self, path: Path, stats: Any = None) -> Iterator[Any]:
        """The physical lines (``read.lines.Line``, the shared reading rules) of one of a session's
        JSON Lines files as the client stores it, for a question that reads the bytes (audit size
        and secrets); ``stats``: a ``read.lines.ReadStats`` to fill. Default: the file as it is on
        disk (the client stores none compressed); Codex CLI streams a ``.jsonl.zst`` rollout."""
        from ..read.lines import iter_lines

        return iter_lines(path, stats=stats)

    lanes_in_paths: ClassVar[bool] = False
    """True when a session's subagent transcripts are further paths of its own SessionRef (its
    first path the main lane), not child sessions with a ``parent_session_id``: a main-lane-only
    reading keeps ``paths[:1]`` and the subagents are counted from the paths. Default: False."""

    deep_scope: ClassVar[bool] = False
    """True when the reader offers a deep ``Scope`` (``Selection.claude``: its lane, record and
    lineage model) that the commands written against that model read; their answer names every
    other provider as not read. Default: False."""

    usage_dedup_scope: ClassVar[str] = "session"
    """Where a usage record's ``Tokens.dedup_key`` is unique: ``"session"`` (within the session and
    its subagents) or ``"provider"`` (across every session of the provider: a resumed or forked
    session copies a response with its key, and the copies are one response, counted once with
    the per-field max). Default: "session"."""

    usage_windows: ClassVar[bool] = False
    """True when the client's usage is metered in a subscription's rolling windows (``usage
    blocks``, the statusline's block): those answers read this reader's sessions unless
    ``--provider`` names others. Default: False."""

    statusline_hook: ClassVar[bool] = False
    """True when the client runs a status-line command with the session's hook JSON on stdin
    (``sessionsift statusline`` answers it from this reader's root). Default: False."""

    worktree_lock_reason: ClassVar[str | None] = None
    """The regex (``re.fullmatch``) of the reason the client gives ``git worktree lock`` on a
    worktree it made, its groups the lease's kind, name, pid and process start (optional): such a
    lock is the client's own lease, any other a person's. Default: None (it locks none)."""

    worktree_repo_dir: ClassVar[str | None] = None
    """The directory under a repository where the client makes its git worktrees (one per
    worktree, ``<repo>/<dir>/<name>``). Default: None (none there)."""

    worktree_argv_flags: ClassVar[tuple[str, ...]] = ()
    """The client's command-line options that name the git worktree a session runs in (``--flag
    NAME`` or ``--flag=NAME``): a process whose argv carries one with a worktree's name works in
    it. Default: none (the client names no worktree on its command line)."""
    worktree_dir: ClassVar[str | None] = None
    """The directory under the provider's root where its client makes git worktrees, each in a
    parent directory of its own that removing the worktree empties. Default: None (none there)."""

    def worktree_roots(self, root: Path) -> tuple[list[str], list[tuple[str, str]]]:
        """The git worktrees the client made under ``root`` (:attr:`worktree_dir`: the directories
        holding a ``.git`` entry, as its own manager looks) and the (path, why) of what could not be
        read. Default: ``([], [])`` -- the client makes none under its root."""
        return [], []

    def worktree_metadata(self, admin: str | None) -> tuple[dict | None, str | None]:
        """The client's own ownership record in a worktree's git admin dir ``admin``
        (``{file, owner_thread_id, manager}``, the problem reading it): `worktrees scan`'s
        attribution and session id. Default: ``(None, None)`` -- the client writes none."""
        return None, None

    def worktree_records(self, root: Path) -> tuple[list[dict], list[tuple[str, str]]]:
        """The records the client writes in its sessions' files naming the git worktree a session
        works in (each ``{worktree, original_cwd, name, session_id, transcript}``) and the (path,
        why) of what could not be read. Default: ``([], [])`` -- the client writes none."""
        return [], []

    def worktree_sessions(self, root: Path, worktree: str) -> list[str]:
        """The ids of the sessions whose files the client keeps for the worktree path ``worktree``
        (evidence that only keeps a worktree). Default: none."""
        return []

    def listing_cwds(self, root: Path) -> list[str]:
        """The cwd of every readable row of the client's listing of its sessions under ``root``
        (:meth:`session_listing`'s, live or not, no pid probed). Default: none."""
        return []

    def lease_probe(self, pid: int | None, start: str | None) -> Any:
        """Whether the process a worktree lock reason of the client's names
        (:attr:`worktree_lock_reason`: its pid and start) is still the one that took the lease: a
        probe with ``state``, ``gone`` and ``detail``. Default: None -- the reader probes none."""
        return None

    records_forks: ClassVar[bool] = False
    """True when the client records that a session was forked from another (then
    :meth:`forked_from` answers, and a session without such a record is known to be no fork)."""

    def forked_from(self, ref: SessionRef) -> dict | None:
        """``{session_id, path, line, uuid, copied_records, ...}`` of the session ``ref`` was forked
        from, as the client recorded it (a field it does not record is None); None when it is no
        fork, or (``records_forks`` False) when the client records no lineage. Default: None."""
        return None

    def shell_command(self, ref: SessionRef, record: Record) -> tuple[str, str | None] | None:
        """The command a ``tool_call`` record ran in the shell and the directory it ran in (the
        call's own, else the session's project, else None), or None when it is no shell call of
        :attr:`shell_tools` (providers/fileevents.py ``shell_command_of``)."""
        from .fileevents import shell_command_of

        return shell_command_of(self, ref, record)

    def file_calls(self, ref: SessionRef, record: Record) -> list[tuple[str, str]]:
        """The files a ``tool_call`` record names, each with its op (:attr:`file_tools`): an
        absolute path (a relative one joined to the session's project), or nothing when the call
        names none. Default: from :attr:`file_tools` (providers/fileevents.py ``file_calls_of``)."""
        from .fileevents import file_calls_of

        return file_calls_of(self, ref, record)

    def read_view(self, call: Record, result: Record) -> tuple[str, str, bool] | None:
        """(the whole file, the evidence, final newline known) when the ``tool_result`` of a read
        call (:attr:`file_tools` op ``read``) provably holds every line of the file as the client
        read it: its format says every line is there, none was cut, and nothing was added around
        it; None otherwise. When the output cannot say whether the last line ended with a newline
        (the third item False), the content is given without one and the caller settles it from a
        later diff of the file (questions/files.py), or does not use the view. `recover` takes a
        settled one as a complete view. Default: None (the reader vouches for no read output)."""
        return None

    def search(self, sel, query, use_index: bool = True, fulltext=None):
        """Capability ``search``: this provider's sessions in the selection `sel` searched for
        `query` (sessionsift.search.Query), as a part of the one answer (search/run.py): an object
        with ``outcomes(plain) -> Iterator[(unit, outcome)]``, ``census() -> dict``, ``summary``
        (search.summary.LaneSummary) and ``per_provider() -> {name: {sessions, files, bytes, lines, hits,
        sessions_with_hits}}``. Default: None -- the question searches this provider's sessions
        through their shared records (:meth:`read`, search/records.py), every such provider's in
        one pass, each session ruled out first by its bytes (search/gate.py, :meth:`rule_out_rows`
        where the reader has one). A reader with a deeper model answers with its own part
        (Claude Code: its lane scan and index census, providers/claude/search). `fulltext`: the
        full-text index's candidate picker (index/fulltext.py Picker), passed down when a pattern
        search may use it."""
        return None

    def file_events(self, sel, query):
        """Capability ``file_events``: the file events of this provider's sessions in the selection
        `sel` (providers.scope.Selection), for `files` and `recover` (providers/fileevents.py:
        ``FileEvents``; `query` a ``FileQuery``, which carries the shell grammar). Default: the
        record events built from the shared records (``from_records``: each record's
        ``file_changes``, :meth:`file_calls` read and failed calls, :meth:`shell_command` calls read
        by the grammar, :meth:`read_view` and :meth:`shell_stdout` views). A reader with a deeper
        model of its sessions answers with lane events instead (``FileEvents.lanes``: Claude Code,
        providers/claude/files). None: no session of this provider in the selection."""
        from .fileevents import from_records, refs_of

        refs = refs_of(sel, self.name)
        return from_records(self, refs, query) if refs else None

    def reinjection(self, sel, subagents: bool = True):
        """Capability ``reinjection`` (`audit reinjection`): the files whose changed-on-disk contents
        the client re-sent into context, per lane of this provider's sessions in `sel`
        (providers/reinjection.py ``AuditResult``: its lanes and problems). Default: None -- the
        reader names no such record (``lacks["reinjection"]`` says why)."""
        return None

    def usage_scans(self, scope, subagents: bool = True, parallel: bool = True):
        """Capability ``usage_scans``: the reader's own usage extraction over its deep Scope `scope`
        (Selection.claude, or Scope.one of it): ``((session, path, kind, lane), scan)`` per
        transcript, ``scan`` with ``events(session_id, lane, project)`` and the counts usage tallies
        (providers/claude/usage.py FileScan), or ``(path, why)``. Default: none -- usage is read from
        :meth:`read`'s tokens."""
        return []

    def usage_follower(self, scope):
        """Capability ``usage_follower`` (`usage blocks --live`, :attr:`usage_live`): what follows
        `scope`'s transcripts as they grow -- ``sessions(targets, home)`` (a Scope listed again),
        ``transcripts(session, subagents)`` and ``scan(path, start)`` (a ``usage_scans`` scan from a
        byte offset). Default: None."""
        return None

    def plans(self, sel, audit: bool = False):
        """Capability ``plans``: the plan each of this provider's sessions in `sel` keeps
        (providers/artifacts.py ``PlanAnswer``; `audit`: also writes to plan files the writing
        session does not bind, where plans are files). Default: the checklist updates of the shared
        records (``plans_from_records``: :meth:`plan_update` on every tool call, the latest one
        binding). None: no session of this provider in the selection, or the reader reads no plan
        (then ``lacks["plans"]`` says why)."""
        from .artifacts import plans_from_records
        from .fileevents import refs_of

        refs = refs_of(sel, self.name)
        if not refs or type(self).plan_update is Provider.plan_update:
            return None
        return plans_from_records(self, refs, audit)

    def plan_update(self, ref: SessionRef, record: Record):
        """The checklist a ``tool_call`` record sets as the session's plan (providers/artifacts.py
        ``PlanUpdate``: its steps with their statuses, the explanation), read from ``record.raw`` or
        ``record.tool_input``; None when it is no plan tool's call. Default: None."""
        return None

    def images(self, sel):
        """Capability ``images``: the inline images this provider's sessions in `sel` hold
        (providers/artifacts.py ``ImageAnswer``). Default: :meth:`record_images` on every record.
        None: no session of this provider in the selection, or the reader reads none (then
        ``lacks["images"]`` says why)."""
        from .artifacts import images_from_records
        from .fileevents import refs_of

        refs = refs_of(sel, self.name)
        if not refs or type(self).record_images is Provider.record_images:
            return None
        return images_from_records(self, refs)

    def record_images(self, ref: SessionRef, record: Record) -> list:
        """The inline images a record holds (providers/artifacts.py ``RecordImage``: carrier, media
        type, the bytes as written), from ``record.raw``. Default: none."""
        return []

    def compactions(self, ref: SessionRef, lane: str | None = None):
        """Capability ``compactions``: the session's compactions (each with its summary's locator)
        and its turns newest first, for `verbatim` (providers/compaction.py ``TurnHistory``;
        `lane`: a subagent lane inside the session, for a reader that keeps lanes). Default: the
        shared records with :meth:`compaction_of` naming the summaries (``history_from_records``).
        None: the reader names no compaction record (then ``lacks["compactions"]`` says why)."""
        if lane not in (None, "main"):
            from ..errors import UsageError

            raise UsageError(f"--lane: {self.display} keeps no subagent lanes inside a session; name the "
                             "child session itself")
        if type(self).compaction_of is Provider.compaction_of:
            return None
        from .compaction import history_from_records

        return history_from_records(self, ref)

    def compaction_of(self, ref: SessionRef, record: Record):
        """The compaction a record (read with ``raw``, no copy) is the summary of
        (providers/compaction.py ``mark(...)``: trigger, tokens before, the first record kept), or
        None. Default: None."""
        return None

    records_cost: ClassVar[bool] = False
    """True when the client writes its own price of each response beside its usage: then `usage` asks
    :meth:`recorded_cost` for every record with ``tokens`` (read with ``raw``) and reports the sum as
    the client's recorded cost next to its own pricing."""

    def deep_facts(self, ref: SessionRef) -> Mapping[tuple[str, int], Any]:
        """(path, line) -> what the reader's deeper model says of that line (providers/deep.py
        ``DeepFacts``: labels, turn number, survival), for the labels export, audit and sync give
        records. Default: empty (the shared kind is the label)."""
        return {}

    @classmethod
    def deep_scopes(cls) -> Any:
        """How a ``deep_scope`` reader builds its deep Scope (providers/selection.py asks it):
        ``root(explicit, home)``, ``resolve(targets, sessions_from, choice)``, ``use_index(scope,
        off)``, ``empty(path, source)``. Default: None (no deep model)."""
        return None

    def spawned_lanes(self, ref: SessionRef) -> dict[str, str]:
        """Lane name -> the id of the tool call that spawned that lane (a subagent's parent call),
        for the lanes of ``ref`` that record it. Default: none."""
        return {}

    session_cost_source: ClassVar[str | None] = None
    """Where the client keeps a session's own total cost (``extra["recorded_cost"]`` of its refs),
    named beside the figure `usage` reports, e.g. ``opencode session.cost``. None: the reader keeps
    no session total (`usage` then names ``<provider> recorded_cost``)."""

    def recorded_cost(self, record: Record) -> float | None:
        """The price in USD the client wrote for the response whose usage ``record.tokens`` holds (from
        ``record.raw``), or None when it wrote none. Default: None."""
        return None

    def shell_stdout(self, record: Record) -> str | None:
        """The whole output of a shell call as its ``tool_result`` record holds it, when the reader
        can tell it exactly (the command exited 0, the client did not cut the text, no wrapper
        left around it); None otherwise. `recover` takes a whole-file ``cat FILE`` so read as a
        complete view of the file. Default: None (the reader vouches for no output)."""
        return None

    def full(self, ref: SessionRef) -> SessionRef:
        """`ref` with every fact discovery can give, where it was listed light (a reader whose
        discovery has a light mode). Default: `ref` itself."""
        return ref

    def summarize(self, ref: SessionRef, *, subagents: bool = True) -> SessionSummary:
        """What `list` shows of `ref`. Default: every record of the session read in order (the
        interface has no head/tail window), copies left out; a reader whose format allows a
        bounded read (Claude Code's head and tail) overrides it. `subagents`: count the subagent
        lanes inside the session (where its reader has any)."""
        from .summary import from_records

        return from_records(self, ref)

    def census(self, refs: list[SessionRef], *, subagents: bool = True, strict: bool = False, cache=None,
               scope=None, from_records: bool = False, kept=None):
        """The census of `refs` in the shared shape (providers.census.Census): `stats` asks every
        provider this. Default: each session's records read in order (census.session_stats).
        A reader with a deeper census gives the same figures from it and that census as
        ``detail``; `cache` is the index's per-file census where the index is on, `scope` the
        selection's own reading of this provider's sessions where it has one, `from_records` asks
        for the default reading even so (a cross-check). `strict`: fail on a malformed line where
        the reader can. `kept`: the index's answers kept per session (index/kept.py), where the
        index is on."""
        from .census import Census, read_census

        sessions, problems = read_census([(self, r) for r in refs], kept=None if strict else kept)
        return Census(sessions, problems)

    def lineage(self, refs: list[SessionRef], seen: list[SessionRef], index_off: str | None = None) -> dict[str, dict]:
        """session id -> where it was forked from (``forked_from``'s dict, ``path`` filled from the
        sessions discovery `seen` where the client records none), for each of `refs` that is a
        fork and each session of `seen` forked from one of `refs` (`index_off`: why no index). Default: from
        :meth:`forked_from` when the client records lineage (``records_forks``), else nothing
        (providers/census.py ``lineage_of``)."""
        from .census import lineage_of

        return lineage_of(self, refs, seen)

    def summary_files(self, ref: SessionRef) -> list[Path]:
        """Every file :meth:`summarize` reads for `ref` (a ref as :meth:`full` gives it): a listing
        kept between answers (``sessionsift.listing.list_sessions(keep=...)``) reads the session
        again only when one of these changed its stat identity (device, inode, size, mtime_ns), a
        file came or went, or discovery gave another ref. Default: ``ref.paths`` and, beside a
        SQLite database among them, its ``-wal`` (WAL mode's newest commits live there until a
        checkpoint; the main file's size and mtime need not move). A database store's every
        session names the same file: one write re-reads every session of it."""
        out = list(ref.paths)
        for p in ref.paths:
            if str(p).endswith((".db", ".sqlite", ".sqlite3")):
                out.append(Path(str(p) + "-wal"))
        return out

    def deleted_sessions(self, sel, problems: list[Problem]) -> tuple[list, str | None]:
        """The sessions of the selection ``sel``'s root whose files the client itself deleted while
        its own history still names them (rows with their prompts only), and the note saying why
        they are not counted when they are not; a failed reading is added to ``problems``.
        Default: ``([], None)`` -- the client keeps no history beside its sessions' files."""
        return [], None

    def footprint(self, ref: SessionRef) -> list[Path]:
        """Every file and folder that belongs to this one session alone (clean captures and
        deletes exactly these, as one unit). Default: ``ref.paths``."""
        return list(ref.paths)

    def retention(self) -> Any:
        """The client's own deletion of sessions by age, if it has one: an object with
        ``period(root, cwd=None, policy=True)``, ``project(transcript, base, own, now)``,
        ``reads_policy(root_source)`` and ``invisible`` (providers/claude/retention.py's
        ``Rules``); None: no client-side retention is modelled (not known to delete by age)."""
        return None

    # -- live state: status, wait, whoami, agents (sessionsift.live; types in providers/liveness.py)

    def live_state(self, ref: SessionRef, world: Any) -> Any:
        """This session's live state (:class:`~sessionsift.providers.liveness.LiveState`): one
        verdict of the shared vocabulary (``liveness.decide``) with one evidence row per surface
        read, the notes, and what the client's disk cannot show (``invisible``). ``world`` is the
        question's :class:`~sessionsift.providers.liveness.LiveWorld` (the time, the processes,
        /proc/locks, every discovered session). Default: None -- the reader offers no live-state
        surfaces; the question answers ``unknown`` with ``lacks["live_state"]`` as the reason."""
        return None

    def wait_for(self, ref: SessionRef, condition: Any, timeout: float, world: Any,
                 ready: Any = None) -> Any:
        """Block until ``condition`` (``liveness.Condition``) holds for this session or
        ``timeout`` seconds pass, with a mechanism of the reader's own (a deeper model's cursors);
        returns a ``liveness.WaitOutcome``. Default: None -- the question waits by re-asking
        :meth:`live_state` on every change of ``LiveState.watch`` (and every few seconds), and
        reads new records with :meth:`read` for a ``write:`` condition."""
        return None

    def whoami(self, env: Mapping[str, str], world: Any) -> Any:
        """What this client exports to its tool subprocesses (``env``) naming the calling session:
        a :class:`~sessionsift.providers.liveness.WhoamiClaim` (its ``session_id`` None when the
        client's environment is there but names no session: the note says why, with evidence);
        None when ``env`` holds nothing of this client's. Never a guess from recency or process
        trees. Default: None (the question prints ``lacks["whoami"]``)."""
        return None

    def subagents(self, ref: SessionRef, children: list[SessionRef], world: Any, files: bool = False) -> Any:
        """The child sessions ``ref`` spawned (``children``: discovery's refs naming it as parent),
        each a :class:`~sessionsift.providers.liveness.ChildAgent` joined to the tool call that
        spawned it where the records allow. Default: every child, unjoined (``join`` None), its
        status from its own live state. None: this reader answers agents another way (Claude
        Code's lanes)."""
        from .liveness import unjoined_children

        return unjoined_children(children, world)

    def session_listing(self, root: Path, source: str = "scan",
                        locks: "Callable[[], tuple[dict | None, str | None]] | None" = None
                        ) -> "tuple[Any, list[Any]] | None":
        """The client's own listing of the sessions it has running under ``root``: a
        :class:`~sessionsift.providers.listing.Listing` (its state: present, absent, unreadable)
        and one :class:`~sessionsift.providers.listing.LiveEntry` per row (session id, pids, cwd,
        alive or not provably dead). Clean's activity gate takes a live row as the session being
        live and accounts a client process it names as that session; the worktrees sweep stops when
        a listing is unreadable. ``locks``: the caller's reader of held file locks (``/proc/locks``:
        ``((major, minor, inode) -> holder pids, error)``), for a listing made of held locks; None:
        locks are not observable (such a listing is then unreadable, never empty). Default: None --
        the client keeps no such listing (its processes are matched by project or provider,
        :attr:`activity_granularity`)."""
        return None

    def projects_of(self, ref: SessionRef) -> list[str]:
        """Every project directory the session's files belong to: a client process working in any
        of them may be writing it. Default: ``[ref.project]`` when it is known."""
        return [ref.project] if ref.project else []

    def works_in(self, ref: SessionRef, cwd: str) -> bool:
        """Whether a client process whose cwd is ``cwd`` works in this session's project: ``cwd``
        is one of :meth:`projects_of` or inside it (as given, and with symlinks resolved). May
        raise: clean then counts the process as working there (it blocks)."""
        for proj in self.projects_of(ref):
            if _inside_dir(cwd, proj):
                return True
        return False

    instant_keys: ClassVar[tuple[tuple[str, ...], ...]] = (("timestamp",),)
    """Where a record of the client's JSON Lines files carries its instant (key paths, e.g.
    ``("timestamp",)``), for :meth:`last_activity`."""

    def last_activity(self, ref: SessionRef) -> list[tuple[Path, str | None]]:
        """For every file of the session that holds its records, the instant of its LAST record
        that carries one, known only when every record after it was read whole (None: a line on
        the way is torn, too long, not JSON, or none carries an instant -- then the file's mtime
        stands for it: clean's age gate). Never a bounded tail's guess: a last record longer than
        any window is read whole (up to ``LAST_LINE_MAX``). Default: JSON Lines files read
        backwards with :attr:`instant_keys`; any other file is ``ref.last_at`` for the first path,
        None for the rest (providers/liveness.py ``last_activity_of``)."""
        from .liveness import last_activity_of

        return last_activity_of(self, ref)

    def change_token(self, ref: SessionRef) -> str | None:
        """A cheap value that changes whenever what :meth:`read` yields for this session can have
        changed (``sync`` reads a session again only when it differs from the one it synced);
        None: the reader cannot tell without reading (the session is read every time). Default:
        the metadata of every file of ``ref.paths`` and :meth:`footprint` (directories walked):
        name, size, modification time and inode -- no byte is read. A reader whose sessions are
        rows inside a shared database overrides it (the database file changes with any session)."""
        from ..read.watch import stat_token

        return stat_token([*map(str, ref.paths), *map(str, self.footprint(ref))])

    # helpers for subclasses -----------------------------------------------------------------

    def coverage(self, root: Root, state: CoverageState, sessions: int | None = None,
                 reason: str | None = None) -> Coverage:
        return Coverage(self.name, self.display, state, sessions, reason,
                        None if root.path is None else str(root.path), root.source)
