"""`usage --plot FILE`: a chart of daily tokens per model (stacked bars) and cost (line).

matplotlib is imported here only (the `plot` extra). `.png` and `.svg` are written by
matplotlib; `.html` is one self-contained page holding the SVG chart and the daily table (no
script, no network)."""

from __future__ import annotations

import html
import io
from pathlib import Path

from ..errors import UsageError
from .report import NO_INSTANT, Report


def _mpl():
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - the extra is installed with [test]
        raise UsageError("--plot needs matplotlib: pip install 'sessionsift[plot]'") from exc
    return plt


def figure(rep: Report):
    plt = _mpl()
    days = sorted({r.period for r in rep.rows if r.period != NO_INSTANT})
    models = sorted({r.group or "(all)" for r in rep.rows})
    fig, ax = plt.subplots(figsize=(max(6.0, 0.6 * len(days) + 3), 4.2), dpi=110)
    bottom = [0] * len(days)
    for m in models:
        vals = []
        for d in days:
            v = sum((r.totals.total or 0) for r in rep.rows if r.period == d and (r.group or "(all)") == m)
            vals.append(v)
        ax.bar(days, vals, bottom=bottom, label=m)
        bottom = [b + v for b, v in zip(bottom, vals)]
    ax.set_ylabel("tokens (input + output + cache)")
    ax.set_title(f"usage per day ({rep.zone.name})")
    ax.tick_params(axis="x", rotation=45)
    costs = []
    for d in days:
        cs = [r.totals.cost() for r in rep.rows if r.period == d]
        known = [c for c in cs if c is not None]
        costs.append(sum(known) if known else float("nan"))  # unknown is a gap, never 0
    ax2 = ax.twinx()
    ax2.plot(days, costs, color="black", marker="o", label="cost USD (gap: no price)")
    ax2.set_ylabel("cost USD" + (" (lower bound)" if not rep.totals.cost_complete else ""))
    ax.legend(loc="upper left", fontsize=7)
    fig.tight_layout()
    return fig, days, costs


def write(path: str, rep: Report) -> str:
    p = Path(path)
    ext = p.suffix.lower()
    if ext not in (".png", ".svg", ".html", ".htm"):
        raise UsageError(f"--plot {path}: name a .html, .png or .svg file")
    fig, days, costs = figure(rep)
    plt = _mpl()
    try:
        if ext in (".png", ".svg"):
            fig.savefig(p, format=ext[1:])
        else:
            buf = io.StringIO()
            fig.savefig(buf, format="svg")
            svg = buf.getvalue()
            svg = svg[svg.find("<svg"):]
            rows = "".join(
                f"<tr><td>{html.escape(r.period)}</td><td>{html.escape(r.group or '')}</td>"
                f"<td>{r.totals.total or 0:,}</td><td>{'' if r.totals.cost() is None else f'{r.totals.cost():.4f}'}"
                f"{'' if r.totals.cost_complete else ' (lower bound)'}</td></tr>"
                for r in rep.rows)
            t = rep.totals
            page = ("<!doctype html><meta charset=utf-8><title>sessionsift usage</title>"
                    "<style>body{font-family:sans-serif}td,th{padding:2px 8px;text-align:right}</style>"
                    f"<h1>usage per day, {html.escape(rep.zone.name)}</h1>{svg}"
                    "<table><tr><th>day</th><th>model</th><th>tokens</th><th>cost USD</th></tr>"
                    f"{rows}</table><p>total {t.total or 0:,} tokens over {t.messages:,} responses; cost "
                    f"{'unknown' if t.cost() is None else f'{t.cost():.4f} USD'}"
                    f"{'' if t.cost_complete else ' (a lower bound: no price for ' + html.escape(', '.join(sorted(t.no_price))) + ')'}</p>")
            p.write_text(page, encoding="utf-8")
    finally:
        plt.close(fig)
    return str(p)
