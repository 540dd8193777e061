"""`sync --to DATASET` and `query SQL --dataset DATASET` (docs/dataset.md). Thin commands over
sessionsift.sync."""

from __future__ import annotations

import click

from .exit import ExitStatus
from .invocation import targeting
from .options import coverage_line, make_selection
from .output import Out, esc, plural


@click.command("sync")
@targeting()
@click.option("--to", "to", required=True, metavar="DATASET",
              help="The dataset: a folder (local, a network share, a synced folder) or s3://bucket/prefix.")
@click.option("--machine", "machine", default=None, metavar="NAME",
              help="This machine's name in the dataset (kept for later runs; default: the host name).")
@click.option("--adopt", is_flag=True, help="Continue the history of a dataset machine whose id is not this "
                                            "machine's (a reinstalled machine keeping its name).")
def sync_cmd(inv, to, machine, adopt):
    """Append what is new on this machine since its last sync to DATASET (TARGETs: only those
    sessions; none: every session of every provider looked at): every agent's sessions,
    records, usage events, tool calls and file changes, as Parquet partitioned by machine, provider
    and date, with a manifest per machine. A re-run adds nothing; a killed run leaves nothing a
    reader sees, and the next run completes it.

    \b
    Example: sessionsift sync --to /mnt/team/sessions --machine laptop
    Example: sessionsift sync --to s3://bucket/sessions
    """
    from ..sync import run as R
    from ..sync.machine import this_machine

    fmt = inv.fmt
    sel = make_selection(inv)
    m = this_machine(machine)
    res = R.sync(to, sel, m, adopt=adopt)
    out = Out(fmt, "sync")
    out.header(dataset=res.dataset, machine=res.machine, machine_id=res.machine_id)
    for r in res.runs:
        out.row("run", r)
    out.summary(dataset=res.dataset, machine=res.machine, machine_id=res.machine_id, sessions=res.sessions,
                unchanged=res.unchanged, new=res.new, appended=res.appended, rewritten=res.rewritten,
                runs=len(res.runs), rows=res.rows, files=res.files, bytes=res.bytes,
                orphans_removed=res.orphans_removed, seconds=round(res.seconds, 3), problems=res.problems,
                coverage=res.coverage)
    if res.changed:
        rows = ", ".join(f"{v:,} {k}" for k, v in sorted(res.rows.items()))
        out.text(f"synced {plural(res.changed, 'session')} as {esc(res.machine)} into {esc(res.dataset)}: "
                 f"{res.new} new, {res.appended} appended, {res.rewritten} rewritten ({res.unchanged} unchanged); "
                 f"{rows}; {plural(res.files, 'file')}, {res.bytes:,} bytes in {plural(len(res.runs), 'run')}")
    else:
        out.text(f"nothing new: {plural(res.sessions, 'session')} as synced before ({esc(res.machine)} in "
                 f"{esc(res.dataset)})")
    if res.orphans_removed:
        out.text(f"removed {plural(res.orphans_removed, 'file')} an interrupted sync had left (never committed)")
    for p in res.problems[:5]:
        out.text(f"unreadable: {esc(p['path'])} ({esc(p['why'])})")
    out.text(coverage_line(sel.coverage()))
    return ExitStatus.INCOMPLETE if res.problems or sel.incomplete() else ExitStatus.OK


@click.command("query")
@click.argument("sql")
@targeting(targets=None, dataset=True)
def query_cmd(inv, sql):
    """Run SQL (DuckDB) over every machine of a dataset: views sessions, records, usage, tool_calls,
    file_changes (current rows), sessions_versions and manifests (docs/dataset.md has the schema).

    \b
    Example: sessionsift query "SELECT machine, provider, count(*) FROM sessions GROUP BY ALL" --dataset /mnt/team/sessions
    """
    from ..errors import UsageError
    from ..sync import schema as S
    from ..sync.answers import run_sql

    if not inv.dataset:
        raise UsageError("query needs --dataset DATASET (the dataset `sync` wrote)")
    inv.refuse(*[n for n in inv.named if n not in ("--dataset", "--format")],
               why="runs SQL over the dataset; narrow in the SQL itself")
    dataset, fmt = inv.dataset, inv.fmt
    cols, rows = run_sql(dataset, sql)
    out = Out(fmt, "query")
    out.header(dataset=dataset, schema=f"{S.DATASET}/{S.VERSION}", columns=cols)
    n = 0
    if out.json:
        for r in rows:
            out.row("row", dict(zip(cols, r)))
            n += 1
    else:
        out.text("\t".join(esc(c) for c in cols), keep_tabs=True)
        for r in rows:
            out.text("\t".join("-" if v is None else esc(v) for v in r), keep_tabs=True)
            n += 1
    out.summary(rows=n, columns=cols, schema=f"{S.DATASET}/{S.VERSION}")
    out.text(f"{plural(n, 'row')} (- = null)")
    return ExitStatus.OK if n else ExitStatus.NO_MATCH
