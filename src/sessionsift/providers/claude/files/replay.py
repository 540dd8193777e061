"""Claude Code's replay of one file (the lane events' answer to `recover`): its content rebuilt
from what the transcripts saw of it.

The state is a list with one item per newline-separated piece of the file (a file ending in a
newline has a final empty piece, REC-050): a known piece is a `str`, an unknown one is `Unk`.
`Unk(many=True)` stands for an unknown NUMBER of pieces. Unknown is never filled: gaps stay gaps.

Replayed in transcript order (cross-lane by timestamp):
- anchors: a whole-file Read echo (raw text, REC-044), a Write (its tool_use content, which the
  echo may have stripped: FH-050), an Edit/MultiEdit echo's `originalFile` (a pre-image; null or ""
  is no anchor: REC-060), a post-compaction `file` attachment, a quoted heredoc consumed by
  cat/tee (wherever the grammar nests its redirect), a clean `cat`/`head -n`/`sed -n 'A,Bp'`
  result that is the whole stdout of its command - also after a change in the same command
  (`sed -i ... f && cat f`, `echo x >> f && cat f`: the view after the change);
- transforms: Edit / MultiEdit (string replacement on a complete state, else their
  `structuredPatch` hunks placed by line number);
- boundaries: a modified-since-read rejection (hard), an `edited_text_file` attachment (hard; its
  gutter lines are kept), a `staleReadFileStateHint` naming the file (hard), `staleRecovered`
  (annotation; without a pre-image the lines outside the edit become unknown), a shell write to
  the file (opaque), a file-history checkpoint that disagrees with a complete reconstruction
  (rebase: the reconstruction is dropped, the checkpoint is NOT merged in);
- risks: commands that may write files they do not name (class markers, `$VAR`/glob operands).
"""

from __future__ import annotations

import difflib
from pathlib import Path

from ....timefmt import parse_ts
from ...fileevents import Cutoff, Replay, Step, Unk
from ..discover import Scope
from .collect import _ts, collect
from .events import (MODIFIED_SINCE_READ, STALE_NOTE, Attach, Backup, Call, LaneEvents, norm, parse_gutter,
                     stale_hint_paths)

_KEEP = object()

Recovery = Replay
"""The replay's result (providers/fileevents.py ``Replay``)."""


def known(text: str) -> list:
    return text.split("\n")


def _indexable(state: list, upto: int) -> bool:
    return not any(isinstance(x, Unk) and x.many for x in state[:upto])


def _many_free(state: list) -> bool:
    return not any(isinstance(x, Unk) and x.many for x in state)


def _all_unknown(cause: str) -> list:
    return [Unk(cause, True)]


def _window(state: list | None, start: int, pieces: list[str], total: int | None, cause_outside: str) -> list:
    """Place `pieces` at 1-based `start`; keep prior knowledge only where it stays consistent."""
    s0 = max(start, 1) - 1
    if total is not None and state is not None and _many_free(state) and len(state) == total:
        prior = list(state)
        agree = all(isinstance(prior[s0 + i], Unk) or prior[s0 + i] == p for i, p in enumerate(pieces)
                    if s0 + i < len(prior))
        if agree:
            for i, p in enumerate(pieces):
                if s0 + i < len(prior):
                    prior[s0 + i] = p
            return prior
    head = [Unk(cause_outside)] * s0
    if total is None:
        return head + list(pieces) + [Unk(cause_outside, True)]
    tail = max(total - s0 - len(pieces), 0)
    return head + list(pieces) + [Unk(cause_outside)] * tail


def _apply_hunks(state: list, hunks: list, where: str) -> tuple[list, bool]:
    """Apply structuredPatch hunks (REC-062) by line number. Returns (state, consistent)."""
    st = list(state)
    delta = 0
    consistent = True
    for h in hunks:
        if not isinstance(h, dict) or not isinstance(h.get("lines"), list):
            return _all_unknown(f"unreadable structuredPatch at {where}"), False
        old, new = [], []
        last = None
        old_noeol = new_noeol = False
        for l in h["lines"]:
            if not isinstance(l, str) or not l:
                continue
            if l[0] == "\\":
                if last in (" ", "-"):
                    old_noeol = True
                if last in (" ", "+"):
                    new_noeol = True
                continue
            if l[0] in " -":
                old.append(l[1:])
            if l[0] in " +":
                new.append(l[1:])
            last = l[0]
        if old_noeol and not new_noeol:
            new.append("")
        elif new_noeol and not old_noeol:
            old.append("")
        i0 = int(h.get("oldStart") or 1) - 1 + delta
        if i0 < 0 or not _indexable(st, i0 + len(old)):
            return _all_unknown(f"edit at {where} landed where the line numbering is unknown"), False
        while len(st) < i0 + len(old):
            st.append(Unk(f"beyond the known end, before {where}"))
        for i, o in enumerate(old):
            cur = st[i0 + i]
            if isinstance(cur, str) and cur != o:
                consistent = False
        st[i0 : i0 + len(old)] = new
        delta += len(new) - len(old)
    return st, consistent


class Replayer:
    def __init__(self, path: str, home: Path | None):
        self.path = path
        self.home = home
        self.rec = Replay(path)
        self.seg = 0
        self.seq = 0
        self.last_change: float | None = None
        """When the last change of the file we replayed happened (a checkpoint older than that
        says nothing about the current state)."""

    # -- bookkeeping --------------------------------------------------------------------------
    def step(self, src, kind: str, what: str, detail: str, patch: list[str] | None = None,
             tool_use_id: str | None = None, line: int | None = None, ts: str | None = None) -> Step:
        if kind == "boundary":
            self.seg += 1
            self.rec.boundaries += 1
        st = self.rec.state
        s = Step(self.seq, src.lane.display, str(src.lane.path), src.lane.session_id, src.lane.is_subagent,
                 line if line is not None else getattr(src, "pos", None) or src.line,
                 ts or getattr(src, "result_ts", None) or src.timestamp, getattr(src, "turn", None), kind, what,
                 detail, self.seg,
                 known=sum(isinstance(x, str) for x in st) if st is not None else None,
                 total=len(st) if st is not None and _many_free(st) else None,
                 complete=self.rec.complete, patch=patch, tool_use_id=tool_use_id)
        self.seq += 1
        self.rec.steps.append(s)
        if kind == "risk":
            self.rec.risks_since_anchor.append(s)
        if kind in ("anchor", "transform", "boundary") and what not in ("read", "shell-read", "harness-read"):
            t = _ts(s.timestamp)
            if t is not None:
                self.last_change = max(self.last_change or t, t)
        return s

    def set(self, state: list | None, full_anchor: bool = False, exists: bool | None | object = True) -> None:
        """`exists`: True or False, None (unknown: an opaque change may have created or removed the
        file), or `_KEEP` (what was known stays)."""
        self.rec.state = state
        if exists is not _KEEP:
            self.rec.exists = exists  # type: ignore[assignment]
        if full_anchor:
            self.rec.risks_since_anchor = []

    # -- events ----------------------------------------------------------------------------
    def call(self, c: Call) -> None:
        if c.tool == "Bash":
            self.shell(c)
        elif c.path == self.path:
            self.tool_call(c)
        else:
            return
        if c.survival == "abandoned" and self.rec.steps and self.rec.steps[-1].tool_use_id == c.tool_use_id \
                and self.rec.steps[-1].kind in ("anchor", "transform", "boundary") \
                and self.rec.steps[-1].what not in ("read", "shell-read"):
            self.step(c, "risk", "rewound-write", "this change lies on a branch the conversation was rewound "
                      "past: if the rewind chose 'Restore code', the client undid it", tool_use_id=c.tool_use_id)

    def tool_call(self, c: Call) -> None:
        where = f"L{c.pos}"
        if c.is_error is None:
            self.step(c, "risk", "no-result", f"{c.tool} has no recorded result (interrupted?); it may have applied",
                      tool_use_id=c.tool_use_id)
            if c.tool != "Read":
                self.set(_all_unknown(f"{c.tool} at L{c.line} has no recorded result"))
            return
        if not c.ok:
            txt = c.result_text or (c.echo if isinstance(c.echo, str) else "") or ""
            if MODIFIED_SINCE_READ in txt:
                self.set(_all_unknown(f"modified since read (rejection at {where})"), exists=None)
                self.step(c, "boundary", "modified-since-read", "the client refused the write: the file changed "
                          "on disk since the last Read", tool_use_id=c.tool_use_id)
            else:
                self.step(c, "noop", "rejected", f"{c.tool} failed: {txt[:160]}", tool_use_id=c.tool_use_id)
            return
        echo = c.echo if isinstance(c.echo, dict) else None
        if c.tool == "Read":
            return self.read(c, echo)
        if c.tool == "Write":
            content = c.input.get("content")
            if not isinstance(content, str):
                content = echo.get("content") if echo and isinstance(echo.get("content"), str) else None
            if content is None:
                self.set(_all_unknown(f"Write at {where} carries no content"))
                self.step(c, "boundary", "write", "Write without content", tool_use_id=c.tool_use_id)
                return
            before = self.rec.text()
            self.set(known(content), full_anchor=True)
            self.step(c, "anchor", "write", f"{(echo or {}).get('type') or 'write'}: {len(content)} chars",
                      patch=_diff(before, content, self.path) if before is not None else None,
                      tool_use_id=c.tool_use_id)
            return
        if c.tool in ("Edit", "MultiEdit"):
            return self.edit(c, echo)
        if c.tool == "NotebookEdit":
            upd = echo.get("updated_file") if echo else None
            if isinstance(upd, str):
                self.set(known(upd), full_anchor=True)
                self.step(c, "anchor", "notebook-edit", "NotebookEdit echo carries updated_file",
                          tool_use_id=c.tool_use_id)
            else:
                self.set(_all_unknown(f"NotebookEdit at {where} (cell edit; notebook JSON not in the echo)"))
                self.step(c, "boundary", "notebook-edit", "cell-level edit, resulting JSON unknown",
                          tool_use_id=c.tool_use_id)

    def read(self, c: Call, echo: dict | None) -> None:
        f = echo.get("file") if echo else None
        typ = echo.get("type") if echo else None
        if typ == "file_unchanged":
            self.step(c, "noop", "read", "file_unchanged: the client says nothing changed since its last Read",
                      tool_use_id=c.tool_use_id)
            return
        if isinstance(f, dict) and isinstance(f.get("content"), str) and typ in (None, "text"):
            self._read_payload(c, f, "read", c.tool_use_id)
            return
        if typ in ("image", "pdf", "parts", "notebook"):
            if self.rec.state is None:
                self.set(_all_unknown(f"only a {typ} Read (L{c.pos}): no text content in the transcript"))
            self.step(c, "noop", "read", f"{typ} Read: no text content", tool_use_id=c.tool_use_id)
            return
        # no echo (workflow lanes, BASH-025): fall back to the gutter-rendered tool_result text
        txt = c.result_text or ""
        g = parse_gutter(txt)
        whole = (g and g[0][0] == 1 and all(b[0] == a[0] + 1 for a, b in zip(g, g[1:]))
                 and "offset" not in c.input and "limit" not in c.input
                 and "[Truncated" not in txt and "<system-reminder>" not in txt
                 and len(g) == len(txt.split("\n")))
        if whole:
            pieces = [t for _, t in g]
            self.set(pieces, full_anchor=True)
            self.step(c, "anchor", "read", f"whole file from the rendered Read text (no echo in this lane), "
                      f"{len(pieces)} pieces", tool_use_id=c.tool_use_id)
            return
        if g:
            pieces = [t for _, t in g]
            self.set(_window(self.rec.state, g[0][0], pieces, None,
                             f"outside the gutter-rendered Read at L{c.pos} (no echo)"))
            self.step(c, "anchor", "read", f"rendered lines {g[0][0]}-{g[-1][0]} (no echo; total unknown)",
                      tool_use_id=c.tool_use_id)
        else:
            self.step(c, "noop", "read", "Read result without readable content", tool_use_id=c.tool_use_id)

    def _read_payload(self, src, f: dict, what: str, tuid: str | None) -> None:
        content = f["content"]
        start = f.get("startLine") if isinstance(f.get("startLine"), int) else 1
        num = f.get("numLines") if isinstance(f.get("numLines"), int) else None
        total = f.get("totalLines") if isinstance(f.get("totalLines"), int) else None
        trunc = f.get("truncatedByTokenCap") is True
        pieces = content.split("\n")
        if start <= 1 and not trunc and total is not None and len(pieces) == total:
            before = self.rec.text()
            self.set(pieces, full_anchor=True)
            changed = before is not None and before != content
            self.step(src, "anchor", what, f"whole file, {total} pieces" +
                      (" - differs from the reconstruction (an unseen change)" if changed else ""),
                      patch=_diff(before, content, self.path) if changed else None, tool_use_id=tuid)
            return
        if num is not None and len(pieces) > num:
            pieces = pieces[:num]
        if trunc and total == 1:
            pieces = []  # FH-043: a character-branch cut mid-line is indistinguishable from a whole line
        self.set(_window(self.rec.state, start, pieces, total,
                         f"outside the {'token-cap-truncated' if trunc else 'windowed'} read at L{src.pos if hasattr(src, 'pos') else src.line}"))
        self.step(src, "anchor", what, f"lines {max(start, 1)}-{max(start, 1) + len(pieces) - 1} of {total}"
                  + (" (truncatedByTokenCap)" if trunc else ""), tool_use_id=tuid)

    def edit(self, c: Call, echo: dict | None) -> None:
        where = f"L{c.pos}"
        orig = echo.get("originalFile") if echo else None
        stale = bool(echo and echo.get("staleRecovered")) or STALE_NOTE in (c.result_text or "")
        if c.tool == "MultiEdit":
            edits = c.input.get("edits") if isinstance(c.input.get("edits"), list) else []
        else:
            edits = [c.input]
        if isinstance(orig, str) and orig != "":
            before = self.rec.text()
            if before is not None and before != orig:
                self.step(c, "annotation", "rebase", "the edit's originalFile differs from the reconstruction: "
                          "an unseen change happened before this edit", tool_use_id=c.tool_use_id)
            self.set(known(orig), full_anchor=True)
        if stale:
            if not (isinstance(orig, str) and orig != ""):
                # the file held other changes not in our view: only the edited region stays known
                self.set(_all_unknown(f"staleRecovered at {where}: the file had other unseen changes"))
            self.step(c, "annotation", "stale-recovered", "staleRecovered: the edit applied to a file that had "
                      "changed on disk since the last Read", tool_use_id=c.tool_use_id)
        hunks = echo.get("structuredPatch") if echo else None
        text = self.rec.text()
        if text is not None:
            before = text
            ok = True
            for ed in edits:
                old, new = ed.get("old_string"), ed.get("new_string")
                if not isinstance(old, str) or not isinstance(new, str):
                    ok = False
                    break
                if old == "" and text == "":
                    text = new
                elif old and old in text:
                    text = text.replace(old, new) if ed.get("replace_all") else text.replace(old, new, 1)
                else:
                    ok = False
                    break
            if ok:
                self.set(known(text))
                self.step(c, "transform", c.tool.lower(), f"{len(edits)} replacement(s) applied to the complete text",
                          patch=_diff(before, text, self.path), tool_use_id=c.tool_use_id)
                return
        if isinstance(hunks, list) and hunks and self.rec.state is not None:
            st, consistent = _apply_hunks(self.rec.state, hunks, where)
            if not consistent:
                self.set(st)
                self.step(c, "annotation", "conflict", "the edit's patch context disagrees with the reconstruction",
                          tool_use_id=c.tool_use_id)
            self.set(st)
            self.step(c, "transform", c.tool.lower(), f"{len(hunks)} hunk(s) placed by line number",
                      patch=_hunks_text(hunks, self.path), tool_use_id=c.tool_use_id)
            return
        self.set(_all_unknown(f"{c.tool} at {where} could not be placed (no usable patch)"))
        self.step(c, "boundary", c.tool.lower(), "edit could not be placed", tool_use_id=c.tool_use_id)

    def shell(self, c: Call) -> None:
        sh = c.shell
        if sh is None:
            return
        hit = False
        for m in sh.mutations:
            p = m.path
            if p is None:
                if m.op not in ("mkdir", "read"):
                    self.step(c, "risk", "possible-write", f"{m.verb} {m.op} of unresolved operand {m.raw!r}",
                              tool_use_id=c.tool_use_id)
                continue
            inside = self.path.startswith(p.rstrip("/") + "/")
            if p != self.path and not inside:
                continue
            hit = True
            clean = c.ok and isinstance(c.echo, dict) and not c.echo.get("interrupted")
            if m.op == "delete" or m.op == "move-src":
                self.set([], exists=False)
                self.step(c, "boundary", "delete", f"{m.verb} removed it ({m.resolution})", tool_use_id=c.tool_use_id)
            elif m.op in ("mkdir",):
                continue
            elif m.op == "touch" and not inside:
                self.step(c, "noop", "touch", f"touch ({m.resolution}): content unchanged if it existed",
                          tool_use_id=c.tool_use_id)
                if self.rec.state is None or self.rec.exists is False:
                    self.set(None, exists=None)
            elif m.heredoc is not None and m.op == "write" and clean and not inside:
                before = self.rec.text()
                self.set(known(m.heredoc), full_anchor=True)
                self.step(c, "anchor", "heredoc-write", f"quoted heredoc via {m.verb} ({m.resolution})",
                          patch=_diff(before, m.heredoc, self.path) if before is not None else None,
                          tool_use_id=c.tool_use_id)
            elif m.heredoc is not None and m.op == "append" and clean and self.rec.complete and not inside:
                t = self.rec.text() + m.heredoc
                self.set(known(t))
                self.step(c, "transform", "heredoc-append", f"quoted heredoc appended via {m.verb}",
                          tool_use_id=c.tool_use_id)
            else:
                self.rec.shell_writes += 1
                self.set(_all_unknown(f"shell {m.op} by `{m.verb}` at L{c.pos} ({m.resolution}): opaque"),
                         exists=None)
                self.step(c, "boundary", "shell-write", f"{m.verb} {m.op} ({m.resolution}, operand {m.raw!r})",
                          tool_use_id=c.tool_use_id)
        for mk in sh.markers:
            self.step(c, "risk", "possible-write", f"class marker {mk}: mutates files it does not name",
                      tool_use_id=c.tool_use_id)
        if sh.parse_error:
            self.step(c, "risk", "possible-write", "the shell parser could not read this command: it may "
                      "have written the file", tool_use_id=c.tool_use_id)
        named, more = stale_hint_paths(c)
        if self.path in named:
            self.set(_all_unknown(f"staleReadFileStateHint at L{c.pos} names it"), exists=None)
            self.step(c, "boundary", "stale-hint", "the client's formatter hint says it changed on disk",
                      tool_use_id=c.tool_use_id)
        elif more:
            self.step(c, "risk", "possible-write", "staleReadFileStateHint names more files than it lists",
                      tool_use_id=c.tool_use_id)
        ra = sh.read
        # the read is the command's last step (shell._read_anchor): a view of the file AFTER the
        # writes above, so it anchors even when this command changed the file (`sed -i .. && cat f`)
        if ra is not None and ra.path == self.path:
            echo = c.echo if isinstance(c.echo, dict) else None
            if c.ok and echo and echo.get("interrupted") is False and echo.get("stderr") == "" \
                    and isinstance(echo.get("stdout"), str) and not echo.get("backgroundTaskId"):
                self.shell_read(c, ra, echo["stdout"])

    def shell_read(self, c: Call, ra, stdout: str) -> None:
        # the Bash tool strips leading blank lines and trailing whitespace from stdout (BASH-010)
        cause = f"not visible in the `{ra.kind}` output at L{c.pos} (the Bash tool trims stdout)"
        if stdout == "":
            self.step(c, "noop", "shell-read", f"{ra.kind}: empty output", tool_use_id=c.tool_use_id)
            return
        pieces = stdout.split("\n")
        before = self.rec.text()
        if ra.kind == "cat":
            if before is not None and before.strip("\n") == stdout.strip("\n"):
                self.set(self.rec.state, full_anchor=True)
                self.step(c, "anchor", "shell-read", "cat output confirms the reconstruction",
                          tool_use_id=c.tool_use_id)
                return
            self.set([Unk("leading blank lines, if any: " + cause, True)] + pieces +
                     [Unk("trailing newline / blank lines: " + cause, True)])
            self.step(c, "anchor", "shell-read", f"cat: {len(pieces)} lines (ends unknown)", tool_use_id=c.tool_use_id)
            return
        self.set(_window(self.rec.state, ra.start, pieces, None, cause) if not (
            self.rec.state and _many_free(self.rec.state)) else _overlay(self.rec.state, ra.start, pieces, cause))
        self.step(c, "anchor", "shell-read", f"{ra.kind}: lines {ra.start}-{ra.start + len(pieces) - 1}",
                  tool_use_id=c.tool_use_id)

    def attachment(self, a: Attach) -> None:
        fn = a.payload.get("filename")
        if not isinstance(fn, str) or norm(fn) != self.path:
            return
        if a.kind == "edited_text_file":
            snip = a.payload.get("snippet") if isinstance(a.payload.get("snippet"), str) else ""
            g = parse_gutter(snip)
            st: list = []
            if g:
                n = 1
                for no, t in g:
                    while n < no:
                        st.append(Unk(f"external edit (edited_text_file at L{a.line}): line not in the snippet"))
                        n += 1
                    if n == no:
                        st.append(t)
                        n += 1
            st.append(Unk(f"external edit (edited_text_file at L{a.line}): beyond the snippet", True))
            self.set(st, exists=True)
            self.step(a, "boundary", "edited_text_file",
                      f"changed outside the session; snippet keeps {len(g)} line(s)" + ("" if snip else
                      " (empty snippet: the 16 KB batch budget was spent, FH-007)"))
        elif a.kind == "file":
            content = a.payload.get("content")
            f = content.get("file") if isinstance(content, dict) else None
            if isinstance(f, dict) and isinstance(f.get("content"), str):
                self._read_payload(a, f, "harness-read", None)

    def checkpoint(self, b: Backup) -> None:
        if b.path != self.path:
            return
        if b.backup_file is None:
            return self.absent_at_checkpoint(b)
        if self.restored_at_checkpoint(b):
            return
        if self.home is None:
            return
        if not self.rec.complete:
            return
        blob = self.home / "file-history" / b.lane.session_id / b.backup_file
        try:
            data = blob.read_bytes()
            mt = blob.stat().st_mtime
        except OSError:
            return
        bt = parse_ts(b.backup_time) if b.backup_time else None
        if bt is not None and abs(bt.timestamp() - mt) > 5:
            return  # FH-025: the name was reused by a later generation; this blob is not that checkpoint
        mine = self.rec.text().encode("utf-8", "surrogateescape")
        if data != mine:
            self.set(_all_unknown(f"file-history checkpoint {b.backup_file} (L{b.line}) disagrees"), exists=None)
            self.step(b, "boundary", "checkpoint-rebase", f"checkpoint {b.backup_file} differs from the "
                      "reconstruction; the reconstruction is dropped (a checkpoint's content enters only where a later "
                      "snapshot proves the file equals it: checkpoint-restore)",
                      line=b.line, ts=b.timestamp)


    def restored_at_checkpoint(self, b: Backup) -> bool:
        """A prompt's snapshot taken after the last change we replayed that still names a backup
        made BEFORE that change: the client compared the file with that backup (FH-015: a new
        backup only when the bytes differ) and found it unchanged, so the changes since were
        undone -- a rewind's 'Restore code' put it back. The backup's bytes are then the file's
        content (its generation proven by the blob's mtime, FH-025); a backup not on disk (pruned:
        FH-024) or of another generation leaves the whole file a declared gap."""
        if b.kind != "snapshot" or self.rec.state is None or self.rec.exists is False:
            return False
        bt, snap = _ts(b.backup_time), _ts(b.timestamp)
        if bt is None or snap is None or self.last_change is None or not bt < self.last_change < snap:
            return False
        name = f"{b.backup_file} (version {b.version})" if b.version is not None else str(b.backup_file)
        why = None
        data = None
        if self.home is None:
            why = "no data root to read it from"
        else:
            blob = self.home / "file-history" / b.lane.session_id / str(b.backup_file)
            try:
                data = blob.read_bytes()
                mt = blob.stat().st_mtime
            except OSError as exc:
                why = f"not on disk ({exc.strerror or exc}: the client prunes its store)"
            else:
                if abs(bt - mt) > 5:
                    why = "the blob on disk is of another generation (its mtime is not the recorded backupTime)"
                    data = None
        said = (f"the snapshot at L{b.line} ({b.timestamp}) still names backup {name} of {b.backup_time}, made "
                "before the last change: the client found the file equal to it, so the changes since were undone "
                "(a rewind's 'Restore code')")
        if data is None:
            self.set(_all_unknown(f"put back to file-history backup {name} at L{b.line}; {why}"), exists=None)
            self.step(b, "boundary", "checkpoint-restore", f"{said}; its content is unknown: the backup is {why}",
                      line=b.line, ts=b.timestamp)
            return True
        text = data.decode("utf-8", "surrogateescape")
        before = self.rec.text()
        self.set(known(text), full_anchor=True, exists=True)
        self.step(b, "anchor", "checkpoint-restore", f"{said}; content from file-history/{b.lane.session_id}/"
                  f"{b.backup_file}: {len(data)} bytes",
                  patch=_diff(before, text, self.path) if before is not None else None, line=b.line, ts=b.timestamp)
        return True

    def absent_at_checkpoint(self, b: Backup) -> None:
        """A snapshot entry with no backup, taken after the last change we replayed: the client
        found no file there (FH-003: null names no content). It was deleted, or a rewind's
        'Restore code' removed it (a file created only on the abandoned branch)."""
        if b.kind != "snapshot" or self.rec.exists is False or self.rec.state is None:
            return
        bt = _ts(b.backup_time)
        if bt is None or self.last_change is None or bt <= self.last_change:
            return  # carried over from before the last change: says nothing about now
        self.set([], exists=False)
        self.step(b, "boundary", "checkpoint-absent", f"the file-history checkpoint at L{b.line} ({b.backup_time}) "
                  "holds no backup of it: the file did not exist then (deleted outside the transcript's view, "
                  "or removed by a rewind that restored the code)", line=b.line, ts=b.timestamp)


def _overlay(state: list, start: int, pieces: list[str], cause: str) -> list:
    st = list(state)
    s0 = start - 1
    while len(st) < s0 + len(pieces):
        st.append(Unk(cause))
    agree = all(isinstance(st[s0 + i], Unk) or st[s0 + i] == p for i, p in enumerate(pieces))
    if not agree:
        return [Unk(cause)] * s0 + list(pieces) + [Unk(cause, True)]
    for i, p in enumerate(pieces):
        st[s0 + i] = p
    return st


def _diff(a: str | None, b: str, path: str) -> list[str]:
    return list(difflib.unified_diff((a or "").splitlines(keepends=True), b.splitlines(keepends=True),
                                     fromfile=f"a{path}", tofile=f"b{path}", n=3))


def _hunks_text(hunks: list, path: str) -> list[str]:
    out = [f"--- a{path}\n", f"+++ b{path}\n"]
    for h in hunks:
        if isinstance(h, dict):
            out.append(f"@@ -{h.get('oldStart')},{h.get('oldLines')} +{h.get('newStart')},{h.get('newLines')} @@\n")
            out.extend(str(l) + "\n" for l in h.get("lines") or [])
    return out


def _ordered(lane_evs: list[LaneEvents], keep=None) -> list[tuple[float, int, int, str, object]]:
    """Every lane's events (`keep(x, kind)`: those it keeps) as (instant, is_subagent, position,
    kind, event, lane#) in replay order. An event without an instant takes the one before it in
    its lane (every event counts for that, kept or not)."""
    items = []
    for li, le in enumerate(lane_evs):
        last = 0.0
        merged = [(c.pos, "call", c) for c in le.calls if c.copy_of is None] + \
                 [(a.line, "att", a) for a in le.attachments if a.copy_of is None] + \
                 [(b.line, "bk", b) for b in le.backups if b.copy_of is None]
        merged.sort(key=lambda t: t[0])
        for pos, kind, x in merged:
            t = _ts(getattr(x, "result_ts", None) or x.timestamp)
            if t is None:
                t = last
            last = t
            if keep is None or keep(x, kind):
                items.append((t, 0 if not le.lane.is_subagent else 1, pos, kind, x, li))
    # main lane keeps file order; cross-lane order by instant
    items.sort(key=lambda t: (t[0], t[5], t[2]))
    return items


def recover(scope: Scope, file: str, at: Cutoff | None = None, subagents: bool = True,
            lane_evs: list[LaneEvents] | None = None, problems: list | None = None, grammar=None) -> Replay:
    """The file at `file` replayed from the scope's lane events (`lane_evs`, else collected with
    `grammar`), up to `at`."""
    path = norm(file)
    if lane_evs is None:
        lane_evs, problems = collect(scope, subagents, grammar=grammar)
    home = scope.home.path
    rp = Replayer(path, home)
    rp.rec.transcripts = len(lane_evs)
    rp.rec.unreadable = problems or []
    seen = False
    for t, _, pos, kind, x, li in _whole(_ordered(lane_evs, lambda x, kind: _may_step(x, kind, path)), lane_evs,
                                         path):
        le = lane_evs[li]
        if at is not None:
            if at.instant is not None and t > at.instant:
                continue
            if at.line is not None and not le.lane.is_subagent and pos > at.line:
                continue
            if at.line is not None and le.lane.is_subagent:
                cut = _main_line_instant(lane_evs, at.line)
                if cut is not None and t > cut:
                    continue
            if at.turn is not None:
                if not le.lane.is_subagent:
                    tr = getattr(x, "turn", None)
                    if tr is None and le.index is not None:
                        e = le.index.entry_at_line(pos)
                        tr = e.turn if e else None
                    if tr is not None and tr > at.turn:
                        continue
                else:
                    cut = _turn_end_instant(lane_evs, at.turn)
                    if cut is not None and t > cut:
                        continue
        if _mentions(x, kind, path):
            seen = True
        if kind == "call":
            rp.call(x)
        elif kind == "att":
            rp.attachment(x)
        else:
            rp.checkpoint(x)
    if not seen:
        rp.rec.state = None
        rp.rec.steps = [s for s in rp.rec.steps if s.what != "possible-write"]
        rp.rec.risks_since_anchor = []
    return rp.rec


def _whole(items: list, lane_evs: list[LaneEvents], path: str) -> list:
    """`items` with each event made from the index's facts (`light`) that names `path` read whole
    from its records (providers/claude/files/facts.py `hydrate`): the replay reads their content. The others are
    replayed as they are: what the replay reads of an event that does not name the file (its
    path, a shell command's operands and markers, the hint's paths) the facts hold."""
    want: dict[int, list] = {}
    for it in items:
        x = it[4]
        if getattr(x, "light", False) and _mentions(x, it[3], path):
            want.setdefault(it[5], []).append(x)
    if not want:
        return items
    from .facts import hydrate

    got: dict[int, object] = {}
    for li, xs in want.items():
        got.update(hydrate(lane_evs[li], xs))
    return [(t, a, pos, kind, got.get(id(x), x), li) for t, a, pos, kind, x, li in items]


def _main_line_instant(lane_evs: list[LaneEvents], line: int) -> float | None:
    for le in lane_evs:
        if not le.lane.is_subagent and le.index is not None:
            best = None
            for e in le.index.entries:
                if e.no > line:
                    break
                if e.timestamp:
                    best = e.timestamp
            return _ts(best)
    return None


def _turn_end_instant(lane_evs: list[LaneEvents], turn: int) -> float | None:
    for le in lane_evs:
        if not le.lane.is_subagent and le.index is not None:
            best = None
            for e in le.index.entries:
                if e.turn is not None and e.turn > turn:
                    break
                if e.timestamp:
                    best = e.timestamp
            return _ts(best)
    return None


def _may_step(x, kind: str, path: str) -> bool:
    """Whether replaying event `x` for `path` can add a step or change the state (`Replayer`): a
    call, attachment or checkpoint naming the file, and any shell call that adds a risk whatever
    the file (an unresolved operand, a class marker, a parse error, a hint naming more files than
    it lists) or may add a rewound-write note (on an abandoned branch). The others do nothing in
    the replay and are left out of it (a store's tens of thousands of events, sorted)."""
    if kind == "call":
        if x.tool != "Bash":
            return x.path == path
        if x.survival == "abandoned":
            return True
        sh = x.shell
        if sh is None:
            return False
        if sh.markers or sh.parse_error or (sh.read is not None and sh.read.path == path):
            return True
        named, more = stale_hint_paths(x)
        if more or path in named:
            return True
        for m in sh.mutations:
            p = m.path
            if p is None:
                if m.op not in ("mkdir", "read"):
                    return True
            elif p == path or path.startswith(p.rstrip("/") + "/"):
                return True
        return False
    if kind == "att":
        fn = x.payload.get("filename")
        return isinstance(fn, str) and norm(fn) == path
    return x.path == path


def _mentions(x, kind: str, path: str) -> bool:
    if kind == "call":
        if x.tool == "Bash":
            sh = x.shell
            if sh is None:
                return False
            if any(m.path == path or (m.path and path.startswith(m.path.rstrip("/") + "/")) for m in sh.mutations):
                return True
            if sh.read is not None and sh.read.path == path:
                return True
            return path in stale_hint_paths(x)[0]
        return x.path == path
    if kind == "att":
        fn = x.payload.get("filename")
        return isinstance(fn, str) and norm(fn) == path
    return x.path == path
