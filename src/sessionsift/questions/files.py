"""`files` over the shared records: the file changes a provider's records hold.

Each ``FileChange`` on a record is one change row (path, action, whether the record holds the
whole new content, the old content, or a diff). The reader's file tools (``Provider.file_tools``)
add a ``read`` row per read call and a failed row per change call whose result is an error, as
Claude Code's own `files` path lists its Read calls and failed Edits. A change
the client made without recording it (a shell command that writes) leaves no ``FileChange``: the
shell calls themselves are kept (``Shell``, from the reader's ``shell_tools``) so `recover` can say
when one ran after the content it rebuilt (:func:`shell_after`).
"""

from __future__ import annotations

import os
from collections import Counter
from functools import lru_cache
from dataclasses import dataclass, field

from ..providers.base import FileChange, Problem, Provider, ReadReport, Record, SessionRef
from ..timefmt import parse_ts


@dataclass
class Change:
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


@dataclass
class SharedChanges:
    changes: list[Change] = field(default_factory=list)
    shells: list[Shell] = field(default_factory=list)
    views: list[Change] = field(default_factory=list)
    """Whole views of files a shell read printed (``cat F``; ``head``/``sed -n 1,Np`` that printed
    fewer lines than asked), as ``read`` changes on the shell call: anchors for `recover`, not
    changes (never listed by `files`)."""
    reads: list[Change] = field(default_factory=list)
    """Read calls of the client's read tools (``Provider.file_tools`` op ``read``: Gemini CLI
    ``read_file``, opencode ``read``, Crush ``view``), one ``read`` change each (``failed`` when
    the result is an error): listed by `files` as Claude Code's Read calls are."""
    failed: list[Change] = field(default_factory=list)
    """Change calls of the client's file tools whose result is an error (a ``replace`` whose old
    string was not found, a rejected ``apply_patch``, a failed ``edit``), one per file the call
    names, with the action it would have been: listed by `files` as failed, never applied."""
    reports: list[ReadReport] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    def omissions(self) -> dict[str, int]:
        c: Counter = Counter()
        for r in self.reports:
            c.update(r.omissions())
        return dict(c)


def _session_changes(pair: tuple[Provider, SessionRef]):
    """(changes, report, problem, shells, views, reads, failed) of one session."""
    prov, ref = pair
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
                    v = _view(prov, readers.pop(r.call_id), r, i)
                    if v is not None:
                        views.append(v)
        for call, fcs, ci in named.values():  # no result on disk (a killed session): the call's own outcome
            _named(ref, call, fcs, ci, None, prov, reads, failed, views)
        views = [v for v in (_settle(v, got, shells) for v in views) if v is not None]
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


def _settle(v: Change, got: list[Change], shells: list[Shell]) -> Change | None:
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
            an = analyze(sh.command, sh.cwd)
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


def _view(prov: Provider, sh: Shell, result: Record, seq: int) -> Change | None:
    """The whole file a shell read printed, as a ``read`` change on the call (at the result's place)."""

    ra = analyze(sh.command, sh.cwd).read
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


def changes(pairs: list[tuple[Provider, SessionRef]]) -> SharedChanges:
    from ..read.fanout import map_halves, no_gc

    out = SharedChanges()
    pairs = list(pairs)
    with no_gc():
        results = map_halves(_session_changes, pairs, [r.size for _, r in pairs])
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
    out.changes.sort(key=lambda c: (_ts(c.record.instant), c.ref.session_id))
    out.views.sort(key=lambda c: (_ts(c.record.instant), c.ref.session_id))
    out.reads.sort(key=lambda c: (_ts(c.record.instant), c.ref.session_id, c.seq))
    out.failed.sort(key=lambda c: (_ts(c.record.instant), c.ref.session_id, c.seq))
    return out


def with_views(chs: list[Change], views: list[Change], path: str) -> list[Change]:
    """`chs` with the whole views of `path` merged in their place (instant, then read order)."""
    mine = [v for v in views if v.change.path == path]
    if not mine:
        return chs
    return sorted(chs + mine, key=lambda c: (_ts(c.record.instant), c.ref.session_id, c.seq))


@lru_cache(maxsize=8192)
def analyze(command: str, cwd: str | None):
    """files/shell.py's analysis, once per (command, cwd) in a process (agents repeat commands;
    nobody changes an analysis)."""
    from ..files.shell import analyze as _analyze

    return _analyze(command, cwd)


def _ts(s: str | None) -> float:
    d = parse_ts(s)
    return d.timestamp() if d else float("-inf")


def by_file(chs: list[Change]) -> dict[str, list[Change]]:
    out: dict[str, list[Change]] = {}
    for c in chs:
        out.setdefault(c.path, []).append(c)
        if c.change.move_to:
            out.setdefault(c.change.move_to, []).append(c)
    return out


def by_dir(chs: list[Change]) -> dict[str, list[Change]]:
    out: dict[str, list[Change]] = {}
    for c in chs:
        out.setdefault(os.path.dirname(c.path) or ".", []).append(c)
    return out


def latest_complete_view(chs: list[Change], path: str, until: str | None = None) -> Change | None:
    """The last change of `path` whose record holds the whole new content (optionally at or
    before the instant `until`): a complete view of the file as the session left it."""
    cut = parse_ts(until) if until else None
    best = None
    for c in chs:
        target = c.change.move_to or c.change.path
        if target != path and c.change.path != path:
            continue
        if cut is not None:
            d = parse_ts(c.record.instant)
            if d is None or d > cut:
                continue
        if c.change.action == "delete" and c.change.path == path:
            best = c
        elif c.change.new_content is not None and target == path:
            best = c
    return best


@dataclass
class Rebuild:
    """A file's content from the recorded changes of other providers' sessions."""

    status: str
    """``complete_view`` (the last change holds the whole content), ``rebuilt`` (a complete view
    plus every later diff applied exactly), ``stale`` (a later change could not be applied: the
    content is as of the last change that could), ``deleted``, ``moved`` (moved away),
    ``no_complete_view`` (changes, none holding the whole content), ``no_record``."""
    content: str | None
    anchor: Change | None
    applied: list[Change] = field(default_factory=list)
    stopped_at: Change | None = None
    why: str | None = None

    @property
    def complete(self) -> bool:
        return self.status in ("complete_view", "rebuilt")


def apply_diff(content: str, diff: str) -> str:
    """`content` with the unified-diff hunks of `diff` applied, each hunk's context checked
    exactly at its stated lines (whatthepatch); raises ValueError when they do not apply."""
    import whatthepatch

    patches = list(whatthepatch.parse_patch(diff))
    if not patches or not any(p.changes for p in patches):
        raise ValueError("no hunk in the diff")
    lines = content.split("\n")
    trailing = content.endswith("\n")
    if trailing:
        lines = lines[:-1]
    for p in patches:
        try:
            lines = whatthepatch.apply_diff(p, lines)
        except Exception as exc:  # HunkApplyException and friends: the diff does not fit this content
            raise ValueError(str(exc)) from exc
    return "\n".join(lines) + ("\n" if trailing or not content else "")


def rebuild(chs: list[Change], path: str) -> Rebuild:
    """The file at `path` after the changes `chs` (in order): the last complete view (or
    delete), then every later diff applied exactly; stops, saying why, at a change that cannot be
    applied (a diff that does not fit, an edit with no diff)."""
    mine = [c for c in chs if path in (c.change.path, c.change.move_to)]
    if not mine:
        return Rebuild("no_record", None, None)
    anchor_i = None
    for i, c in enumerate(mine):
        ch = c.change
        if (ch.new_content is not None and (ch.move_to or ch.path) == path) or \
                (ch.action == "delete" and ch.path == path and ch.new_content is None):
            anchor_i = i
    if anchor_i is None:
        # moved here (Codex `*** Move to`): the source's content before the move, then the move's diff
        mv_i = next((i for i in range(len(mine) - 1, -1, -1)
                     if mine[i].change.move_to == path and mine[i].change.path != path), None)
        if mv_i is not None:
            mv = mine[mv_i]
            src = rebuild(chs[:next(k for k, c in enumerate(chs) if c is mv)], mv.change.path)
            if src.complete and src.content is not None:
                return _apply(Rebuild(src.status, src.content, src.anchor, list(src.applied)), mine[mv_i:], path)
        return Rebuild("no_complete_view", None, None, why="no change holds the whole content (diffs or edits only)")
    anchor = mine[anchor_i]
    if anchor.change.new_content is None:
        content = None
        status = "deleted"
    else:
        content = anchor.change.new_content
        status = "complete_view"
    return _apply(Rebuild(status, content, anchor), mine[anchor_i + 1:], path)


def _apply(out: Rebuild, later: list[Change], path: str) -> Rebuild:
    """`out` (its content as of its anchor) with each later change applied exactly."""
    content = out.content
    for c in later:
        ch = c.change
        if ch.move_to == path and ch.path != path and ch.diff is None and content is not None:
            out.applied.append(c)  # moved here unchanged
            out.status = "rebuilt"
            continue
        if ch.path == path and ch.move_to and ch.move_to != path:
            return Rebuild("moved", None, out.anchor, out.applied, c, f"moved to {ch.move_to} at {c.record.locator}")
        if content is None:
            out.status, out.stopped_at, out.why = "stale", c, "changed after its recorded delete, without its content"
            return out
        if ch.diff is None:
            out.status, out.stopped_at, out.why = "stale", c, f"a later {ch.action} records no diff"
            return out
        try:
            content = apply_diff(content, ch.diff)
        except ValueError as exc:
            out.status, out.stopped_at, out.why = "stale", c, f"a later diff does not apply: {exc}"
            return out
        out.content = content
        out.applied.append(c)
        out.status = "rebuilt"
    return out


@dataclass
class ShellRisk:
    """A shell call after the content `recover` rebuilt that may have changed the file."""
    shell: Shell
    effect: str
    """``write`` (it names the file: the content is not the file's any more), ``delete`` (it
    removes or moves the file away), ``possible`` (it may write files it does not name)."""
    why: str


def _later(a: "Shell | Change", b: "Shell | Change") -> bool:
    """Whether `a` came after `b`: by their place in the read within one session, else by instant
    (an instant that cannot be read counts as later: the cautious side)."""
    if a.ref.session_id == b.ref.session_id and a.ref.provider == b.ref.provider:
        return a.seq > b.seq
    da, db = parse_ts(a.record.instant), parse_ts(b.record.instant)
    return da is None or db is None or da > db


def shell_after(shells: list[Shell], path: str, last: Change, until: str | None = None) -> list[ShellRisk]:
    """The shell calls after `last` (the rebuild's anchor; up to the instant `until`) that may
    have changed `path`, each with what it does to it (the Bash grammar's
    analysis, files/shell.py: a named write, a delete or move away, or a command that writes files
    it does not name -- an interpreter, a formatter, an unresolved operand, an unparsable line --
    counted when it ran in the anchor's session or from a directory that holds the file)."""

    cut = parse_ts(until) if until else None
    out: list[ShellRisk] = []
    for sh in shells:
        if not _later(sh, last):
            continue
        if cut is not None and ((d := parse_ts(sh.record.instant)) is None or d > cut):
            continue
        an = analyze(sh.command, sh.cwd)
        # an unnamed write is counted where it could plausibly land: in the anchor's own session,
        # or run from a directory holding the file (not every interpreter run of every project)
        near = (sh.ref.session_id == last.ref.session_id and sh.ref.provider == last.ref.provider) or \
            bool(sh.cwd and path.startswith(sh.cwd.rstrip("/") + "/"))
        for m in an.mutations:
            if m.op in ("read", "mkdir"):
                continue
            if m.path is None:
                if near:
                    out.append(ShellRisk(sh, "possible", f"`{m.verb}` {m.op} of unresolved operand {m.raw!r}"))
                continue
            inside = path.startswith(m.path.rstrip("/") + "/")
            if m.path != path and not inside:
                continue
            if m.op in ("delete", "move-src"):
                out.append(ShellRisk(sh, "delete", f"`{m.verb}` removes it ({m.op})"))
            elif m.op == "touch":
                continue  # content unchanged if it existed
            else:
                out.append(ShellRisk(sh, "write", f"`{m.verb}` {m.op} of it"))
        for mk in an.markers if near else ():
            out.append(ShellRisk(sh, "possible", f"class marker {mk}: mutates files it does not name"))
        if an.parse_error and near:
            out.append(ShellRisk(sh, "possible", "the shell parser could not read this command: it may have written "
                                                 "the file"))
    return out


def against_shells(rb: Rebuild, chs: list[Change], shells: list[Shell], path: str,
                   until: str | None = None) -> tuple[Rebuild, list[ShellRisk]]:
    """`rb` checked against the shell calls after its anchor: a command that names the file as
    written (``sed -i f``, ``>> f``) stops the rebuild there (``stale``: the content as of the last
    change before it; a removal with nothing recorded after it: ``deleted``); commands that may
    write files they do not name are returned as ``possible`` risks (the caller says the content
    is at risk). Changes recorded after a named shell write are not applied over it: a diff's
    context checks only its own lines."""
    if rb.anchor is None or rb.status in ("no_record", "no_complete_view"):
        return rb, []
    risks = shell_after(shells, path, rb.anchor, until)
    hard = [r for r in risks if r.effect in ("write", "delete")]
    if not hard or rb.status == "moved":
        return rb, risks
    first = hard[0]
    kept = [c for c in rb.applied if not _later(c, first.shell)]
    later = [c for c in rb.applied if _later(c, first.shell)]
    loc = first.shell.record.locator
    if first.effect == "delete" and not later and all(r.effect == "delete" for r in hard) \
            and rb.stopped_at is None:
        return Rebuild("deleted", None, rb.anchor, kept, _Stop(first.shell),
                       f"{first.why} at {loc} (a shell command)"), risks
    if rb.stopped_at is not None and not later and not _later(rb.stopped_at, first.shell):
        return rb, risks  # the rebuild had already stopped before the shell command
    out = _apply(Rebuild("complete_view" if rb.anchor.change.new_content is not None else "deleted",
                         rb.anchor.change.new_content, rb.anchor), kept, path)
    if out.status in ("moved", "stale"):
        return out, risks
    out.status, out.stopped_at = "stale", _Stop(first.shell)
    out.why = f"{first.why} at {loc} (a shell command: what it wrote is not recorded)"
    return out, risks


@dataclass
class _Stop:
    """A shell call where a rebuild stopped (``Rebuild.stopped_at`` is read for its record and ref)."""
    shell: Shell

    @property
    def record(self) -> Record:
        return self.shell.record

    @property
    def ref(self) -> SessionRef:
        return self.shell.ref

    @property
    def seq(self) -> int:
        return self.shell.seq


def shell_touches(shells: list[Shell]) -> tuple[list[Change], int]:
    """The files the sessions' shell calls name as written (the Bash analysis, files/shell.py), as
    ``shell:<op>`` changes on the call (``shell:write``, ``shell:append``, ``shell:edit-in-place``,
    ``shell:delete``, ``shell:move-src``/``move-dest``, ``shell:copy-dest``, ...), and the file a
    read command prints (``shell:read``, as Claude Code's Bash reads are listed): what `files`
    lists beside the recorded changes (never an anchor or a diff for `recover`); plus how many
    calls wrote files they do not name or could not be parsed (unresolved operands, markers)."""

    out: list[Change] = []
    unnamed = 0
    for sh in shells:
        an = analyze(sh.command, sh.cwd)
        for m in an.mutations:
            if m.op != "read" and m.path is not None:
                out.append(Change(sh.ref, sh.record, FileChange(m.path, f"shell:{m.op}"), sh.seq))  # type: ignore[arg-type]
        if an.read is not None and an.read.path:  # `cat F`, `head -n N F`, `sed -n A,Bp F`: Claude Code's shell:read
            out.append(Change(sh.ref, sh.record, FileChange(an.read.path, "shell:read"), sh.seq))  # type: ignore[arg-type]
        if an.markers or an.parse_error or any(m.path is None and m.op != "read" for m in an.mutations):
            unnamed += 1
    out.sort(key=lambda c: (_ts(c.record.instant), c.ref.session_id, c.seq))
    return out, unnamed
