"""`audit`: waste audits of what the client re-sent to the model (docs/audit.md)."""

from __future__ import annotations

from typing import Any

import click

from ..audit.reinjection import Delivery, Exit, FileReport, Flush, LaneReport
from ..errors import UsageError
from ..timefmt import instant, short_local
from .invocation import targeting
from .options import lane_fields, refetch, claude_root_arg
from .exit import ExitStatus
from .options import (coverage_json, coverage_line, make_selection, problems_json, selection_header,
                      claude_root_arg)
from .output import Out, esc

PENDING = "still pending at end of transcript"

INVISIBLE = [
    "Whether the model received each delivery is inferred from the edited_text_file attachment records, "
    "the one carrier on disk; the request bodies are not on disk.",
    "Bytes are UTF-8 bytes of the snippet string; the wrapper text the client adds around it in the request "
    "is not counted.",
    "An empty snippet is a real delivery whose content the client blanked (cumulative 16,384-character budget "
    "per batch, FH-033): the file changed, its content was not sent.",
    "A shell change the client never reported (e.g. to a file the session only Read, FH-046) leaves no record "
    "and is not counted here.",
    "'still pending' means: no successful Edit/Write of the file by this lane after its last delivery. Whether "
    "the client would have re-sent it at a later flush is not on disk.",
]


class _AuditGroup(click.Group):
    """An unknown audit name is a usage error in the house format (exit 2, `sessionsift: error:`)."""

    def resolve_command(self, ctx, args):
        if args and args[0] not in self.commands and not args[0].startswith("-"):
            raise UsageError(f"no such audit: {args[0]}",
                             hint="known audits: " + ", ".join(sorted(self.commands))
                                  + " (e.g. sessionsift audit reinjection TARGET)")
        return super().resolve_command(ctx, args)


@click.group("audit", cls=_AuditGroup)
def audit_cmd():
    """Audits measured from the records on disk (docs/audit.md).

    \b
    reinjection: files whose on-disk changes were injected as edited_text_file attachments, flush by
      flush (Claude Code).
    size: what is big and why: bytes by record kind and payload, duplicate payloads, what dedup or a
      capture would reclaim (every provider).
    secrets: credentials that landed in transcripts, with locator, field and a masked preview (every
      provider).

    Example: sessionsift audit reinjection . --format json
    """


def _share_txt(v: float | None) -> str:
    return "?" if v is None else f"{v * 100:.1f}%"


def _n(v) -> str:
    return "?" if v is None else str(v)


def _exit_json(lane: Any, x: Exit | None, home: str | None) -> dict | None:
    if x is None:
        return None
    return {"line": x.line, "tool": x.tool, "tool_use_id": x.tool_use_id, "timestamp": instant(x.timestamp),
            "result_line": x.result_line, "is_error": x.is_error, "refetch": refetch(lane, x.line, home)}


def _delivery_json(lane: Any, d: Delivery, home: str | None) -> dict:
    return {"line": d.line, "flush_line": d.flush_line, "timestamp": instant(d.timestamp), "bytes": d.bytes,
            "chars": d.chars, "sha256": d.sha256, "repeat": d.repeat, "grew": d.grew, "empty": d.empty,
            "truncated_lines": d.truncated_lines, "regions": d.regions, "episode": d.episode,
            "readable": d.readable, "why": d.why, "refetch": refetch(lane, d.line, home)}


def _file_json(lr: LaneReport, f: FileReport, home: str | None) -> dict:
    first, last = f.deliveries[0], f.deliveries[-1]
    left = f.left_by
    return {
        **lane_fields(lr.lane),
        "filename": f.filename,
        "flushes": f.flushes,
        "deliveries": len(f.deliveries),
        "lines": f.lines,
        "flush_lines": sorted({d.flush_line for d in f.deliveries}),
        "bytes_total": f.bytes_total,
        "repeat_bytes": f.repeat_bytes,
        "repeats": f.repeats,
        "waste_share": f.waste_share,
        "grew": f.grew,
        "chars": [d.chars for d in f.deliveries],
        "regions": [d.regions for d in f.deliveries],
        "empty_snippets": sum(1 for d in f.deliveries if d.empty),
        "truncated_snippets": sum(1 for d in f.deliveries if d.truncated_lines is not None),
        "episodes": f.episodes,
        "first_flush": instant(first.timestamp),
        "last_flush": instant(last.timestamp),
        "status": "left" if left is not None else "pending",
        "left_by": _exit_json(lr.lane, left, home),
        "status_text": (f"left by {left.tool} at L{left.line}" if left is not None
                        else f"{PENDING} (L{lr.last_line})"),
        "exits": [_exit_json(lr.lane, x, home) for x in f.exits],
        "unreadable_lines": f.unreadable_lines,
        "delivery": [_delivery_json(lr.lane, d, home) for d in f.deliveries],
        "refetch": [refetch(lr.lane, d.line, home) for d in f.deliveries],
    }


def _flush_json(lr: LaneReport, fl: Flush, home: str | None) -> dict:
    return {**lane_fields(lr.lane), "line": fl.line, "timestamp": instant(fl.timestamp),
            "files": [fn for fn, _ in fl.deliveries],
            "deliveries": [{"filename": fn, "line": d.line, "bytes": d.bytes, "repeat": d.repeat}
                           for fn, d in fl.deliveries],
            "bytes_total": fl.bytes_total, "repeat_bytes": fl.repeat_bytes,
            "refetch": refetch(lr.lane, fl.line, home)}


def _sum(vals):
    vals = list(vals)
    return None if any(v is None for v in vals) else sum(vals)


@audit_cmd.command("reinjection")
@targeting()
@click.option("--no-subagents", is_flag=True, help="Main lanes only.")
@click.option("--flushes", "show_flushes", is_flag=True, help="Also one row per flush (kind: flush).")
@click.option("--min-flushes", type=click.IntRange(min=1), default=1, show_default=True,
              help="Only files delivered in at least N flushes.")
def reinjection_cmd(inv, no_subagents, show_flushes, min_flushes):
    """Files whose on-disk changes the client injected into context (edited_text_file), flush by flush:
    how often, how many bytes, how many were byte-identical repeats, whether the entry grew, and how
    the file left the set (the session's next Edit/Write) or that it is still pending.

    Example: sessionsift audit reinjection . --format json
    """
    fmt = inv.fmt
    claude_home = claude_root_arg(inv)
    from ..audit.reinjection import audit

    sel = make_selection(inv)
    res = audit(sel, subagents=not no_subagents)
    out = Out(fmt, "audit")
    out.header(**selection_header(sel), audit="reinjection", min_flushes=min_flushes)
    shown_lanes, files_shown = [], 0
    for lr in res.with_deliveries:
        files = [f for f in lr.files if f.flushes >= min_flushes]
        if not files and not lr.unreadable:
            continue
        shown_lanes.append(lr)
        lf = lane_fields(lr.lane)
        out.text(f"session {lr.lane.session_id} lane {esc(lr.lane.display)}  {esc(lr.lane.path)}")
        out.text(f"  {len(lr.flushes)} flushes carried {lr.deliveries} deliveries of {len(lr.files)} files: "
                 f"{_n(lr.bytes_total)} B sent, {_n(lr.repeat_bytes)} B byte-identical repeats "
                 f"({_share_txt(lr.duplicated_share)} duplicated)")
        for f in files:
            files_shown += 1
            out.row("reinjection", _file_json(lr, f, claude_home))
            first, last = f.deliveries[0], f.deliveries[-1]
            chars = " -> ".join(_n(d.chars) for d in f.deliveries) if len(f.deliveries) <= 8 else (
                f"{_n(first.chars)} -> ... -> {_n(last.chars)}")
            out.text(f"  {esc(f.filename)}")
            out.text(f"    {f.flushes} flushes at " + ", ".join(f"L{n}" for n in f.lines)
                     + f" · {_n(f.bytes_total)} B sent, {_n(f.repeat_bytes)} B repeats "
                       f"({_share_txt(f.waste_share)}) · grew: "
                     + {True: "yes", False: "no", None: "?"}[f.grew]
                     + (f" within each of {f.episodes} episodes" if f.episodes > 1 else "") + f" (chars {chars})")
            out.text(f"    first {short_local(first.timestamp)}, last {short_local(last.timestamp)}")
            left = f.left_by
            for x in f.exits:
                if x is left:
                    continue
                back = next((d.line for d in f.deliveries if d.line > x.line), None)
                out.text(f"    left the set: {esc(x.tool)} at L{x.line}; re-entered at L{_n(back)}")
            if left is not None:
                res_txt = f", result L{left.result_line}" if left.result_line is not None else ", no result recorded"
                out.text(f"    left the set: {esc(left.tool)} at L{left.line}{res_txt}")
            else:
                out.text(f"    {PENDING} (last line L{_n(lr.last_line)})")
            if f.unreadable_lines:
                out.text("    unreadable deliveries at " + ", ".join(f"L{n}" for n in f.unreadable_lines))
        for no, why in lr.unreadable:
            out.row("unreadable", {**lf, "line": no, "why": why, "refetch": refetch(lr.lane, no, claude_home)})
            out.text(f"  unreadable edited_text_file record at L{no}: {esc(why)}")
        if show_flushes:
            for fl in lr.flushes:
                out.row("flush", _flush_json(lr, fl, claude_home))
                out.text(f"  flush L{fl.line} {short_local(fl.timestamp)}: " + ", ".join(
                    f"{esc(fn)} {_n(d.bytes)} B{' (repeat)' if d.repeat else ''}" for fn, d in fl.deliveries))
        out.row("lane", {**lf, "files": len(lr.files), "deliveries": lr.deliveries, "flushes": len(lr.flushes),
                         "bytes_total": lr.bytes_total, "repeat_bytes": lr.repeat_bytes,
                         "duplicated_share": lr.duplicated_share, "pending_files": len(lr.pending),
                         "unreadable_records": len(lr.unreadable) + sum(len(f.unreadable_lines) for f in lr.files),
                         "complete": lr.complete, "last_line": lr.last_line,
                         "omissions": lr.read.omissions()})
    lanes = res.with_deliveries
    bytes_total = _sum(lr.bytes_total for lr in lanes)
    repeat_bytes = _sum(lr.repeat_bytes for lr in lanes)
    unreadable = sum(len(lr.unreadable) + sum(len(f.unreadable_lines) for f in lr.files) for lr in lanes)
    share = None if bytes_total in (None, 0) or repeat_bytes is None else round(repeat_bytes / bytes_total, 4)
    omissions: dict[str, int] = {}
    for lr in res.lanes:  # lines no reading could take in: deliveries on them are not counted
        for k, v in lr.read.omissions().items():
            omissions[k] = omissions.get(k, 0) + v
    covs = sel.coverage()
    out.summary(audit="reinjection", sessions=sel.top_level(), lanes_read=len(res.lanes), lanes_with_reinjection=len(lanes),
                files=sum(len(lr.files) for lr in lanes), files_shown=files_shown,
                deliveries=sum(lr.deliveries for lr in lanes), flushes=sum(len(lr.flushes) for lr in lanes),
                bytes_total=bytes_total, repeat_bytes=repeat_bytes, duplicated_share=share,
                pending_files=sum(len(lr.pending) for lr in lanes), unreadable_records=unreadable,
                problems=problems_json(res.problems + sel.problems()), invisible=INVISIBLE, omissions=omissions,
                lacks=res.lacks or None, coverage=coverage_json(covs))
    out.text(f"{sum(len(lr.files) for lr in lanes)} files re-injected in {len(lanes)} of {len(res.lanes)} lanes: "
             f"{_n(bytes_total)} B sent, {_n(repeat_bytes)} B byte-identical repeats ({_share_txt(share)})"
             + (f"; {unreadable} unreadable records" if unreadable else "")
             + (f"; {len(res.problems)} unreadable files" if res.problems else ""))
    for p in res.problems[:5]:
        out.text(f"  unreadable: {esc(p.path)} ({esc(p.why)})")
    lost = {k: v for k, v in omissions.items() if v}
    if lost:
        out.text("lines not read (deliveries on them are not counted; the figures are lower bounds): "
                 + ", ".join(f"{k}={v}" for k, v in sorted(lost.items())))
    for who, why in res.lacks.items():
        out.text(f"{esc(who)}: no re-injection read: {esc(why)}")
    out.text("invisible: delivery to the model is inferred from the attachment records (see docs/audit.md).")
    out.text(coverage_line(covs))
    if res.problems or unreadable or sel.incomplete():
        return ExitStatus.INCOMPLETE
    return ExitStatus.OK if lanes else ExitStatus.NO_MATCH


def _more() -> None:
    """The audits that read every provider live in their own modules (loaded with this group)."""
    from .cmd_audit_secrets import secrets_cmd
    from .cmd_audit_size import size_cmd

    audit_cmd.add_command(size_cmd)
    audit_cmd.add_command(secrets_cmd)


_more()
