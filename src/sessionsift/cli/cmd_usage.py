"""`usage daily|weekly|monthly|session|blocks` (docs/usage.md)."""

from __future__ import annotations

from typing import Any, Callable

import click

from ..usage import collect as UC
from ..usage import report as UR
from .exit import ExitStatus
from .invocation import Invocation, targeting
from .options import coverage_json, coverage_line, make_selection, problems_json
from .output import Out, esc
from .table import COVERAGE_SEPS, prose
from . import usage_view as V

_SHARED_DEDUP = "Tokens.dedup_key per session (per-field max); cumulative totals never summed"


def _dedup() -> dict[str, str]:
    """The header's ``dedup``: each known provider's own rule (``Provider.usage_dedup``), then
    ``other`` (the shared rule)."""
    from ..providers import KNOWN, load

    out: dict[str, str] = {}
    for name in KNOWN:
        rule = getattr(load(name), "usage_dedup", None)
        if rule:
            out[name] = rule
    out["other"] = _SHARED_DEDUP
    return out


def _options(f: Callable[..., Any]) -> Callable[..., Any]:
    opts = [
        click.option("--timezone", "tz", default=None, help="IANA zone for days (default: this machine's; named in the output)."),
        click.option("--prices", "prices_file", type=click.Path(dir_okay=False, exists=True), default=None,
                     help="A price table to use instead of the bundled one (same format)."),
        click.option("--no-subagents", is_flag=True, help="Main lanes only (undercounts: subagents bill too)."),
        click.option("--order", type=click.Choice(["asc", "desc"]), default=None,
                     help="Rows oldest first (asc, the default) or newest first (desc)."),
        click.option("--json", "ccjson", is_flag=True,
                     help="One JSON document in ccusage's shapes (docs/usage.md); --format json is JSON Lines."),
    ]
    for o in reversed(opts):
        f = o(f)
    return targeting(window="days", dataset=True)(f)


def _prepare(inv: Invocation, subagents):
    if inv.dataset:
        from ..sync.answers import usage_collected
        from ..sync.dataset import Dataset
        from .options import refuse_with_dataset

        refuse_with_dataset(inv)
        col = usage_collected(Dataset.open(inv.dataset), list(inv.providers) or None, subagents)
        col.dataset = inv.dataset
        return col
    # --since/--until are days of the report (applied to its events), not a session filter
    return UC.collect_selection(make_selection(inv, narrowed=False), subagents)


def _pricer(prices_file):
    from ..usage import prices as P

    return UR.Pricer(P.load(prices_file) if prices_file else None)


def _header(out: Out, report: str, col, z, by, since, until, pricer) -> None:
    out.header(report=report, timezone={"name": z.name, "source": z.source, "now": z.describe()},
               by=by, since=None if since is None else since.isoformat(), until=None if until is None else until.isoformat(),
               claude_home=col.claude_home, claude_home_source=col.claude_home_source,
               price_table=pricer.table.describe(), dedup=_dedup(),
               **({"dataset": col.dataset} if getattr(col, "dataset", None) else {}))


def _summary(out: Out, col, rep_totals, models, price_keys, extra: dict | None = None) -> int:
    problems = list(col.problems)
    bad = [c for c in col.coverage if c.state in ("unreadable", "unknown_format")]
    notes = list(col.notes)
    if rep_totals.no_price:
        notes.append("the cost is a lower bound: no price for " + ", ".join(sorted(rep_totals.no_price)))
    if rep_totals.no_tokens:
        notes.append(f"the cost is a lower bound: {rep_totals.no_tokens} response(s) recorded no token count "
                     "(their tokens and cost are unknown)")
    if rep_totals.client_cost_messages:
        t = rep_totals
        both = t.client_cost_messages - t.client_unpriced_by_us
        msg = f"{t.client_cost_messages} response(s) carry the cost their client recorded (${t.client_cost_usd or 0:,.4f})"
        if both:
            same = abs(t.client_where_ours - t.ours_where_client) <= max(0.005, 0.005 * t.client_where_ours)
            msg += (f"; for the {both} we price too: theirs ${t.client_where_ours:,.4f}, ours ${t.ours_where_client:,.4f}"
                    + ("" if same else " - they differ (the client priced with its own table at the time)"))
        if t.client_unpriced_by_us:
            msg += (f"; {t.client_unpriced_by_us} we have no price for (a client that knows no price for a model "
                    "records 0: not a measured cost)")
        notes.append(msg)
    if rep_totals.deleted:
        notes.append(f"{len(rep_totals.deleted)} session(s) in these periods were deleted by the client (Claude Code "
                     "removes transcripts older than cleanupPeriodDays; history.jsonl keeps their prompts): the "
                     "figures are lower bounds")
    if rep_totals.without_usage:
        notes.append(f"{rep_totals.without_usage} assistant message(s) recorded no usage: their tokens and cost are "
                     "unknown, the figures are lower bounds")
    for prov, t in col.tally.items():
        if t.malformed:
            notes.append(f"{prov}: {t.malformed} candidate line(s) with usage could not be read (not JSON)")
        if t.odd_values:
            notes.append(f"{prov}: {t.odd_values} usage value(s) were not non-negative integers (read as absent)")
        if t.from_iterations:
            notes.append(f"{prov}: {t.from_iterations} record(s) had their four usage counts zeroed (a compaction replay): "
                         "read from usage.iterations[] instead")
        if t.echoes:
            notes.append(f"{prov}: {t.echoes} subagent usage echo(es) on the parent's tool results not counted "
                         "(the subagent's own lane is)")
    out.summary(**rep_totals.to_json(), models=V.models_json(models, price_keys),
                copies_merged=col.ledger.copies_merged,
                read={p: t.__dict__ for p, t in col.tally.items()},
                coverage=coverage_json(col.coverage), coverage_line=coverage_line(col.coverage),
                problems=problems_json(problems), files_unreadable=len(problems), notes=notes, **(extra or {}),
                **({"dataset": col.dataset, "machines": col.machines} if getattr(col, "dataset", None) else {}))
    if not out.json:
        t = rep_totals

        def say(line: str, seps: tuple[str, ...] = (" ",)) -> None:
            prose(out, line, seps)
        say(f"taken over {t.messages:,} response{'' if t.messages == 1 else 's'} with usage "
                 f"({col.ledger.copies_merged:,} repeated records merged), "
                 f"{t.without_usage:,} assistant message{'' if t.without_usage == 1 else 's'} without usage")
        for n in notes:
            say(f"note: {esc(n)}")
        for p in problems[:5]:
            say(f"unreadable: {esc(p.path)} ({esc(p.why)})")
        if getattr(col, "dataset", None):
            from ..sync.answers import machines_text

            say(f"dataset {esc(col.dataset)}, {esc(machines_text(col.machines))}")
        say(coverage_line(col.coverage), COVERAGE_SEPS)
    return ExitStatus.INCOMPLETE if problems or bad else ExitStatus.OK


def _ccjson_check(fmt: str, ccjson: bool, by: str | None = None) -> None:
    from ..errors import UsageError

    if ccjson and fmt == "json":
        raise UsageError("--json (ccusage's shapes) and --format json (JSON Lines) are two formats: give one")
    if ccjson and by not in (None, "project"):
        raise UsageError(f"--json --by {by}: ccusage's shapes group by project only (--by project, its --instances); "
                         "--format json gives every grouping")


def _agent_names(col) -> dict[str, str]:
    """provider name -> ccusage's name for its agent (Provider.ccusage_agent), for the providers read."""
    from ..providers import load

    out = {}
    for name in sorted({c.provider for c in col.coverage}):
        try:
            cls = load(name)
        except Exception:  # noqa: BLE001 - a reader that cannot load keeps our name
            cls = None
        if cls is not None and getattr(cls, "ccusage_agent", None):
            out[name] = cls.ccusage_agent
    return out


def _print_document(doc: dict) -> None:
    Out("text", "usage").document(doc)


def _ccjson_done(col) -> int:
    """After a --json document: what it could not read goes to stderr (the document has no place
    for it), and the exit status says it (3: incomplete)."""
    from .output import err_line

    bad = [c for c in col.coverage if c.state in ("unreadable", "unknown_format")]
    for p in col.problems[:5]:
        err_line(f"sessionsift: unreadable: {esc(p.path)} ({esc(p.why)})")
    if col.problems or bad:
        err_line("sessionsift: " + coverage_line(col.coverage))
    return ExitStatus.INCOMPLETE if col.problems or bad else ExitStatus.OK


def _project_dirs(col) -> dict[tuple[str, str], str]:
    """(provider, session id) -> the directory its main transcript is in (ccusage's projectPath)."""
    import os

    return {k: os.path.basename(os.path.dirname(v.paths[0])) for k, v in col.sessions.items() if v.paths}


def _periods(report: str, inv: Invocation, tz, prices_file,
             no_subagents, by=None, breakdown=False, plot=None, order=None, ccjson=False) -> int:
    fmt, since, until = inv.fmt, inv.since, inv.until
    _ccjson_check(fmt, ccjson, by)
    z = UR.zone(tz)
    s = UR.parse_day(since, z) if since else None
    u = UR.parse_day(until, z) if until else None
    if plot and not plot.lower().endswith((".html", ".htm", ".png", ".svg")):
        from ..errors import UsageError

        raise UsageError(f"--plot {plot}: name a .html, .png or .svg file")
    col = _prepare(inv, not no_subagents)
    pricer = _pricer(prices_file)
    rep = UR.build(col, report, z, by=by, since=s, until=u, pricer=pricer)
    if order == "desc":
        UR.reverse_rows(rep)
    if ccjson:
        from ..usage import ccusage_json as CJ
        from ..providers import deep_name

        # ccusage's own (`claude`) shapes: only the reader of the deep Scope, the agent ccusage reads by default
        claude_only = list(inv.root_request().only) == [deep_name()]
        _print_document(CJ.period_document(rep, _agent_names(col), claude_only, _project_dirs(col), order))
        return _ccjson_done(col)
    out = Out(fmt, "usage")
    _header(out, report, col, z, by, s, u, pricer)
    for r in rep.rows:
        if report == "session":
            out.row("session", V.session_row_json(rep, r, col))
        else:
            out.row("period", V.period_row_json(rep, r))
    if not out.json:
        prose(out, f"{report} usage, days in {z.describe()}; price table {pricer.table.meta.get('version')} "
                 f"(retrieved {pricer.table.meta.get('retrieved')})")
        if rep.rows:
            V.text_periods(out, rep, col, breakdown)
            if report == "session":
                V.text_sessions_extra(out, rep, col)
        else:  # no table of dashes and a $0.00 total for nothing found
            from .newcomer import found_nothing, nothing_note

            prose(out, "no usage found: " + (nothing_note(col.coverage, f"usage {report}") if found_nothing(col.coverage)
                                            else "no response in the sessions read" + (
                                                f" in the days asked ({rep.excluded_by_dates} outside them)"
                                                if rep.excluded_by_dates else "")))
    if plot:
        from ..usage import plot as PL

        path = PL.write(plot, UR.build(col, "daily", z, by="model", since=s, until=u, pricer=pricer))
        if not out.json:
            out.text(f"chart: {esc(path)}")
    return _summary(out, col, rep.totals, rep.models, rep.price_keys,
                    {"excluded_by_dates": rep.excluded_by_dates, "plot": plot, "order": order or "asc"})


class _UsageGroup(click.Group):
    """`usage [OPTIONS] [TARGET...]` without a report name is `usage daily ...`."""

    def parse_args(self, ctx, args):
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h"):
            args = ["daily", *args]
        return super().parse_args(ctx, args)


@click.group("usage", cls=_UsageGroup, invoke_without_command=True)
@click.pass_context
def usage_cmd(ctx):
    """Tokens and cost per day, week, month, session or 5-hour window, for every agent read.

    Deduplicated per provider (docs/usage.md), priced from a bundled table (cost null, never 0,
    for a model it has no price for), every figure stating what it was taken over.

    Example: sessionsift usage daily --by model --since 7d
    """
    if ctx.invoked_subcommand is None:
        ctx.exit(_periods("daily", Invocation("usage daily"), None, None, False))


def _period_command(name: str, doc: str):
    @click.command(name, help=doc)
    @_options
    @click.option("--by", type=click.Choice(list(UR.GROUPS)), default=None, help="One row per period and project, provider or model.")
    @click.option("--breakdown", is_flag=True, help="A sub-row per model under each row (text).")
    @click.option("--plot", type=click.Path(dir_okay=False), default=None, help="Also write a chart of daily usage: FILE.html, .png or .svg.")
    def cmd(inv, tz, prices_file, no_subagents, order, ccjson, by, breakdown, plot):
        return _periods(name, inv, tz, prices_file, no_subagents, by, breakdown, plot, order, ccjson)

    return cmd


for _n, _d in (("daily", "Usage per local day.\n\nExample: sessionsift usage daily --since 2026-11-01 --timezone Europe/Berlin"),
               ("weekly", "Usage per ISO week (Monday first).\n\nExample: sessionsift usage weekly --by provider"),
               ("monthly", "Usage per calendar month.\n\nExample: sessionsift usage monthly --format json")):
    usage_cmd.add_command(_period_command(_n, _d))


@usage_cmd.command("session")
@_options
@click.option("--breakdown", is_flag=True, help="A sub-row per model under each session (text).")
def session_cmd(inv, tz, prices_file, no_subagents, order, ccjson, breakdown):
    """Usage per session, subagents counted once inside their parent; the client's own recorded
    cost beside ours.

    Example: sessionsift usage session . --format json
    """
    return _periods("session", inv, tz, prices_file, no_subagents, None, breakdown, None, order, ccjson)


@usage_cmd.command("blocks")
@_options
@click.option("--align", type=click.Choice(["none", "hour"]), default="none", show_default=True,
              help="hour: open windows at the hour (ccusage's rule) instead of at the first message.")
@click.option("--active", "active_only", is_flag=True, help="Only the active window.")
@click.option("--live", is_flag=True, help="Refresh as transcripts grow (file events, no polling loop); Ctrl-C ends.")
@click.option("--live-for", type=float, default=None, help="With --live: stop after this many seconds.")
@click.option("--token-limit", "token_limit", default=None, metavar="N|max",
              help="Tokens a window may use (or max: the largest closed window's total): share used, left, "
                   "and whether the active window's projection passes it.")
def blocks_cmd(inv, tz, prices_file, no_subagents, order, ccjson, align, active_only, live, live_for, token_limit):
    """Five-hour usage windows: each opens at the first response after the previous one closed;
    the active one with its burn rate and projected totals at its close.

    Example: sessionsift usage blocks --active
    """
    import dataclasses

    from ..errors import UsageError
    from ..usage.blocks import WINDOW_SECS, limit_status, place_unpaid, resolve_limit, windows

    fmt, since, until, dataset = inv.fmt, inv.since, inv.until, inv.dataset
    _ccjson_check(fmt, ccjson)
    if ccjson and live:
        raise UsageError("--json with --live: ccusage's blocks shape is one document; --format json gives a row per refresh")
    if live and token_limit is not None:
        raise UsageError("--token-limit with --live: the live view does not show a limit; run blocks without --live")
    if live and dataset:
        raise UsageError("--live follows this machine's transcripts; a dataset is answered as synced (drop --live)")
    z = UR.zone(tz)
    s = UR.parse_day(since, z) if since else None
    u = UR.parse_day(until, z) if until else None
    req = inv.root_request()
    provs = list(req.only)
    implied = not provs
    if implied:  # the windows a subscription meters (Provider.usage_windows: Claude Code) unless asked
        from ..providers import having

        provs = list(having("usage_windows"))
        named = [n for n, r in req.roots.items() if r]
        if named and not req.home and not any(n in named for n in provs):
            # the command line names only other agents' roots (`--kilo-home DIR`): the root rule
            # answers for them (before: 'no usage in scope', every agent not looked at)
            provs, implied = named, False
        else:
            inv = dataclasses.replace(inv, providers=tuple(provs))
    pricer = _pricer(prices_file)
    out = Out(fmt, "usage")
    if live:
        from . import usage_live as L

        sel = make_selection(inv, narrowed=False)
        return L.run(out, sel, provs, z, s, u, pricer, None if align == "none" else align, active_only, live_for,
                     not no_subagents, implied)
    col = _prepare(inv, not no_subagents)
    if implied:  # nobody typed --provider: say why the others were left out, and how to add them
        for c in col.coverage:
            if c.state == "not_looked" and c.reason == "not in --provider":
                c.reason = "blocks cover Claude Code unless --provider names others"
    evs = [e for e in col.events if e.provider in provs and UR.in_range(e.ts, z, s, u)]
    now = V.now_utc()
    ws = windows(evs, pricer, align=None if align == "none" else align, now=now)
    # an assistant message that recorded no usage counts where daily and session count it: in the
    # window it falls in, else in the summary alone -- its tokens and cost unknown, never a silent 0
    unpaid_outside = place_unpaid(ws, col.without_usage,
                                  lambda m: m.provider in provs and UR.in_range(m.ts, z, s, u))
    try:
        limit = resolve_limit(token_limit, ws)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if active_only:
        ws = [w for w in ws if w.active]
    if ccjson:
        from ..usage import ccusage_json as CJ

        _print_document(CJ.blocks_document(ws, WINDOW_SECS, limit, order))
        return _ccjson_done(col)
    shown = list(reversed(ws)) if order == "desc" else ws
    _header(out, "blocks", col, z, None, s, u, pricer)
    for w in shown:
        row = V.window_json(w, pricer.used)
        if limit is not None:
            row["token_limit"] = limit_status(w, limit)
        out.row("window", row)
    if not out.json:
        prose(out, f"5-hour windows ({'opened at the hour' if align == 'hour' else 'opened at the first response'}), "
                 f"times in {z.describe()}")
        if ws:
            V.text_windows(out, shown, z.tz, now, limit)
        else:
            out.text("no active window" if active_only else "no usage in scope")
    tot = UR.Totals()
    models: dict[str, UR.Totals] = {}
    for w in ws:
        for m, t in w.models.items():
            models.setdefault(m, UR.Totals()).merge(t)
        tot.merge(w.totals)
    if not active_only:
        tot.without_usage += unpaid_outside
    return _summary(out, col, tot, models, pricer.used, {"windows": len(ws), "active": any(w.active for w in ws),
                                                        "align": align, "token_limit": limit, "order": order or "asc"})
