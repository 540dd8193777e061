"""The ``file_events`` capability: what a provider answers `files` and `recover` with.

A question (sessionsift.files) asks each provider in the selection for its file events
(:meth:`Provider.file_events`) and never asks which agent it is. A provider answers in one of two
vocabularies, or both:

- **record events** (:class:`Change`, :class:`Shell`), built from the shared records by the
  default (:func:`from_records`): each ``FileChange`` a record holds, the reader's file tools'
  read calls and failed change calls (``Provider.file_tools``/``file_calls``), its shell calls
  (``shell_tools``/``shell_command``), and the whole views of a file a read tool or a shell read
  printed where the reader vouches for the output (``read_view``/``shell_stdout``). `files` lists
  them as ``change`` rows; `recover` rebuilds a file from them (files/rebuild.py).
- **lane events** (:class:`LaneFileEvents`), where the provider has a deeper model of its
  sessions (Claude Code's lanes: providers/claude/files): every tool, shell, attachment and
  file-history touch of a file as :class:`Touch` rows, and a replay of one file
  (:class:`Replay`: the file as pieces, known or gaps, every step that set them).

The shell grammar (files/shell.py) is the question's, not an agent's: it is given to the
provider in :class:`FileQuery` (``shell``), so nothing under providers/ imports the questions.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterable

from .base import FileChange, Problem, Provider, ReadReport, Record, SessionRef


def shell_command_of(prov: Provider, ref: SessionRef, record: Record) -> tuple[str, str | None] | None:
    """``Provider.shell_command``'s default: the command of a call of one of ``prov.shell_tools``
    (an argv such as Codex's ``["bash", "-lc", CMD]`` gives CMD; any other argv is shell-joined)
    and its directory (the call's own, else the session's project)."""
    spec = prov.shell_tools.get(record.tool_name or "") if record.kind == "tool_call" else None
    inp = record.tool_input
    if spec is None or not isinstance(inp, dict):
        return None
    cmd = inp.get(spec[0])
    if isinstance(cmd, list) and all(isinstance(x, str) for x in cmd) and cmd:
        if len(cmd) >= 3 and cmd[-2] in ("-c", "-lc") and os.path.basename(cmd[0]) in ("bash", "sh", "zsh"):
            cmd = cmd[-1]
        else:
            import shlex

            cmd = shlex.join(cmd)
    if not isinstance(cmd, str) or not cmd:
        return None
    cwd = inp.get(spec[1]) if spec[1] else None
    return cmd, cwd if isinstance(cwd, str) and cwd else ref.project


def file_calls_of(prov: Provider, ref: SessionRef, record: Record) -> list[tuple[str, str]]:
    """``Provider.file_calls``'s default: the file a call of one of ``prov.file_tools`` names, with
    its op (a relative path joined to the session's project; none without one)."""
    spec = prov.file_tools.get(record.tool_name or "") if record.kind == "tool_call" else None
    inp = record.tool_input
    if spec is None or not isinstance(inp, dict):
        return []
    path = inp.get(spec[0])
    if not isinstance(path, str) or not path:
        return []
    if not os.path.isabs(path):
        if not ref.project:
            return []
        path = os.path.join(ref.project, path)
    return [(os.path.normpath(path), spec[1])]


@dataclass(frozen=True)
class FileQuery:
    """What a question asks of a provider's file events."""

    shell: Any
    """The shell grammar (files/shell.py ``GRAMMAR``): ``analyze(command, cwd)`` gives the files a
    command writes, reads or may write unnamed; ``rules()``, ``encode``/``decode`` let a provider
    cache analyses."""
    subagents: bool = True
    """Read subagents (lanes or child sessions): False with ``--no-subagents``."""
    subagents_only: bool = False
    """`files --subagents-only`: only subagents' touches are listed (they are read even when
    ``subagents`` is False)."""
    progress: bool = False
    """Show progress on the terminal while a long first index build runs (the CLI's choice)."""


# -- record events ----------------------------------------------------------------------------


@dataclass
class Change:
    """One file event of a shared record: a change it holds, a read or failed call of a file tool,
    the file a shell call names, or a whole view of a file."""

    ref: SessionRef
    record: Record
    change: FileChange
    seq: int = 0
    """The record's place in its session's read."""
    failed: bool = False
    """A file tool call whose result is an error (an edit whose old string was not found, a
    rejected patch, a read of a missing file): it changed nothing; `files` counts it apart."""
    evidence: str | None = None
    """For a view (``action: read`` with ``new_content``): why the output is the whole file."""
    settled: bool = True
    """For a view: False while its final newline is unknown (the content is given without one)."""

    @property
    def path(self) -> str:
        return self.change.path


@dataclass
class Shell:
    """A shell call of a session (its command as recorded, the directory it ran in)."""

    ref: SessionRef
    record: Record
    command: str
    cwd: str | None
    seq: int
    """The record's place in its session's read (orders calls that share an instant)."""


# -- lane events ------------------------------------------------------------------------------


@dataclass
class Touch:
    """One touch of a file in a lane of a deeper model (`files --by timeline`'s ``touch`` row)."""

    path: str | None
    """None: unresolved (``raw`` kept verbatim)."""
    raw: str | None
    op: str
    via: str
    """tool | shell | attachment | file-history"""
    tool: str | None
    verb: str | None
    resolution: str
    """structured | absolute | cwd-joined | cd-tracked | unresolved | recorded"""
    status: str
    """ok | error | no-result | observed"""
    lane: Any
    """The lane (``session_id``, ``display``, ``is_subagent``, ``parent_session_id``, ``agent_id``,
    ``path``)."""
    line: int
    timestamp: str | None
    turn: int | None
    tool_use_id: str | None = None
    detail: str | None = None
    interval: tuple[str | None, str | None] | None = None
    marker: str | None = None
    copy_of: tuple[str, int] | None = None
    """(session id, line) of the original this touch copies (a fork's copied record)."""

    @property
    def failed(self) -> bool:
        """A structured tool call whose result is an error (an Edit whose old_string was not
        found, a Write refused because the file changed since read, a Read of a missing file):
        the tool did nothing. A shell command that exits non-zero may still have written
        (`echo x > f; exit 4`), so its touches are never `failed`."""
        return self.via == "tool" and self.status == "error"


@dataclass(frozen=True)
class Unk:
    """An unknown piece of a replayed file (``many``: an unknown NUMBER of pieces)."""

    cause: str
    many: bool = False


@dataclass
class Step:
    """One event applied to a replayed file's state."""

    seq: int
    lane: str
    lane_path: str
    session_id: str
    is_subagent: bool
    line: int
    timestamp: str | None
    turn: int | None
    kind: str
    """anchor | transform | boundary | annotation | risk | noop"""
    what: str
    detail: str
    segment: int
    known: int | None = None
    total: int | None = None
    complete: bool = False
    patch: list[str] | None = None
    tool_use_id: str | None = None


@dataclass
class Replay:
    """A file replayed from a deeper model's lanes: one item per newline-separated piece (a file
    ending in a newline has a final empty piece), a known piece a ``str``, an unknown one
    :class:`Unk`; gaps are never filled."""

    path: str
    steps: list[Step] = field(default_factory=list)
    state: list | None = None
    """None: nothing ever seen."""
    exists: bool | None = None
    transcripts: int = 0
    unreadable: list = field(default_factory=list)
    risks_since_anchor: list[Step] = field(default_factory=list)
    shell_writes: int = 0
    boundaries: int = 0

    @property
    def complete(self) -> bool:
        return self.state is not None and all(isinstance(x, str) for x in self.state)

    @property
    def status(self) -> str:
        if self.exists is False:
            return "deleted"
        if self.state is None or not any(isinstance(x, str) for x in self.state):
            return "none"
        if self.complete:
            return "complete_at_risk" if self.risks_since_anchor else "complete"
        return "partial"

    @property
    def recorded(self) -> bool:
        """The lanes hold some record of the file (else another vocabulary may answer)."""
        return not (self.state is None and self.exists is None)

    def text(self) -> str | None:
        return "\n".join(self.state) if self.complete else None

    def ranges(self) -> list[dict]:
        return ranges(self.state or [])


def ranges(state: list) -> list[dict]:
    """Known / unknown runs with 1-based line numbers (numbers stop at the first unknown-count gap)."""
    out: list[dict] = []
    n = 1
    counting = True
    for x in state:
        kind = "known" if isinstance(x, str) else "gap"
        cause = None if isinstance(x, str) else x.cause
        many = isinstance(x, Unk) and x.many
        if out and out[-1]["kind"] == kind and out[-1]["cause"] == cause and not many and not out[-1]["many"]:
            out[-1]["lines"] += 1
            out[-1]["end"] = n if counting else None
        else:
            out.append({"kind": kind, "start": n if counting else None, "end": n if counting and not many else None,
                        "lines": None if many else 1, "cause": cause, "many": many})
        if many:
            counting = False
        n += 1
    for r in out:
        r.pop("many")
    return out


def render_text(rec: Replay) -> str:
    """The known lines with each gap as a ``⟪gap: ... - cause⟫`` line."""
    parts = []
    buf: list[str] = []
    for x in rec.state or []:
        if isinstance(x, str):
            buf.append(x)
        else:
            if buf:
                parts.append("\n".join(buf))
                buf = []
            tag = "unknown number of lines" if x.many else "1 line"
            parts.append(f"⟪gap: {tag} - {x.cause}⟫")
    if buf:
        parts.append("\n".join(buf))
    return "\n".join(parts)


@dataclass
class Cutoff:
    """`recover --at`: a line or turn of a lane's main transcript, or an instant (epoch seconds)."""

    line: int | None = None
    turn: int | None = None
    instant: float | None = None
    spec: str = ""


class LaneFileEvents:
    """The lane events of a deeper model (the interface a provider's implementation offers; see
    providers/claude/files ``ClaudeFileEvents``).

    Attributes: ``selected`` (the selection holds this provider's sessions: its summary line is
    shown), ``touches`` (:class:`Touch`, ordered, the query's lanes), ``transcripts`` (lanes
    read), ``problems``, ``copies`` (touches on a fork's copies: listed, not counted),
    ``unparsed`` (shell commands the grammar could not read), ``omissions`` (lines no reading took
    in), ``index`` (the index report of the reading: ``as_json()``, ``text()``, ``on``,
    ``counts``), ``root`` (its data root, for refetch commands)."""

    selected: bool = False
    transcripts: int = 0

    def replay(self, path: str, at: Cutoff | None = None) -> Replay:  # pragma: no cover - interface
        """The file at `path` replayed from the lanes' events (up to `at`)."""
        raise NotImplementedError

    def backups(self, path: str) -> list[dict]:  # pragma: no cover - interface
        """The client's own checkpoints of the file (`recover --list-backups`)."""
        raise NotImplementedError


@dataclass
class FileEvents:
    """One provider's file events for a question."""

    provider: str
    display: str
    sessions: int = 0
    """Sessions read for the record events."""
    changes: list[Change] = field(default_factory=list)
    shells: list[Shell] = field(default_factory=list)
    views: list[Change] = field(default_factory=list)
    """Whole views of files a shell read printed (``cat F``; ``head``/``sed -n 1,Np`` that printed
    fewer lines than asked) or a read tool printed where the reader vouches for it, as ``read``
    changes: anchors for `recover`, not changes (never listed by `files`)."""
    reads: list[Change] = field(default_factory=list)
    """Read calls of the client's read tools (``Provider.file_tools`` op ``read``), one ``read``
    change each (``failed`` when the result is an error): listed by `files`."""
    failed: list[Change] = field(default_factory=list)
    """Change calls of the client's file tools whose result is an error, one per file the call
    names, with the action it would have been: listed by `files` as failed, never applied."""
    reports: list[ReadReport] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    lanes: LaneFileEvents | None = None
    """The lane events of a deeper model (None: this provider answers with record events only)."""

    def omissions(self) -> dict[str, int]:
        c: Counter = Counter()
        for r in self.reports:
            c.update(r.omissions())
        return dict(c)


# -- the default: record events from the shared records -----------------------------------------


def refs_of(sel, name: str) -> list[SessionRef]:
    """The sessions of provider `name` in a selection (providers.scope.Selection)."""
    return [r for r in sel.refs if r.provider == name]


def from_records(prov: Provider, refs: list[SessionRef], q: FileQuery) -> FileEvents:
    """The record events of `refs` (sessions of `prov`), read in order, sessions in parallel halves."""
    from ..read.fanout import map_halves, no_gc

    out = FileEvents(prov.name, prov.display, sessions=len(refs))
    if not refs:
        return out
    grammar = q.shell
    with no_gc():
        results = map_halves(lambda ref: _session(prov, ref, grammar), refs, [r.size for r in refs])
    for got, rep, prob, shells, views, reads, failed in results:
        out.changes.extend(got)
        out.shells.extend(shells)
        out.views.extend(views)
        out.reads.extend(reads)
        out.failed.extend(failed)
        if prob is not None:
            out.problems.append(prob)
        out.reports.append(rep)
        out.problems.extend(rep.problems)
    return out


def _session(prov: Provider, ref: SessionRef, grammar):
    """(changes, report, problem, shells, views, reads, failed) of one session."""
    rep = ReadReport()
    got: list[Change] = []
    shells: list[Shell] = []
    views: list[Change] = []
    reads: list[Change] = []
    failed: list[Change] = []
    readers: dict[str, Shell] = {}  # call id -> a shell call that may print a whole file
    named: dict[str, tuple[Record, list[tuple[str, str]], int]] = {}  # call id -> a file tool call
    try:
        for i, r in enumerate(prov.read(ref, rep)):
            if r.copy_of is not None:
                continue
            for fc in r.file_changes:
                got.append(Change(ref, r, fc, i))
            if r.kind == "tool_call":
                if prov.file_tools or type(prov).file_calls is not Provider.file_calls:
                    fcs = prov.file_calls(ref, r)
                    if fcs:
                        if r.call_id:
                            named[r.call_id] = (r, fcs, i)
                        else:
                            _named(ref, r, fcs, i, None, prov, reads, failed, views)
                if prov.shell_tools:
                    sc = prov.shell_command(ref, r)
                    if sc is not None:
                        sh = Shell(ref, r, sc[0], sc[1], i)
                        shells.append(sh)
                        if r.call_id and any(w in sc[0] for w in ("cat", "head", "sed")):
                            readers[r.call_id] = sh
            elif r.kind == "tool_result":
                if r.call_id in named:
                    call, fcs, ci = named.pop(r.call_id)
                    _named(ref, call, fcs, ci, (r, i), prov, reads, failed, views)
                if r.call_id in readers:
                    v = _view(prov, readers.pop(r.call_id), r, i, grammar)
                    if v is not None:
                        views.append(v)
        for call, fcs, ci in named.values():  # no result on disk (a killed session): the call's own outcome
            _named(ref, call, fcs, ci, None, prov, reads, failed, views)
        views = [v for v in (_settle(v, got, shells, grammar) for v in views) if v is not None]
    except Exception as exc:  # a reader's bug: this session is unreadable, the answer goes on
        return got, rep, Problem(str(ref.paths[0]) if ref.paths else ref.session_id,
                                 f"reader failed: {type(exc).__name__}: {exc}"), shells, views, reads, failed
    return got, rep, None, shells, views, reads, failed


def _named(ref: SessionRef, call: Record, fcs: list[tuple[str, str]], seq: int, result: tuple[Record, int] | None,
           prov: Provider, reads: list[Change], failed: list[Change], views: list[Change]) -> None:
    """A file tool call with its result (or none): a ``read`` row per read (a complete view too when
    the reader vouches for its output), a failed row per change of a call that failed."""
    bad = call.is_error is True or (result is not None and result[0].is_error is True)
    for path, op in fcs:
        if op == "read":
            reads.append(Change(ref, call, FileChange(path, "read"), seq, failed=bad))
            got = prov.read_view(call, result[0]) if result is not None and not bad else None
            if got is not None and not got[2]:
                reads[-1].evidence = "every line, not whether the last ends with a newline"
            if got is not None:
                views.append(Change(ref, call, FileChange(path, "read", new_content=got[0]), result[1],
                                    evidence=got[1], settled=got[2]))
        elif bad:
            failed.append(Change(ref, call, FileChange(path, op), seq, failed=True))  # type: ignore[arg-type]


def _settle(v: Change, got: list[Change], shells: list[Shell], grammar) -> Change | None:
    """A view whose final newline its output cannot show (opencode's ``read``), settled by the next
    recorded change of the file in the session when nothing may have written it between (no shell
    call naming it or writing files it does not name): its old content, or a diff hunk reaching the
    last viewed line (jsdiff writes ``\\ No newline at end of file`` after a line without one), each
    checked against the viewed lines. None when nothing settles it: the view is not used."""
    if v.settled:
        return v
    path = v.change.path
    nxt = next((c for c in got if c.seq > v.seq and path in (c.change.path, c.change.move_to)), None)
    if nxt is None or nxt.change.path != path:
        return None
    for sh in shells:
        if v.seq < sh.seq < nxt.seq:
            an = grammar.analyze(sh.command, sh.cwd)
            if an.markers or an.parse_error or any(m.op not in ("read", "mkdir") and (m.path is None or m.path == path)
                                                   for m in an.mutations):
                return None
    lines = (v.change.new_content or "").split("\n")
    old = nxt.change.old_content
    eol: bool | None = None
    if old is not None:
        if old in (v.change.new_content, (v.change.new_content or "") + "\n"):
            eol = old.endswith("\n") if old else False
    elif nxt.change.diff is not None:
        eol = _diff_eol(nxt.change.diff, lines)
    if eol is None:
        return None
    content = (v.change.new_content or "") + ("\n" if eol else "")
    how = "its old content" if old is not None else "its diff"
    return Change(v.ref, v.record, FileChange(path, "read", new_content=content), v.seq,
                  evidence=f"{v.evidence}; the final newline ({'present' if eol else 'absent'}) from the next "
                           f"recorded change of the file, {nxt.record.locator} ({how})", settled=True)


def _diff_eol(diff: str, lines: list[str]) -> bool | None:
    """Whether the old file's last line (line ``len(lines)``) ended with a newline, as a unified diff
    shows it (each old line it quotes checked against ``lines``); None when no hunk reaches it or a
    quoted line differs."""
    import re

    n = len(lines)
    rows = diff.split("\n")
    k = None
    for i, row in enumerate(rows):
        m = re.match(r"@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@", row)
        if m:
            k = int(m.group(1))
            if m.group(2) == "0":
                k = None
            continue
        if k is None or not row or row[0] not in " -":
            continue
        if k > n or row[1:] != lines[k - 1]:
            return None
        if k == n:
            return not (i + 1 < len(rows) and rows[i + 1].startswith("\\"))
        k += 1
    return None


def _view(prov: Provider, sh: Shell, result: Record, seq: int, grammar) -> Change | None:
    """The whole file a shell read printed, as a ``read`` change on the call (at the result's place)."""
    ra = grammar.analyze(sh.command, sh.cwd).read
    if ra is None or ra.path is None or ra.start != 1:
        return None
    out = prov.shell_stdout(result)
    if out is None:
        return None
    if ra.count is not None:  # head -n N / sed -n 1,Np: whole only when it printed fewer lines than asked
        lines = out.count("\n") + (0 if out.endswith("\n") or not out else 1)
        if lines >= ra.count:
            return None
    return Change(sh.ref, sh.record, FileChange(ra.path, "read", new_content=out), seq,
                  evidence=f"the output of `{ra.kind}` that printed the whole file, as the reader vouches for it "
                           "(exited 0, not cut by the client)")


def norm(p: str) -> str:
    """A path normalised as the grammar and the readers resolve one (POSIX; Windows forms kept)."""
    import posixpath
    import re

    if p[:1] != "/" and (re.match(r"^[A-Za-z]:[\\/]", p) or p.startswith("\\\\")):
        import ntpath

        return ntpath.normpath(p)
    return posixpath.normpath(p)


def merged(evs: Iterable[FileEvents]) -> FileEvents:
    """Every provider's record events as one, each list in answer order (instant, session, read
    order): what `files` lists and `recover` rebuilds from across providers."""
    from ..timefmt import parse_ts

    def ts(s: str | None) -> float:
        d = parse_ts(s)
        return d.timestamp() if d else float("-inf")

    out = FileEvents("", "")
    for e in evs:
        out.sessions += e.sessions
        out.changes.extend(e.changes)
        out.shells.extend(e.shells)
        out.views.extend(e.views)
        out.reads.extend(e.reads)
        out.failed.extend(e.failed)
        out.reports.extend(e.reports)
        out.problems.extend(e.problems)
    out.changes.sort(key=lambda c: (ts(c.record.instant), c.ref.session_id))
    out.views.sort(key=lambda c: (ts(c.record.instant), c.ref.session_id))
    out.reads.sort(key=lambda c: (ts(c.record.instant), c.ref.session_id, c.seq))
    out.failed.sort(key=lambda c: (ts(c.record.instant), c.ref.session_id, c.seq))
    return out


__all__ = ["FileQuery", "Change", "Shell", "Touch", "Unk", "Step", "Replay", "Cutoff", "LaneFileEvents",
           "FileEvents", "from_records", "refs_of", "ranges", "render_text", "merged", "norm"]
