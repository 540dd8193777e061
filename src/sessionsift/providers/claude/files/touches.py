"""Claude Code's touches of files (`files` rows of its lanes): Read/Write/Edit/MultiEdit/
NotebookEdit calls, Bash commands as the shell grammar reads them, the client's own signals
(``edited_text_file``/``file`` attachments, ``staleReadFileStateHint``) and file-history version
jumps with no tool write (external writes, FH-015)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from ...fileevents import Touch
from ..model import record as R
from .collect import _ts
from .events import TOOL_OP, Call, LaneEvents, norm, stale_hint_paths

MUTATING = R.MUTATING_FILE_TOOLS  # FH-037


@dataclass
class LaneTouches:
    touches: list[Touch] = field(default_factory=list)
    transcripts: int = 0
    problems: list = field(default_factory=list)
    copies: int = 0
    """Touches on a fork's copies of an in-scope parent's records: listed (`copy_of`), not counted."""
    unparsed: int = 0
    """Bash commands the shell parser could not read (each is an `unresolved` touch): the files
    they wrote are unknown, so the counts are lower bounds."""
    omissions: dict = field(default_factory=dict)
    """Lines of the read transcripts that could not be read (malformed, zero-filled, ...): touches
    recorded on them are not counted, so the counts are lower bounds when any is non-zero."""


def _status(c: Call) -> str:
    return "no-result" if c.is_error is None else ("error" if c.is_error else "ok")


def touches(lane_evs: list[LaneEvents], problems: list | None = None, subagents: bool = True,
            subagents_only: bool = False) -> LaneTouches:
    """Every touch of the lanes' events (main lanes only without `subagents`, subagent lanes only
    with `subagents_only`), ordered by instant."""
    res = LaneTouches(transcripts=len(lane_evs), problems=problems or [])
    for le in lane_evs:
        if le.index is not None:
            for k, v in le.index.stats.omissions().items():
                res.omissions[k] = res.omissions.get(k, 0) + v
        if subagents_only and not le.lane.is_subagent:
            continue
        if not subagents and le.lane.is_subagent:
            continue
        n0 = len(res.touches)
        for c in le.calls:
            if c.tool in TOOL_OP:
                op, detail = c.touch
                res.touches.append(Touch(c.path, c.raw_path, op, "tool",
                                         c.tool, c.tool, "structured", _status(c), c.lane, c.pos,
                                         c.result_ts or c.timestamp, c.turn, c.tool_use_id, detail))
            elif c.tool == "Bash" and c.shell is not None:
                sh = c.shell
                for m in sh.mutations:
                    res.touches.append(Touch(m.path, m.raw, f"shell:{m.op}", "shell", "Bash", m.verb, m.resolution,
                                             _status(c), c.lane, c.pos, c.result_ts or c.timestamp, c.turn,
                                             c.tool_use_id, "quoted heredoc body" if m.heredoc is not None else None))
                if sh.parse_error:  # what it writes is not known: say so, never count it as nothing
                    res.touches.append(Touch(None, sh.command[:200], "shell:unparsed", "shell", "Bash", None,
                                             "unresolved", _status(c), c.lane, c.pos, c.result_ts or c.timestamp,
                                             c.turn, c.tool_use_id, "the shell parser could not read this command: "
                                             "the files it writes are unknown", marker="parse-error"))
                    res.unparsed += 1
                for mk in sh.markers:
                    res.touches.append(Touch(None, None, "shell:marker", "shell", "Bash", mk.split(":")[1], "unresolved",
                                             _status(c), c.lane, c.pos, c.result_ts or c.timestamp, c.turn,
                                             c.tool_use_id, "mutates files it does not name", marker=mk))
                if sh.read is not None and sh.read.path:
                    res.touches.append(Touch(sh.read.path, sh.read.raw, "shell:read", "shell", "Bash", sh.read.kind,
                                             sh.read.resolution, _status(c), c.lane, c.pos, c.result_ts or c.timestamp,
                                             c.turn, c.tool_use_id))
                named, more = stale_hint_paths(c)
                for p in named:
                    res.touches.append(Touch(p, None, "external-change", "shell", "Bash", "staleReadFileStateHint",
                                             "recorded", "observed", c.lane, c.pos, c.result_ts or c.timestamp, c.turn,
                                             c.tool_use_id, "the client saw it change on disk after this command"))
        for a in le.attachments:
            fn = a.payload.get("filename")
            if a.kind == "edited_text_file" and isinstance(fn, str):
                res.touches.append(Touch(norm(fn), fn, "external-edit", "attachment", None, "edited_text_file",
                                         "recorded", "observed", a.lane, a.line, a.timestamp, a.turn, None,
                                         "changed outside the session's tools since its last full Read"))
            elif a.kind == "file" and isinstance(fn, str):
                res.touches.append(Touch(norm(fn), fn, "harness-read", "attachment", None, "file", "recorded",
                                         "observed", a.lane, a.line, a.timestamp, a.turn, None,
                                         "re-injected into context by the client (e.g. after compaction)"))
        cmap = {c.pos: c.copy_of for c in le.calls if c.copy_of} | {a.line: a.copy_of for a in le.attachments
                                                                     if a.copy_of}
        if cmap:
            for t in res.touches[n0:]:
                t.copy_of = cmap.get(t.line)
    res.copies = sum(1 for t in res.touches if t.copy_of is not None)
    res.touches.extend(external_writes(lane_evs, subagents_only))
    # ordering only: an undated touch sorts first; its timestamp stays None in every row
    res.touches.sort(key=lambda t: (_ts(t.timestamp) or 0.0, t.lane.is_subagent, t.line))
    return res


def external_writes(lane_evs: list[LaneEvents], subagents_only: bool = False) -> list[Touch]:
    """FH-015: a version jump with no tool write of that path in the interval is an external write.

    Reported as an interval (previous backup instant, this backup instant), never an instant.
    FH-018: a tool write and a silent write in one interval give one increment, so this rule
    cannot see a silent write that shares an interval with a tool write."""
    if subagents_only:
        return []
    writes: dict[tuple[str, str], list[float]] = defaultdict(list)
    shell: dict[tuple[str, str], list[tuple[float, Call]]] = defaultdict(list)
    for le in lane_evs:
        for c in le.calls:
            t = _ts(c.result_ts or c.timestamp)
            if t is None:
                continue
            if c.tool in MUTATING and c.ok and c.path:
                writes[(le.lane.session_id, c.path)].append(t)
            if c.tool == "Bash" and c.shell:
                for m in c.shell.mutations:
                    if m.path:
                        shell[(le.lane.session_id, m.path)].append((t, c))
    out = []
    for le in lane_evs:
        if le.lane.is_subagent:
            continue
        last: dict[str, object] = {}
        for b in le.backups:
            if b.copy_of is not None:
                continue  # a fork's copy of its parent's snapshot line: counted on the parent
            prev = last.get(b.path)
            last[b.path] = b
            if prev is None or b.version is None or prev.version is None:
                continue
            if b.version <= prev.version:
                continue  # equal: unchanged; lower: a new generation (FH-016)
            if prev.backup_file is None and b.backup_file is None and prev.version > 1:
                continue  # absent at both checkpoints (a null backup names no content: FH-003)
            t0, t1 = _ts(prev.timestamp), _ts(b.timestamp)
            if t0 is None or t1 is None:
                continue
            key = (le.lane.session_id, b.path)
            if any(t0 < t <= t1 for t in writes.get(key, [])):
                continue
            cands = [c for t, c in shell.get(key, []) if t0 < t <= t1]
            detail = f"file-history version {prev.version} -> {b.version} with no tool write in the interval"
            if cands:
                detail += "; shell write(s) in the interval at " + ", ".join(f"L{c.pos}" for c in cands)
            out.append(Touch(b.path, b.tracked_as, "external-write", "file-history", None, "version-jump",
                             "recorded", "observed", le.lane, b.line, b.timestamp, None, None, detail,
                             interval=(prev.timestamp, b.timestamp)))
    return out
