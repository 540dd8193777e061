"""`export chunks|markdown|html|parquet`: sessions taken elsewhere, each export recorded in the
ledger (docs/export.md). Thin commands over sessionsift.export."""

from __future__ import annotations

from pathlib import Path

import click

from ..errors import UsageError
from .exit import ExitStatus
from .invocation import targeting
from .options import (coverage_json, coverage_line, sessions_unit, display_name, problems_json, selection_header)
from .output import Out, esc


class _ExportGroup(click.Group):
    def resolve_command(self, ctx, args):
        if args and args[0] not in self.commands and not args[0].startswith("-"):
            raise UsageError(f"no such export format: {args[0]}",
                             hint="formats: " + ", ".join(sorted(self.commands)) + " (e.g. sessionsift export chunks TARGET --out DIR)")
        return super().resolve_command(ctx, args)


@click.group("export", cls=_ExportGroup)
def export_cmd():
    """Take sessions elsewhere: chunks (JSON Lines for a knowledge base), markdown and html (one
    readable file per session plus an index), parquet (a dataset of every record). Every file
    written is recorded in the ledger with the reading's fingerprint (docs/export.md).

    Example: sessionsift export chunks . --out exported/
    """


def selection(inv):
    """Every provider's sessions the invocation names, with full discovery facts (projects,
    titles), narrowed by its session filters."""
    from ..providers.scope import select, survey

    from ..providers.scope import narrow

    sv = survey(inv.root_request())
    sel = select(sv, list(inv.targets), inv.session_list())
    if sel.claude is not None:
        sel.claude.use_index(inv.index_off())
    n = inv.narrowing()
    return narrow(sel, n) if n is not None else sel


def out_option(f):
    return click.option("--out", "out", type=click.Path(file_okay=False), required=True,
                        help="Directory to write into (created; files are never overwritten in place).")(f)


def outcome_row(o) -> dict:
    from .. import ledger

    return {"provider": o.ref.provider, "session_id": o.ref.session_id, "is_subagent": o.ref.is_subagent,
            "parent_session_id": o.ref.parent_session_id, "project": o.ref.project,
            "status": o.status, "path": None if o.path is None else str(o.path), "version": o.version,
            "supersedes": o.supersedes, "fingerprint": o.fingerprint, "fingerprint_kind": o.fingerprint_kind,
            "reader_version": o.reader_version, "why": o.why, "ledger": str(ledger.ledger_path()), **o.facts}


def report(out: Out, sel, fmt_name: str, outcomes: list, extra_summary: dict | None = None) -> int:
    from .. import ledger

    counts = {"written": 0, "current": 0, "failed": 0}
    for o in outcomes:
        counts[o.status] += 1
    covs = sel.coverage()
    from .options import session_split

    out.summary(format=fmt_name, **session_split([o.ref for o in outcomes]), **counts, ledger=str(ledger.ledger_path()),
                problems=problems_json(sel.problems()), coverage=coverage_json(covs), **(extra_summary or {}))
    if not outcomes:
        from .newcomer import found_nothing, nothing_note

        out.text("nothing exported: " + (nothing_note(covs, f"export {fmt_name} --out DIR") if found_nothing(covs)
                                          else "no session in scope"))
    else:
        out.text(f"{sessions_unit(len(outcomes), covs)}: {counts['written']} written, {counts['current']} already current, "
                 f"{counts['failed']} failed"
                 + (f"; recorded in {esc(ledger.ledger_path())}" if counts["written"] else "; nothing new to record"))
    out.text(coverage_line(covs))
    if counts["failed"] or sel.incomplete():
        return ExitStatus.INCOMPLETE
    return ExitStatus.OK if outcomes else ExitStatus.NO_MATCH


def print_outcome(out: Out, o, what: str) -> None:
    out.row("export", outcome_row(o))
    head = f"{esc(o.ref.session_id)} ({esc(display_name(o.ref.provider))}) "
    if o.status == "failed":
        out.text(head + f"FAILED: {esc(o.why)}")
    elif o.status == "current":
        out.text(head + f"current (v{o.version}, this reading was exported already): {esc(o.path)}")
    else:
        out.text(head + f"v{o.version} {what}: {esc(o.path)}"
                 + (f" (supersedes {esc(o.supersedes)})" if o.supersedes else ""))


@export_cmd.command("chunks")
@targeting()
@out_option
@click.option("--max-chars", type=click.IntRange(min=64), default=8000, show_default=True,
              help="Largest chunk, in characters (a turn longer than this is cut at record boundaries).")
@click.option("--redact", is_flag=True, help="Mask the credentials `audit secrets` finds.")
@click.option("--force", is_flag=True, help="Write a new version even when this reading was exported already.")
def chunks_cmd(inv, out, max_chars, redact, force):
    """Conversations as JSON Lines chunks: one per turn of a lane, under --max-chars, each with its
    provider, session, lane, turn, locators and byte range back to the transcript, roles, labels,
    text and the reading's omissions (never an exact copy). No target = every session.

    \b
    Example: sessionsift export chunks . --out exported/
    Example: sessionsift export chunks --home examples/home --out /tmp/chunks --format json
    """
    from ..export import chunks as C
    from ..export.run import export_each
    from ..export.source import pairs

    fmt = inv.fmt
    sel = selection(inv)
    o = Out(fmt, "export")
    o.header(**selection_header(sel), format="chunks", out=str(Path(out).resolve()), max_chars=max_chars,
             redact=redact)
    red = _redactor() if redact else None

    def write(prov, ref, dest, reading):
        st = C.write_chunks(prov, ref, dest, max_chars=max_chars, reading=reading, redact=red)
        return {"chunks": st.chunks, "records": st.records, "max_chars": max_chars, "redacted": redact,
                "omissions": st.notes.omissions(st.report)}

    outcomes = []
    for oc in export_each(pairs(sel), fmt="chunks", schema=C.SCHEMA_VERSION, module_file=C.__file__,
                          out_dir=Path(out), suffix="chunks.jsonl", write=write, force=force):
        outcomes.append(oc)
        print_outcome(o, oc, f"{oc.facts.get('chunks')} chunks")
    return report(o, sel, "chunks", outcomes)


def _redactor():
    from ..audit.secrets import allowlist_path, detector, load_allowlist, redact

    det = detector(False)
    allow, _ = load_allowlist(allowlist_path())

    def red(text: str) -> tuple[str, int]:
        t, hits = redact(text, det, allow)
        return t, len(hits)

    return red


@export_cmd.command("parquet")
@targeting()
@out_option
@click.option("--force", is_flag=True, help="Write a new version even when this reading was exported already.")
def parquet_cmd(inv, out, force):
    """Every record (provider, session, lane, locator, uuid, instant, role, labels, tool, call id,
    exit code, tokens, model, text, sizes) as a Parquet dataset partitioned by provider and date,
    schema sessionsift.records/1 (docs/export.md). No target = every session of every provider.

    \b
    Example: sessionsift export parquet --out dataset/
    Example: sessionsift export parquet --home examples/home --out /tmp/ds --format json
    """
    from ..export.parquet import SCHEMA_NAME, SCHEMA_VERSION, export_parquet
    from ..export.source import pairs

    fmt = inv.fmt
    sel = selection(inv)
    o = Out(fmt, "export")
    root = Path(out).resolve()
    o.header(**selection_header(sel), format="parquet", out=str(root), dataset=str(root / "records"),
             schema=f"{SCHEMA_NAME}/{SCHEMA_VERSION}", partitioning=["provider", "date"])
    outcomes = []
    rows = 0
    current: int | None = 0
    from .. import ledger

    for oc in export_parquet(pairs(sel), root, force=force):
        outcomes.append(oc)
        if oc.status == "written":
            rows += oc.rows or 0
        elif oc.status == "current":  # a count the ledger does not hold makes the sum unknown
            current = None if current is None or oc.rows is None else current + oc.rows
        o.row("export", {"provider": oc.ref.provider, "session_id": oc.ref.session_id,
                         "is_subagent": oc.ref.is_subagent,
                         "parent_session_id": oc.ref.parent_session_id, "project": oc.ref.project,
                         "status": oc.status, "path": str(oc.files[0]) if oc.files else None,
                         "paths": [str(p) for p in oc.files], "version": oc.version, "rows": oc.rows,
                         "superseded": oc.superseded, "fingerprint": oc.fingerprint,
                         "fingerprint_kind": oc.fingerprint_kind, "reader_version": oc.reader_version,
                         "why": oc.why, "omissions": oc.omissions, "ledger": str(ledger.ledger_path())})
        head = f"{esc(oc.ref.session_id)} ({esc(display_name(oc.ref.provider))}) "
        if oc.status == "failed":
            o.text(head + f"FAILED: {esc(oc.why)}")
        else:
            o.text(head + (f"v{oc.version} {oc.rows} rows in {len(oc.files)} file{'s' if len(oc.files) != 1 else ''}"
                           if oc.status == "written" else
                           f"current (v{'?' if oc.version is None else oc.version}, "
                           f"{'? rows' if oc.rows is None else f'{oc.rows} rows'})")
                   + (f"; {len(oc.superseded)} superseded files moved out of the dataset" if oc.superseded else ""))
    o.text(f"dataset: {esc(root / 'records')} (hive partitions provider=/date=; schema {SCHEMA_NAME}/{SCHEMA_VERSION})")
    return report(o, sel, "parquet", outcomes, {"rows_written": rows, "rows_current": current,
                                                      "dataset": str(root / "records")})


def _share(fmt_name, inv, out, redact, force):
    from .cmd_audit_secrets import finding_json
    from ..export.share import export_documents
    from ..export.source import pairs

    fmt = inv.fmt
    sel = selection(inv)
    o = Out(fmt, "export")
    root = Path(out).resolve()
    o.header(**selection_header(sel), format=fmt_name, out=str(root), redact=redact)
    shown = {"n": 0}

    def each(oc):
        print_outcome(o, oc, "written")

    def findings(fs):
        for f in fs:
            o.row("secret", {**finding_json(f), "redacted": redact})
            if shown["n"] < 20:
                shown["n"] += 1
                o.text(f"secret: {esc(f.session_id)} {esc(f.locator)} {esc(f.field)}: {esc(f.type)} {esc(f.preview)}"
                       + (" (masked in the output)" if redact else " (NOT masked: pass --redact)"))
        if len(fs) > shown["n"]:
            o.text(f"... {len(fs) - shown['n']} more secret findings (--format json lists them all)")

    res = export_documents(pairs(sel), fmt_name, root, redact=redact, force=force, on_outcome=each,
                           on_findings=findings)
    if res.index is not None:
        o.text(f"index: {esc(res.index)}")
    status = report(o, sel, fmt_name, res.outcomes, {"index": None if res.index is None else str(res.index),
                                                      "secrets_found": len(res.findings), "redacted": redact})
    if res.findings and not redact and status == ExitStatus.OK:
        return ExitStatus.SECRETS_FOUND
    return status


@export_cmd.command("markdown")
@targeting()
@out_option
@click.option("--redact", is_flag=True, help="Mask the credentials the secrets audit finds.")
@click.option("--force", is_flag=True, help="Write a new version even when this reading was exported already.")
def markdown_cmd(inv, out, redact, force):
    """One Markdown file per session plus an index: prompts, replies, tool calls with their results
    folded, thinking marked, subagents nested, compaction boundaries, images inline; transcript text
    fenced, never interpreted. The secrets audit runs first and its findings are shown; exit 9 when
    credentials were written unmasked (use --redact).

    \b
    Example: sessionsift export markdown . --out shared/ --redact
    """
    return _share("markdown", inv, out, redact, force)


@export_cmd.command("html")
@targeting()
@out_option
@click.option("--redact", is_flag=True, help="Mask the credentials the secrets audit finds.")
@click.option("--force", is_flag=True, help="Write a new version even when this reading was exported already.")
def html_cmd(inv, out, redact, force):
    """One self-contained HTML file per session plus an index (no script, no network at view time:
    a strict Content-Security-Policy; everything from the transcript escaped). The secrets audit
    runs first and its findings are shown; exit 9 when credentials were written unmasked.

    \b
    Example: sessionsift export html . --out shared/ --redact
    """
    return _share("html", inv, out, redact, force)
