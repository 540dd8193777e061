"""`audit size`: what is big and why, on every provider with a reader (docs/audit.md)."""

from __future__ import annotations

import click

from .exit import ExitStatus
from .invocation import targeting
from .options import (coverage_json, coverage_line, session_split, sessions_unit, make_selection, problems_json, selection_header, claude_root_arg)
from .output import Out, esc
from ..render import plural

SIZE_INVISIBLE = [
    "Bytes of a line are its bytes on disk with its newline (a compressed rollout: its decompressed bytes); a "
    "payload's bytes are its JSON string as stored, escapes included.",
    "Payloads are text-like strings of 256 bytes or more and binary ones (base64 images, documents, signatures, "
    "encrypted reasoning) of 32 bytes or more; shorter strings are counted in their record's kind only.",
    "Rows of a shared database (opencode, Crush) are measured as the JSON of the decoded row, not database pages; "
    "what a capture of such a session would keep is unknown.",
    "Duplicates are payloads of 1 KiB or more with the same SHA-256 anywhere in scope; dedup reclaim = (copies - 1) "
    "x size per payload. Capture reclaim = footprint bytes - their zstd (level 3) size.",
]


def _sz(n: int | None) -> str:
    if n is None:
        return "?"
    from .cmd_core import _size

    return _size(n)


def _pairs_txt(d: dict[str, list[int]], n: int = 6) -> str:
    items = sorted(d.items(), key=lambda kv: (-kv[1][1], kv[0]))
    out = ", ".join(f"{esc(k)} {_sz(b)} ({c})" for k, (c, b) in items[:n])
    return out + (f", +{len(items) - n} more" if len(items) > n else "")


def _cb(d: dict[str, list[int]], a: str) -> dict:
    return {k: {a: c, "bytes": b} for k, (c, b) in sorted(d.items())}


def _display(sel, provider: str) -> str:
    """The provider's display name (`Codex CLI`), not its internal one (`codex`)."""
    e = sel.survey.entry(provider)
    return e.display if e else provider


@click.command("size")
@targeting()
@click.option("--top", type=click.IntRange(min=0), default=20, show_default=True,
              help="Sessions shown in text output, biggest first (JSON has every session).")
@click.option("--no-capture", is_flag=True, help="Do not compress footprints to measure what a capture would reclaim.")
@click.option("--no-duplicates", is_flag=True, help="Do not hash payloads for the duplicate census.")
def size_cmd(inv, top, no_capture, no_duplicates):
    """Bytes per session by record kind, payload (inline images, tool outputs, thinking signatures,
    request dumps ...) and attachment type; duplicate payloads by SHA-256 and what deduplication or a
    capture would reclaim. Every provider with a reader; no target = every session.

    \b
    Example: sessionsift audit size --home examples/home
    Example: sessionsift audit size . --format json
    """
    fmt = inv.fmt
    from ..audit.size import size_audit
    from ..export.source import pairs

    sel = make_selection(inv)
    res = size_audit(pairs(sel), capture=not no_capture, duplicates=not no_duplicates)
    out = Out(fmt, "audit")
    out.header(**selection_header(sel), audit="size")
    sessions = sorted(res.sessions, key=lambda s: (-(s.footprint_bytes or s.bytes), s.ref.provider, s.ref.session_id))
    payload_tot: dict[str, list[int]] = {}
    kind_tot: dict[str, list[int]] = {}
    att_tot: dict[str, list[int]] = {}
    fp_total = cap_total = fp_cap = 0
    fp_lower = 0
    cap_unknown = 0
    for i, ss in enumerate(sessions):
        ref = ss.ref
        for src, dst in ((ss.payloads, payload_tot), (ss.kinds, kind_tot), (ss.attachments, att_tot)):
            for k, (c, b) in src.items():
                t = dst.setdefault(k, [0, 0])
                t[0] += c
                t[1] += b
        if ss.footprint_bytes is not None:
            fp_total += ss.footprint_bytes
        if ss.footprint_note is not None:
            fp_lower += 1
        if ss.capture_bytes is not None and ss.footprint_bytes is not None:
            cap_total += ss.capture_bytes
            fp_cap += ss.footprint_bytes
        else:
            cap_unknown += 1
        reclaim = (ss.footprint_bytes - ss.capture_bytes) if (ss.capture_bytes is not None
                                                              and ss.footprint_bytes is not None) else None
        out.row("session", {
            "provider": ref.provider, "session_id": ref.session_id, "is_subagent": ref.is_subagent,
            "parent_session_id": ref.parent_session_id, "project": ref.project,
            "paths": [str(p) for p in ref.paths], "measured": ss.measured, "bytes": ss.bytes, "records": ss.lines,
            "footprint_bytes": ss.footprint_bytes, "footprint_note": ss.footprint_note, "side_files": ss.side_files,
            "kinds": _cb(ss.kinds, "records"), "payloads": _cb(ss.payloads, "count"),
            "attachments": _cb(ss.attachments, "count"), "big_lines": ss.big_lines,
            "biggest": [{"locator": loc, "bytes": b, "kind": k, "path": p} for b, loc, k, p in ss.top],
            "capture_bytes": ss.capture_bytes, "capture_reclaim_bytes": reclaim, "capture_note": ss.capture_note,
            "unparsed_lines": ss.unparsed_lines, "omissions": ss.report.omissions(),
            "problems": problems_json(ss.report.problems),
        })
        if out.json or i >= top:
            continue
        fp = (f", {'≥' if ss.footprint_note else ''}{_sz(ss.footprint_bytes)} footprint"
              if ss.footprint_bytes is not None else "")
        cap = f", capture keeps {_sz(ss.capture_bytes)}" if ss.capture_bytes is not None else ""
        out.text(f"{esc(ref.session_id)} ({esc(_display(sel, ref.provider))}) {_sz(ss.bytes)} in "
                 f"{plural(ss.lines, 'record')}"
                 f"{fp}{cap} [{ss.measured}]")
        out.text(f"  kinds: {_pairs_txt(ss.kinds)}")
        if ss.payloads:
            out.text(f"  payloads: {_pairs_txt(ss.payloads, 9)}")
        if ss.attachments:
            out.text(f"  inline attachments: {_pairs_txt(ss.attachments)}")
        if ss.side_files:
            side = sorted(ss.side_files.items(), key=lambda kv: -kv[1])
            out.text("  side files: " + ", ".join(f"{esc(k)} {_sz(v)}" for k, v in side[:4])
                     + (f", +{len(side) - 4} more" if len(side) > 4 else ""))
        out.text("  biggest: " + ", ".join(f"{esc(loc)} {esc(k)} {_sz(b)}" for b, loc, k, _p in ss.top[:3]))
        for p in ss.report.problems[:3]:
            out.text(f"  unreadable: {esc(p.path)} ({esc(p.why)})")
    if not out.json and len(sessions) > top:
        out.text(f"... {len(sessions) - top} smaller {'session' if len(sessions) - top == 1 else 'sessions'} "
                 "not shown (--top N, or --format json)")
    groups = res.duplicate_groups()
    for g in groups:
        out.row("duplicate", {"sha256": g.sha256, "category": g.category, "media_type": g.media_type, "size": g.size,
                              "count": g.count, "sessions": len(g.sessions), "reclaim_bytes": (g.count - 1) * g.size,
                              "locators": g.locators})
    for g in groups[:5] if not out.json else []:
        out.text(f"duplicate {g.sha256[:16]} {esc(g.category)}{' ' + esc(g.media_type) if g.media_type else ''} "
                 f"{_sz(g.size)} x {g.count} in {len(g.sessions)} session{'s' if len(g.sessions) != 1 else ''}: "
                 f"dedup reclaims {_sz((g.count - 1) * g.size)} (first at {esc(', '.join(g.locators[:2]))})")
    total = sum(s.bytes for s in res.sessions)
    dedup = None if no_duplicates else res.dedup_reclaim()
    cap_known = not no_capture and fp_cap > 0
    covs = sel.coverage()
    out.summary(audit="size", **session_split([s.ref for s in res.sessions]), bytes=total, footprint_bytes=fp_total,
                footprint_lower_bound_sessions=fp_lower,
                kinds=_cb(kind_tot, "records"), payloads=_cb(payload_tot, "count"),
                attachments=_cb(att_tot, "count"),
                duplicate_groups=None if no_duplicates else len(groups), dedup_reclaim_bytes=dedup,
                duplicates_truncated=res.duplicates_truncated,
                capture_bytes=cap_total if cap_known else None,
                capture_reclaim_bytes=(fp_cap - cap_total) if cap_known else None,
                capture_unknown_sessions=cap_unknown, problems=problems_json(res.problems),
                invisible=SIZE_INVISIBLE, coverage=coverage_json(covs))
    out.text(f"{sessions_unit(len(res.sessions), covs)}, {_sz(total)} of records ({'≥' if fp_lower else ''}{_sz(fp_total)} footprint on disk"
             + (f": a lower bound, {plural(fp_lower, 'session')} with entries that could not be read" if fp_lower else "")
             + ")")
    if payload_tot:
        out.text(f"payloads: {_pairs_txt(payload_tot, 10)}")
    if att_tot:
        out.text(f"inline attachments: {_pairs_txt(att_tot)}")
    out.text("kinds: " + _pairs_txt(kind_tot, 8))
    if dedup is not None:
        out.text(f"duplicates: {plural(len(groups), 'payload')} stored more than once; deduplication would reclaim {_sz(dedup)}"
                 + (" (hash table full: a lower bound)" if res.duplicates_truncated else ""))
    if cap_known:
        out.text(f"capture (zstd) would keep {_sz(cap_total)} of {_sz(fp_cap)}: reclaims {_sz(fp_cap - cap_total)}"
                 + (f"; {plural(cap_unknown, 'session')} {'has' if cap_unknown == 1 else 'have'} no files of their own "
                    "(unknown)" if cap_unknown else ""))
    for p in res.problems[:5]:
        out.text(f"unreadable: {esc(p.path)} ({esc(p.why)})")
    out.text(coverage_line(covs))
    if res.problems or sel.incomplete():
        return ExitStatus.INCOMPLETE
    return ExitStatus.OK if res.sessions else ExitStatus.NO_MATCH
