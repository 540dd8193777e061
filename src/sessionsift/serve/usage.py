"""The usage page: tokens and cost per day, week or month, per agent or per model
(`sessionsift.usage.report.build` over `usage.collect.collect_selection`), drawn as an inline SVG
stacked bar chart made here (no script, no outside request), with the table of the same rows; and
the five-hour billing windows (`usage.blocks.windows`) with the current window's burn rate and
projection. A count nobody recorded is shown as unknown, never 0; a cost that is a lower bound
says so."""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from .layout import e, href, num, page, t

if TYPE_CHECKING:
    from ..usage.blocks import Window
    from ..usage.report import Report

PERIODS = ("daily", "weekly", "monthly")
BYS = {"provider": "agent", "model": "model"}
PALETTE = ("#2f6feb", "#1a7f37", "#bf8700", "#cf222e", "#8250df", "#0969da", "#9a6700", "#116329", "#a40e26",
           "#6e7781", "#e16f24", "#1b7c83")
MAX_BLOCKS = 12


@dataclass
class UsageAnswer:
    """What one usage page shows (`usage.report.build` over `usage.collect.collect_selection`,
    and `usage.blocks.windows` with the messages without usage placed, as `usage blocks` does).
    Made in a worker process of its own when the server has workers (serve/worker.py): the
    collection of every message stays there and is returned with it."""

    report: Report
    windows: list[Window]
    problems: int
    """How many inputs could not be read (the figures are then lower bounds)."""


def answer(sel, period: str, by: str) -> UsageAnswer:
    from ..usage import report as UR
    from ..usage.blocks import place_unpaid, windows
    from ..usage.collect import collect_selection

    col = collect_selection(sel)
    pricer = UR.Pricer()
    rep = UR.build(col, period, UR.zone(None), by=by, pricer=pricer)
    ws = windows(col.events, pricer, now=time.time())
    place_unpaid(ws, col.without_usage)  # as usage blocks counts them: unknown tokens and cost, not 0
    return UsageAnswer(rep, ws, len(col.problems))


def _cost(tt) -> str:
    c = tt.cost()
    if c is None:
        return num(None)
    return f"${c:,.4f}" + ("" if tt.cost_complete else ' <span class="unknown" title="a lower bound: some messages '
                                                        'could not be priced">≥</span>')


def chart(rep, label) -> str:
    """Stacked bars: one per period, one colour per group, height = tokens (input + output + cache)."""
    periods: list[str] = []
    groups: list[str] = []
    val: dict[tuple[str, str], int] = {}
    unknown: set[str] = set()
    for r in rep.rows:
        if r.period not in periods:
            periods.append(r.period)
        g = r.group or "all"
        if g not in groups:
            groups.append(g)
        tot = r.totals.total
        if tot is None:
            unknown.add(r.period)
        else:
            val[(r.period, g)] = val.get((r.period, g), 0) + tot
    if not periods:
        return '<p class="meta" id="chart-none">No usage in this selection.</p>'
    W, H, left, bottom, top = 760, 260, 70, 40, 12
    peak = max([sum(val.get((p, g), 0) for g in groups) for p in periods] + [1])
    bw = (W - left - 10) / len(periods)
    out = [f'<svg class="chart" id="chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {H}" role="img" '
           f'aria-label="{e(label)}">']
    for i in range(5):  # the scale
        y = top + (H - top - bottom) * (1 - i / 4)
        out.append(f'<line x1="{left}" x2="{W - 5}" y1="{y:.1f}" y2="{y:.1f}" stroke="#eaeef2"/>'
                   f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{_short(peak * i / 4)}</text>')
    for pi, p in enumerate(periods):
        x = left + pi * bw
        y = H - bottom
        for gi, g in enumerate(groups):
            v = val.get((p, g), 0)
            if not v:
                continue
            h = (H - top - bottom) * v / peak
            y -= h
            out.append(f'<rect class="bar" x="{x + bw * 0.12:.1f}" y="{y:.1f}" width="{bw * 0.76:.1f}" height="{h:.1f}" '
                       f'fill="{PALETTE[gi % len(PALETTE)]}" data-period="{t(p)}" data-group="{t(g)}" data-tokens="{v}">'
                       f"<title>{t(p)} · {t(g)}: {v:,} tokens</title></rect>")
        if p in unknown:
            out.append(f'<text x="{x + bw / 2:.1f}" y="{H - bottom - 4}" text-anchor="middle">?</text>')
        if len(periods) <= 16 or pi % max(1, len(periods) // 12) == 0:
            out.append(f'<text x="{x + bw / 2:.1f}" y="{H - bottom + 16}" text-anchor="middle">{t(p)}</text>')
    out.append("</svg>")
    legend = "".join(f'<span><i class="sw{gi % len(PALETTE)}"></i>{t(g)}</span>'
                     for gi, g in enumerate(groups))
    return "".join(out) + f'<p class="legend">{legend}</p>'


def _short(v: float) -> str:
    for d, u in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if v >= d:
            return f"{v / d:.1f}{u}"
    return f"{v:.0f}"


def render(store, q: dict) -> str:
    from ..usage import report as UR

    wanted = q.get("period")
    period: str = wanted if isinstance(wanted, str) and wanted in PERIODS else "daily"
    asked = q.get("by")
    by: str = asked if isinstance(asked, str) and asked in BYS else "provider"
    from .worker import ONCE

    got = store.memo(("usage", period, by), lambda: store.compute(ONCE, answer, period, by))
    rep, ws = got.report, got.windows
    z = UR.zone(None)
    tabs = " · ".join(f'<a{" aria-current=true" if p == period else ""} href="{href("/usage", period=p, by=by)}">{p}</a>'
                      for p in PERIODS)
    bys = " · ".join(f'<a{" aria-current=true" if b == by else ""} href="{href("/usage", period=period, by=b)}">per {n}</a>'
                     for b, n in BYS.items())
    parts = [f'<h1>Usage</h1><p class="facets">{tabs} — {bys}</p>',
             chart(rep, f"tokens {period} per {BYS[by]}")]
    rows = ['<table class="grid" id="usage"><thead><tr><th>Period</th><th>' + e(BYS[by].capitalize()) +
            '</th><th class="n">Input</th><th class="n">Output</th><th class="n">Cache read</th>'
            '<th class="n">Cache write</th><th class="n">Total</th><th class="n">Responses</th><th class="n">Cost</th>'
            "</tr></thead><tbody>"]
    for r in rep.rows:
        tt = r.totals
        name = store.display(r.group) if by == "provider" and r.group else (r.group or "")
        rows.append(f'<tr data-period="{t(r.period)}" data-group="{t(r.group or "")}" '
                    f'data-total="{"" if tt.total is None else tt.total}"><td>{t(r.period)}</td>'
                    f"<td>{t(name)}</td><td class=n>{num(tt.input)}</td><td class=n>{num(tt.output)}</td>"
                    f"<td class=n>{num(tt.cache_read)}</td><td class=n>{num(tt.cache_write)}</td>"
                    f"<td class=n>{num(tt.total)}</td><td class=n>{tt.messages:,}"
                    + (f" (+{tt.without_usage:,} without usage)" if tt.without_usage else "")
                    + f"</td><td class=n>{_cost(tt)}</td></tr>")
    tot = rep.totals
    rows.append(f'</tbody><tfoot><tr><th colspan="2">All</th><td class=n>{num(tot.input)}</td><td class=n>'
                f"{num(tot.output)}</td><td class=n>{num(tot.cache_read)}</td><td class=n>{num(tot.cache_write)}</td>"
                f"<td class=n id=\"usage-total\">{num(tot.total)}</td><td class=n>{tot.messages:,}</td>"
                f"<td class=n>{_cost(tot)}</td></tr></tfoot></table>")
    parts.append("".join(rows))
    if tot.no_price:
        parts.append(f'<p class="meta">No price known for: {t(", ".join(sorted(tot.no_price)))} (their cost is not '
                     "counted: the cost is a lower bound).</p>")
    parts.append(f"<h2>Billing windows (5 hours)</h2>")
    act = [w for w in ws if w.active]
    if act:
        w = act[0]
        b, pj = w.burn or {}, w.projection or {}
        parts.append(f'<p class="counts" id="burn">Current window since {e(_when(w.start, z))}: '
                     f"<b>{b.get('tokens_per_minute', 0):,.0f}</b> tokens/minute"
                     + (f", ${b['cost_usd_per_hour']:,.2f}/hour" if b.get("cost_usd_per_hour") is not None else "")
                     + (" (a lower bound)" if b.get("cost_is_lower_bound") else "")
                     + f"; projected at its close ({e(_when(w.end, z))}): {pj.get('total_tokens', 0):,} tokens"
                     + (f", ${pj['cost_usd']:,.2f}" if pj.get("cost_usd") is not None else "") + "</p>")
    else:
        parts.append('<p class="meta" id="burn">No window is open now (no response in the last five hours).</p>')
    parts.append('<table class="grid" id="blocks"><thead><tr><th>Window</th><th class="n">Tokens</th>'
                 '<th class="n">Responses</th><th class="n">Sessions</th><th class="n">Cost</th></tr></thead><tbody>'
                 + "".join(f'<tr{" class=active" if w.active else ""}><td>{e(_when(w.start, z))} – {e(_when(w.end, z))}'
                           f'{" (now)" if w.active else ""}</td><td class=n>{num(w.totals.total)}</td>'
                           f"<td class=n>{w.totals.messages:,}"
                           + (f" (+{w.totals.without_usage:,} without usage)" if w.totals.without_usage else "")
                           + f"</td><td class=n>{len(w.sessions):,}</td>"
                           f"<td class=n>{_cost(w.totals)}</td></tr>" for w in ws[::-1][:MAX_BLOCKS])
                 + "</tbody></table>" + (f'<p class="meta">The newest {MAX_BLOCKS} of {len(ws)} windows.</p>'
                                         if len(ws) > MAX_BLOCKS else ""))
    if got.problems:
        parts.append(f'<p class="omissions">{got.problems} inputs could not be read: the figures are lower '
                     "bounds.</p>")
    return page("Usage", "\n".join(parts), current="/usage")


def _when(ts: float, z) -> str:
    return datetime.fromtimestamp(ts, z.tz).strftime("%Y-%m-%d %H:%M")
