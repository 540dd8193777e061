"""`recover` over record events: a file rebuilt from the changes the shared records hold.

The latest change holding the file's whole new content (``FileChange.new_content``: Gemini CLI's
recorded writes, Crush's file history, opencode's write parts), or a whole view a read printed
(``read`` changes the reader vouches for), is a complete view of the file; later changes that
carry a unified diff are applied to it exactly (whatthepatch). A shell call after it is read by
the shell grammar (shell.py): a named write stops the rebuild, an unnamed possible writer puts it
at risk. `files` lists the shell calls' named files as ``shell:<op>`` changes (:func:`shell_touches`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from ..providers.base import FileChange, Record, SessionRef
from ..providers.fileevents import Change, Shell
from ..timefmt import parse_ts
from .shell import GRAMMAR


def analyze(command: str, cwd: str | None):
    """The shell grammar's analysis, once per (command, cwd) in a process."""
    return GRAMMAR.analyze(command, cwd)


def _ts(s: str | None) -> float:
    d = parse_ts(s)
    return d.timestamp() if d else float("-inf")


def with_views(chs: list[Change], views: list[Change], path: str) -> list[Change]:
    """`chs` with the whole views of `path` merged in their place (instant, then read order)."""
    mine = [v for v in views if v.change.path == path]
    if not mine:
        return chs
    return sorted(chs + mine, key=lambda c: (_ts(c.record.instant), c.ref.session_id, c.seq))


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
