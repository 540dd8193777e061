"""`clean scan|capture|protect|restore|verify|list` (docs/clean.md)."""

from __future__ import annotations

import click

from .exit import ExitStatus
from .invocation import targeting
from .options import coverage_json, coverage_line, sessions_unit, display_name, problems_json
from .output import Out, esc


def e(s) -> str:
    """Escape for a terminal, including undecodable file-name bytes (shown as \\xNN)."""
    if isinstance(s, str):
        try:
            s.encode("utf-8")
        except UnicodeEncodeError:
            s = s.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return esc(s)


def size(n: int | None) -> str:
    if n is None:
        return "size ?"
    f = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if f < 1024 or unit == "TiB":
            return f"{f:.0f} {unit}" if unit == "B" else f"{f:.1f} {unit}"
        f /= 1024
    return str(n)


def _scan_options(f):
    f = click.option("--data-dir", type=click.Path(file_okay=False), default=None,
                     help="sessionsift's data dir holding the archive and the ledger "
                          "(default: ${XDG_DATA_HOME:-~/.local/share}/sessionsift).")(f)
    f = click.option("--waive-kept", is_flag=True,
                     help="Waive the kept gate (recorded in the manifest of every capture and shown by `clean list`).")(f)
    f = click.option("--older-than", default=None,
                     help="The age gate: last activity before this (a duration such as 30d, 12h, or an ISO "
                          "instant). Default 30d; `protect` defaults to 0s (every idle session).")(f)
    return targeting(targets=None)(f)


_NOT_NARROWED = ("--since", "--until", "--project", "--limit", "--sessions-from")


def _refuse_filters(inv) -> None:
    inv.refuse(*_NOT_NARROWED, why="decides over every session of the roots (its age gate is --older-than; "
                                   "name sessions as TARGETs of capture/protect)")


def _archive_options(f):
    f = click.option("--data-dir", type=click.Path(file_okay=False), default=None, help="sessionsift's data dir.")(f)
    return targeting(targets=None)(f)


def _refuse_roots(inv) -> None:
    inv.refuse(*inv.named, why="reads the archive of --data-dir, whatever the roots")


def _total(items: list[dict], key: str) -> int | None:
    """The sum of ``key`` over the items; None (unknown, never 0) when one of them lacks it."""
    vals = [i.get(key) for i in items]
    ints = [v for v in vals if isinstance(v, int) and not isinstance(v, bool)]
    return sum(ints) if len(ints) == len(vals) else None


def _data(data_dir):
    from pathlib import Path

    return Path(data_dir) if data_dir else None


@click.group("clean", invoke_without_command=True)
@_scan_options
@click.option("-v", "--verbose", is_flag=True, help="Each gate's detail and evidence, and the footprint, per session.")
@click.pass_context
def clean_cmd(ctx, inv, older_than, waive_kept, data_dir, verbose):
    """Safe clean-up across every agent: every session with its age, size and three gates (age,
    activity, kept), each proven or not proven with its reason; capture into a verified archive
    and delete only what every gate proves; restore, verify, list (docs/clean.md). `clean` alone
    is `clean scan` (read-only).

    Example: sessionsift clean --older-than 60d

    Example: sessionsift clean capture --apply
    """
    if ctx.invoked_subcommand is None:
        _refuse_filters(inv)
        return _scan(inv, older_than, waive_kept, data_dir, verbose)
    return None


@clean_cmd.command("scan")
@_scan_options
@click.option("-v", "--verbose", is_flag=True, help="Each gate's detail and evidence, and the footprint, per session.")
def scan_cmd(inv, older_than, waive_kept, data_dir, verbose):
    """Read-only: every session of every provider with its age (by its last record's instant),
    its size (its whole footprint) and the three gates, the summary and coverage lines, and each
    Claude Code session's projected deletion by the client's own cleanupPeriodDays.

    Example: sessionsift clean scan --home /path/to/corpus --format json
    """
    _refuse_filters(inv)
    return _scan(inv, older_than, waive_kept, data_dir, verbose)


def _report(inv, older_than, waive_kept, data_dir, sv=None):
    from ..clean.scan import scan
    from ..providers.scope import survey

    sv = sv if sv is not None else survey(inv.root_request())
    return scan(sv, older_than=older_than or "30d", waive_kept=waive_kept, data=_data(data_dir))


def _scan(inv, older_than, waive_kept, data_dir, verbose) -> int:
    rep = _report(inv, older_than, waive_kept, data_dir)
    out = Out(inv.fmt, "clean")
    _header(out, rep, "scan", False)
    for v in rep.verdicts:
        out.row("session", v.to_json())
        _text_verdict(out, v, verbose)
    return _close(out, rep, None)


def _header(out: Out, rep, action: str, apply: bool) -> None:
    out.header(action=action, apply=apply, older_than_cutoff=rep.cutoff.strftime("%Y-%m-%dT%H:%M:%SZ"),
               now=rep.now.strftime("%Y-%m-%dT%H:%M:%SZ"), waive_kept=rep.waive_kept,
               archive=str(rep.archive.root), caller=rep.world.self_json(),
               processes=rep.world.table.to_json(),
               roots=[{"provider": x.name, "root": None if x.root is None or x.root.path is None else str(x.root.path),
                       "root_source": None if x.root is None else x.root.source} for x in rep.survey.entries])


def _text_verdict(out: Out, v, verbose: bool) -> None:
    g = v.gates
    state = "ELIGIBLE" if v.eligible else f"blocked: {v.blocked_by}"
    age = _age(v)
    ret = ""
    if v.retention is not None and v.retention.deletion_at is not None:
        ret = ("  client deletes it at its next start" if v.retention.due
               else f"  client deletes it after {v.retention.deletion_at:%Y-%m-%d}")
    sz = size(v.size) if v.size is not None else "size n/a (database rows)"
    out.text(f"{e(v.session_id)}  {e(v.display)}  {e(age)}  {sz}  {e(v.project or '-')}  [{state}]{ret}")
    marks = []
    for k in ("age", "activity", "kept"):
        x = g[k]
        marks.append(f"{k}: {'proven' if x.proven else 'waived' if x.waived else 'not proven'} ({e(x.reason)})")
    if not v.deletable:
        marks.append(e(v.delete_reason.split(":", 1)[0]))
    out.text("  " + " · ".join(marks))
    if verbose:
        for k in ("age", "activity", "kept"):
            out.text(f"    {k}: {e(g[k].detail)}")
            for ev in g[k].evidence[:5]:
                out.text(f"      evidence: {e(', '.join(f'{a}={b}' for a, b in ev.items()))}")
        for p in v.footprint:
            out.text(f"    file: {e(p)}")
        if v.retention is not None:
            r = v.retention.to_json()
            out.text(f"    retention: {r['period_days']} days ({e(r['period_source'])}), transcript mtime "
                     f"{r['transcript_mtime']}, projected deletion {r['projected_deletion']}"
                     + (f"; a start in its own project applies {r['own_project_period_days']} "
                        f"({e(r['own_project_period_source'])})" if r["own_project_period_days"] else "")
                     + (f"; {e(r['note'])}" if r["note"] else ""))


def _age(v) -> str:
    from ..timefmt import parse_ts

    t = parse_ts(v.last_at)
    if t is None and v.newest_mtime is not None:
        from datetime import datetime, timezone

        t = datetime.fromtimestamp(v.newest_mtime, timezone.utc)
    if t is None:
        return "age ?"
    from datetime import datetime, timezone

    s = (datetime.now(timezone.utc) - t).total_seconds()
    return f"{s / 60:.0f} min" if s < 3600 else f"{s / 3600:.1f} h" if s < 172800 else f"{s / 86400:.0f} d"


def summary_line(t: dict, covs: list | None = None) -> str:
    """Every figure counts candidates (one verdict each: a top-level session, or another
    provider's child session; Claude Code's subagent lanes go with their session) and says so."""
    b = t["blocked_by"]
    parts = [f"age {b['age']}", f"live {b['live']}", f"not kept {b['not kept']}"]
    if b["delete unsupported"]:
        parts.append(f"delete unsupported {b['delete unsupported']}")
    n, kids = t["candidates"], t["child_sessions"]
    word = lambda k, w: f"{k} {w}{'' if k == 1 else 's'}"  # noqa: E731
    what = word(t["sessions"], "session") + (f" + {word(kids, 'child session')}" if kids else "")
    who, lanes = _lanes(covs)
    if lanes:
        what += f"; {who}'s {word(lanes, 'subagent lane')} go with their sessions"
    held = f"{t['bytes_held'] / 1048576:.1f} MiB held by {word(t['sized'], 'candidate')}"
    if t["size_unknown"]:
        k = t["size_unknown"]
        held += f" ({word(k, 'candidate')} {'is a row' if k == 1 else 'are rows'} in shared databases: size not attributable)"
    return (f"{word(n, 'candidate')} ({what}) | {word(t['eligible'], 'candidate')} eligible | "
            f"{word(t['blocked'], 'candidate')} blocked (by {', '.join(parts)}) | {held}")


def _lanes(covs: list | None) -> tuple[str | None, int | None]:
    """(display name, subagent lanes) of the first read provider whose subagent transcripts are
    paths of their session (``Provider.lanes_in_paths``: they go with it); (None, None): none."""
    from ..providers import load

    for c in covs or ():
        if c.state == "ok" and getattr(load(c.provider), "lanes_in_paths", False):
            return c.display, c.subagents
    return None, None


def _close(out: Out, rep, extra: dict | None) -> int:
    for rr in rep.retention:
        out.row("retention", rr.to_json())
    out.text("")
    me = rep.world.self_json()
    for c in me["sessions"]:
        out.text(f"this command runs inside {e(display_name(c['provider']))} session {e(c['session_id'])} "
                 f"({e(c['source'])}): it blocks that session only")
    for a in me["agent_ancestors"]:
        out.text(f"this command's caller pid {a['pid']} is {e(', '.join(a['providers']))} working in {e(a['cwd'])}: "
                 "it blocks only the sessions its registry row or project covers")
    for rr in rep.retention:
        p = rr.period
        if p.days is None:
            out.text(f"retention under {e(rr.root)}: Claude Code will not sweep ({e(p.skipped)})")
            continue
        out.text(f"retention under {e(rr.root)}: cleanupPeriodDays {p.days} ({e(p.source)}, by transcript mtime); "
                 f"{'policy files read' if rr.policy_read else 'policy files not read (root named explicitly)'}; "
                 "invisible: --settings flags, server-delivered policy, the desktop exemption")
        if rr.due or rr.soon:
            out.text(f"warning: {rr.due} Claude Code session(s) under {e(rr.root)} are past cleanupPeriodDays and the "
                     f"client deletes them at its next start; {rr.soon} more within 7 days. "
                     "`sessionsift clean protect --apply` keeps a verified copy")
    t = rep.tally()
    covs = rep.survey.coverage()
    probs = rep.survey.problems()
    for path, why in rep.problems:
        out.text(f"problem: {e(path)}: {e(why)}")
    out.text(summary_line(t, covs))
    out.text(coverage_line(covs))
    summ = {**t, "coverage": coverage_json(covs), "problems": problems_json(probs)
            + [{"path": p, "why": w} for p, w in rep.problems]}
    if extra:
        summ.update(extra)
    out.summary(**summ)
    return int(ExitStatus.INCOMPLETE) if (rep.survey.incomplete() or rep.problems) else int(ExitStatus.OK)


def _act(action: str, inv, targets, older_than, waive_kept, data_dir, apply) -> int:
    from ..clean import apply as AP

    from ..providers.scope import survey

    _refuse_filters(inv)
    fmt = inv.fmt
    sv = survey(inv.root_request())
    rec = AP.recover(_data(data_dir), AP.scan_roots(sv)) if apply else []
    if any(r.status == "rolled-back" for r in rec):
        sv = survey(inv.root_request())  # what was put back is discovered now
    rep = _report(inv, older_than, waive_kept, data_dir, sv)
    oc = AP.run(rep, action, tuple(targets), apply=apply, recovered=rec)
    out = Out(fmt, "clean")
    _header(out, rep, action, apply)
    for v in rep.verdicts:  # the scan this run decided on (JSON only)
        out.row("session", v.to_json())
    for r in oc.recovered:
        out.row("recovered", r.to_json())
        out.text(f"recovered {e(display_name(r.provider))} {e(r.session_id if r.session_id is not None else r.path)}: "
                 f"{e(r.status)} ({e(r.reason)})")
    if not apply:
        for st in oc.steps:
            if not st.does:
                continue
            v = st.verdict
            row = {"provider": v.provider, "session_id": v.session_id,
                   "status": "would-remove" if st.does == "removed" else "would-capture",
                   "deletes": st.does == "removed", "waived_kept": v.gates["kept"].waived,
                   "footprint": v.footprint, "size_bytes": v.size}
            out.row("action", row)
            what = "would remove (capture, then delete)" if st.does == "removed" else (
                "would capture, removing nothing" + (f" ({e(v.delete_reason.split(':', 1)[0])})"
                                                     if action == "capture" and not v.deletable else ""))
            out.text(f"{what}: {e(v.session_id)} {e(v.display)} {size(v.size)}"
                     + (" [kept waived]" if v.gates["kept"].waived else ""))
    for r in oc.results:
        out.row("action", r.to_json())
        out.text(f"{e(r.status)}: {e(r.session_id)} ({e(display_name(r.provider))}) {r.files} file(s) {size(r.bytes)}"
                 + (f" -> {size(r.stored)} stored" if r.stored else "") + (f", capture {e(r.capture_id)}" if r.capture_id else "")
                 + (f": {e(r.reason)}" if r.reason else ""))
    for v, why in oc.skipped:
        out.row("skipped", {"provider": v.provider, "session_id": v.session_id, "why": why})
    counts: dict[str, int] = {}
    for r in oc.results:
        counts[r.status] = counts.get(r.status, 0) + 1
    freed = sum(r.bytes for r in oc.results if r.status == "removed")
    stored = sum(r.stored for r in oc.results if r.status in ("removed", "captured"))
    src = sum(r.bytes for r in oc.results if r.status in ("removed", "captured"))
    pc = AP.plan_counts(oc.steps)
    out.text("")
    line = plan_line(action, pc, apply)
    if apply:
        off = {k: n for k, n in sorted(counts.items()) if k not in ("removed", "captured")}
        out.text(f"{line}" + (f"; not as planned: {', '.join(f'{k} {n}' for k, n in off.items())}" if off else "")
                 + f"; freed {size(freed)}; archived {size(src)} as {size(stored)}"
                 + (f" ({src / stored:.2f}x)" if stored else ""))
    else:
        out.text(f"{line}; pass --apply to act")
    would = {k: n for k, n in (("removed", pc["remove"]), ("captured", pc["capture"])) if n}
    code = _close(out, rep, {"apply": apply, "results": counts, "would": would if not apply else None, "plan": pc,
                             "freed_bytes": freed if apply else None, "archived_bytes": src if apply else None,
                             "stored_bytes": stored if apply else None})
    bad = counts.get("failed", 0)
    return int(ExitStatus.ERROR) if bad else code


def plan_line(action: str, c: dict, apply: bool) -> str:
    """What the run does (dry run: would do) with every candidate, in the words and counts of the
    scan's summary line (`N candidates eligible`, `N candidates blocked (by ...)`)."""
    word = lambda k, w="candidate": f"{k} {w}{'' if k == 1 else 's'}"  # noqa: E731
    head = ("dry run: " if not apply else f"{action}: ") + f"of {word(c['candidates'])}, "
    if action == "capture":
        b = c["blocked_by"]
        by = f"age {b['age']}, live {b['live']}, not kept {b['not kept']}, delete unsupported {b['delete unsupported']}"
        extra = []
        if c["goes_with"]:
            extra.append(f"{c['goes_with']} {'goes' if c['goes_with'] == 1 else 'go'} with the session that contains it"
                         if not apply else f"{c['goes_with']} went with the session that contains it")
        if c["stays"]:
            extra.append(f"{c['stays']} {'stays' if not apply else 'stayed'}: the session that contains it is not "
                         "acted on")
        rm = (f"--apply would remove {c['remove']}" if not apply else f"removed {c['remove']}") + (
            f" ({'; '.join(extra)})" if extra else "")
        cap = (f"--apply would capture the {c['capture']} blocked by delete unsupported, removing nothing, and leave "
               f"{c['left']} as they are" if not apply else
               f"captured the {c['capture']} blocked by delete unsupported, removing nothing, and left {c['left']} "
               "as they are")
        return head + f"{word(c['eligible'])} eligible: {rm}; {word(c['blocked'])} blocked (by {by}): {cap}"
    parts = [(f"--apply would capture {c['capture']}" if not apply else f"captured {c['capture']}")
             + ", removing nothing (protect never removes)"]
    if c["goes_with"]:
        parts.append(f"{c['goes_with']} {('goes' if c['goes_with'] == 1 else 'go') if not apply else 'went'} with the "
                     "session that contains it")
    parts.append(f"{c['already_kept']} kept already with their current bytes")
    parts.append(f"{c['left']} left as they are (activity or age not proven)")
    return head + "; ".join(parts)


@clean_cmd.command("capture")
@_scan_options
@click.argument("targets", nargs=-1)
@click.option("--apply", is_flag=True, help="Act (default: dry run).")
def capture_cmd(inv, older_than, waive_kept, data_dir, targets, apply):
    """Capture every ELIGIBLE session (or those of TARGET: session ids, prefixes, paths) into the
    archive -- streamed, content-addressed, decompressed and rehashed, the source re-stat'ed, the
    manifest entry authenticated -- and only then remove it. A database session's rows are
    captured and never deleted. Dry run unless --apply.

    Example: sessionsift clean capture --older-than 90d --apply
    """
    return _act("capture", inv, targets, older_than, waive_kept, data_dir, apply)


@clean_cmd.command("protect")
@_scan_options
@click.argument("targets", nargs=-1)
@click.option("--apply", is_flag=True, help="Act (default: dry run).")
def protect_cmd(inv, older_than, waive_kept, data_dir, targets, apply):
    """Capture every session the activity gate proves idle (and, with --older-than, the age gate
    proves old) and that is not already kept with its current bytes, without deleting anything: a
    verified backup against the client's own deletion (Claude Code's cleanupPeriodDays). Dry run
    unless --apply.

    Example: sessionsift clean protect --apply
    """
    return _act("protect", inv, targets, older_than or "0s", waive_kept, data_dir, apply)


@clean_cmd.command("restore")
@click.argument("ident")
@click.option("--into", type=click.Path(file_okay=False), default=None,
              help="Restore under this root instead of the scan root recorded at capture.")
@_archive_options
def restore_cmd(inv, ident, into, data_dir):
    """Restore capture IDENT (a capture id, a unique prefix, or a session id): refuses to
    overwrite, validates every target against the scan root recorded at capture, verifies every
    hash, restores the original mtimes, and says whether the client's retention will delete it
    again at its next start.

    Example: sessionsift clean restore 3f2a9c
    """
    _refuse_roots(inv)
    fmt = inv.fmt
    from ..clean.archive import Archive, archive_dir
    from ..clean.restore import restore

    r = restore(Archive(archive_dir(_data(data_dir))), ident, into)
    out = Out(fmt, "clean")
    out.header(action="restore", capture_id=r.capture["id"], provider=r.capture["provider"],
               session_id=r.capture["session_id"])
    row = {"capture_id": r.capture["id"], "provider": r.capture["provider"], "session_id": r.capture["session_id"],
           "targets": r.targets, "files": r.files, "bytes": r.bytes, "already_present": r.already,
           "retention": r.retention, "note": r.note}
    out.row("restored", row)
    for t in r.targets:
        out.text(f"restored {e(t)}")
    out.text(f"{r.files} file(s), {size(r.bytes)}, every hash verified, mtimes as captured"
             + (f"; {r.already} file(s) were there already with their captured bytes" if r.already else ""))
    if r.note:
        out.text(e(r.note))
    if r.retention:
        rt = r.retention
        if rt.get("deleted_again_at_next_start"):
            out.text(f"warning: {e(rt['note'])}")
        else:
            out.text(f"retention: {e(rt.get('note'))}")
    out.summary(restored=1, files=r.files, bytes=r.bytes)
    return int(ExitStatus.OK)


@clean_cmd.command("verify")
@_archive_options
def verify_cmd(inv, data_dir):
    """Check every manifest entry: its HMAC and its place in the chain, and every archived object
    (present, decompressed, rehashed). Exit 4 when anything fails.

    Example: sessionsift clean verify
    """
    _refuse_roots(inv)
    fmt = inv.fmt
    from ..clean.archive import Archive, archive_dir
    from ..clean.restore import verify

    arch = Archive(archive_dir(_data(data_dir)))
    checks, m = verify(arch)
    out = Out(fmt, "clean")
    out.header(action="verify", archive=str(arch.root), manifest_state=m.state)
    for c in checks:
        out.row("check", c.to_json())
        if not c.ok:
            where = f"line {c.line} {e(c.capture_id)}" if c.line is not None else "archive"
            out.text(f"FAILED {where}: {e(c.what)}: {e('; '.join(c.problems))}")
    bad = sum(1 for c in checks if not c.ok)
    caps = sum(1 for c in checks if c.what.startswith("capture"))
    lines = sum(1 for c in checks if c.line is not None)
    if m.state == "absent" and not bad:
        out.text(f"no archive manifest at {e(arch.manifest_path)}: nothing captured, nothing to verify")
    else:
        out.text(f"manifest {e(m.state)}: {lines} line(s), {caps} capture(s), {bad} failed"
                 + ("" if bad else "; HMAC chain intact, every object decompressed and rehashed, every capture "
                                   "the ledger records present")
                 + " (a removed last line the ledger does not record cannot be told from one never written)")
    out.summary(lines=lines, captures=caps, failed=bad, manifest_state=m.state)
    return int(ExitStatus.ERROR) if bad else int(ExitStatus.OK)


@clean_cmd.command("list")
@_archive_options
def list_cmd(inv, data_dir):
    """What the archive holds (each capture: its status, whether the kept gate was waived, sizes)
    and what the ledger records as exported.

    Example: sessionsift clean list --format json
    """
    _refuse_roots(inv)
    fmt = inv.fmt
    from .. import ledger
    from ..clean.archive import Archive, archive_dir
    from ..clean.restore import status_of

    data = _data(data_dir)
    arch = Archive(archive_dir(data))
    m = arch.load()
    out = Out(fmt, "clean")
    out.header(action="list", archive=str(arch.root), manifest_state=m.state, ledger=str(ledger.ledger_path(data)))
    n = 0
    for c in m.captures():
        files = [i for i in c.get("items", []) if i.get("type") == "file"] + ([c["rows"]] if c.get("rows") else [])
        b, st = _total(files, "size"), _total(files, "stored_size")
        status = status_of(m, c)
        row = {"capture_id": c["id"], "action": c.get("action"), "provider": c["provider"],
               "session_id": c["session_id"], "instant": c.get("instant"), "status": status,
               "waived_kept": bool(c.get("waived_kept")), "files": len(files), "bytes": b, "stored_bytes": st,
               "scan_root": c.get("scan_root"), "top": c.get("top"), "rows": bool(c.get("rows"))}
        out.row("capture", row)
        out.text(f"{e(c['id'])}  {e(c.get('instant', '')[:19])}  {e(status)}  {e(c['provider'])}  {e(c['session_id'])}"
                 f"  {len(files)} file(s) {size(b)} -> {size(st)}" + ("  [kept waived]" if c.get("waived_kept") else ""))
        n += 1
    exports = [x for x in ledger.read_all(data).rows if x.get("kind") == "export"]
    for x in exports:
        out.row("export", {k: x.get(k) for k in ("provider", "session_id", "format", "path", "sha256", "size",
                                                  "fingerprint", "instant")})
        out.text(f"export  {e(x.get('instant', '')[:19])}  {e(x.get('provider'))}  {e(x.get('session_id'))}  "
                 f"{e(x.get('format'))}  {e(x.get('path'))}")
    bad = len(m.bad)
    out.text(f"{n} capture(s), {sum(1 for c in m.captures() if c.get('waived_kept'))} with the kept gate waived, "
             f"{len(exports)} export(s) in the ledger" + (f"; {bad} manifest line(s) fail authentication "
                                                          "(`clean verify`)" if bad else ""))
    out.summary(captures=n, exports=len(exports), unauthenticated_lines=bad, manifest_state=m.state)
    return int(ExitStatus.INCOMPLETE) if bad else int(ExitStatus.OK)
