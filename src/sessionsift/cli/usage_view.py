"""Rendering of `usage` reports: JSON rows (docs/json.md) and rich tables with a bar per row."""

from __future__ import annotations

import os
from datetime import datetime, timezone

from ..timefmt import instant
from ..usage.blocks import Window
from ..usage.collect import Collected
from ..usage.report import NO_INSTANT, Report, Row, Totals, session_id_of, week_start
from .output import Out, clip, esc, plural
from .table import prose

_EIGHTHS = " ▏▎▍▌▋▊▉█"


def bar(v: int | None, vmax: int, width: int = 12) -> str:
    """A bar of at most `width` cells, each one whole character (eighths for the last)."""
    if not v or vmax <= 0 or width <= 0:
        return ""
    units = min(int(round(v / vmax * width * 8)), width * 8)
    full, part = divmod(units, 8)
    return "█" * full + (_EIGHTHS[part] if part else "")


def num(v: int | None) -> str:
    return "-" if v is None else f"{v:,}"


def money(t: Totals) -> str:
    c = t.cost()
    if c is None:
        return "no price" if t.no_price else "unknown"
    return (f"≥${c:,.2f}" if not t.cost_complete else f"${c:,.2f}")


def taken(t: Totals) -> str:
    """What a row was taken over: responses with usage (+ assistant messages without, + sessions
    whose transcripts the client deleted: `+Nd`)."""
    return (f"{t.messages:,}" + (f" +{t.without_usage:,}?" if t.without_usage else "")
            + (f" +{len(t.deleted):,}d" if t.deleted else ""))


def total_cell(t: Totals) -> str:
    """The row's total tokens, `≥` when a session of it was deleted by its client."""
    if t.deleted:
        return "≥" + ("0" if t.total is None else f"{t.total:,}")
    return num(t.total)


def models_json(models: dict[str, Totals], price_keys: dict[str, str | None]) -> list[dict]:
    return [{"model": m, "price_key": price_keys.get(m), **t.to_json()}
            for m, t in sorted(models.items(), key=lambda kv: -(kv[1].total or 0))]


BAR_WIDTH = 12
"""Cells of the longest bar; a narrower terminal gets a shorter bar, and none when not even
four cells are left (a bar is never cut: its cells are whole characters)."""


def out_width(out: Out) -> int | None:
    """The width a table is laid out in: `$COLUMNS` when a positive integer, else the terminal's
    when the output is one, else None (a pipe or a file: the table's natural width, nothing
    wrapped or clipped for a program that reads it)."""
    try:
        c = int(os.environ.get("COLUMNS", ""))
        if c > 0:
            return c
    except ValueError:
        pass
    st = out.stream
    try:
        if st.isatty():
            return os.get_terminal_size(st.fileno()).columns
    except (AttributeError, OSError, ValueError):
        pass
    return None


class _Buffered:
    """A rich Console that renders into a buffer; print() hands each line to Out, whose rendering
    path escapes it (no command writes to the terminal any other way)."""

    def __init__(self, out: Out, width: int | None):
        import io

        from rich.console import Console

        self.out = out
        self.width = width
        self.buf = buf = io.StringIO()
        self.con = Console(file=buf, markup=False, highlight=False, emoji=False,
                           no_color=bool(os.environ.get("NO_COLOR")), width=width or 100_000, force_terminal=False)

    def natural(self, renderable) -> int:
        """The width `renderable` takes when nothing has to shrink."""
        return self.con.measure(renderable, options=self.con.options.update_width(100_000)).maximum

    def print(self, renderable) -> None:
        self.con.print(renderable)
        for ln in self.buf.getvalue().rstrip("\n").split("\n"):
            self.out.text(ln.rstrip())
        self.buf.seek(0)
        self.buf.truncate()


def _console(out: Out) -> _Buffered:
    return _Buffered(out, out_width(out))


def fit(s: str, n: int, keep_end: bool = False) -> str:
    """`s` in at most `n` terminal cells, an ellipsis marking what was cut (at the start when
    `keep_end`: a path keeps its last, distinguishing parts)."""
    from rich.cells import cell_len

    if cell_len(s) <= n:
        return s
    if n <= 1:
        return "…"[:n]
    chars = list(reversed(s)) if keep_end else list(s)
    kept: list[str] = []
    used = 0
    for ch in chars:
        w = cell_len(ch)
        if used + w > n - 1:
            break
        kept.append(ch)
        used += w
    return "…" + "".join(reversed(kept)) if keep_end else "".join(kept) + "…"


FLEX_FLOOR = 8
"""A name column (models, project) is not shrunk below this many cells."""


def print_table(out: Out, columns: list[tuple[str, dict]], rows: list[list[str]], bars: list[int | None]) -> None:
    """A table of `columns` (name, rich column options) and `rows`, with a bar per row (`bars`: the
    value each row's bar is drawn for, None for none) in what the width leaves: BAR_WIDTH cells,
    fewer on a narrow terminal, no bar column below 4 cells. When the table does not fit without
    it, the name columns marked `flex` (models, project) shrink, widest first, with an ellipsis;
    then a column marked `whole` (the session ids: each row's whole id, None for none) shows each
    id cut in its middle (start and end kept, not below its `floor`); then the columns marked `drop`
    (a number: the lowest goes first) are left out, and the table says which. A figure is never
    cut (a table that still does not fit is printed whole, wider than the terminal, rather than
    losing digits)."""
    from rich.cells import cell_len
    from rich.table import Table

    from .table import fit_middle

    nat = [max([cell_len(r[i]) for r in rows] + [cell_len(name)]) for i, (name, _o) in enumerate(columns)]
    caps = {i: min(nat[i], o.get("max_width") or nat[i]) for i, (_n, o) in enumerate(columns) if o.get("flex")}
    mids: dict[int, int] = {}
    """A `whole` column cut to this many cells: its cells are then its whole ids cut in the middle."""
    keep = list(range(len(columns)))
    dropped: list[str] = []

    def make(room: int) -> "Table":
        t = Table(show_edge=False, box=None, pad_edge=False, header_style="bold")
        for i in keep:
            name, opts = columns[i]
            opts = {k: v for k, v in opts.items() if k not in ("flex", "max_width", "whole", "floor", "drop")}
            if i in caps:
                opts.update(no_wrap=True, max_width=caps[i])
            elif i in mids:
                opts.update(no_wrap=True, min_width=mids[i], max_width=mids[i])
            else:
                opts.update(no_wrap=True, min_width=nat[i])
            t.add_column(name, **opts)
        if room:
            t.add_column("", justify="left", no_wrap=True, min_width=room, max_width=room)
        vmax = max([v or 0 for v in bars] + [0])
        for k, (cells, v) in enumerate(zip(rows, bars)):
            shown = []
            for i in keep:
                c = cells[i]
                if i in caps:
                    c = fit(c, caps[i], columns[i][1].get("flex") == "left")
                elif i in mids:
                    whole = columns[i][1]["whole"][k]
                    c = fit_middle(esc(whole), mids[i]) if whole is not None else fit(c, mids[i])
                shown.append(c)
            t.add_row(*shown, *([bar(v, vmax, room)] if room else []))
        return t

    con = _console(out)
    room = BAR_WIDTH
    if con.width is not None:
        W = con.width
        need = con.natural(make(0))
        room = min(BAR_WIDTH, W - need - 2)
        if room < 4:
            room = 0
            if need > W:  # headers of two words take two lines ("cache" over "write")
                columns = [(n.replace(" ", "\n") if i not in caps else n, o) for i, (n, o) in enumerate(columns)]
                nat = [max([cell_len(r[i]) for r in rows] + [cell_len(w) for w in n.split()])
                       for i, (n, _o) in enumerate(columns)]
                need = con.natural(make(0))
            while need > W:
                i = max(caps, key=lambda k: caps[k], default=None)
                if i is None or caps[i] <= FLEX_FLOOR:
                    break
                cut = min(caps[i] - FLEX_FLOOR, need - W)
                caps[i] -= cut
                need -= cut
            for i, (_n, o) in enumerate(columns):  # the ids, cut in their middle as far as needed
                if need > W and o.get("whole") is not None and nat[i] > o.get("floor", 9):
                    mids[i] = max(o.get("floor", 9), nat[i] - (need - W))
                    need = con.natural(make(0))
            drops = sorted((o["drop"], i) for i, (_n, o) in enumerate(columns) if o.get("drop") is not None)
            for _d, i in drops:  # then the columns a short answer can do without, in their order
                if need <= W:
                    break
                keep.remove(i)
                dropped.append(columns[i][0].replace("\n", " "))
                need = con.natural(make(0))
            con.con.width = max(W, con.natural(make(0)))
    con.print(make(room))
    if mids:
        prose(out, "(… in the session ids: each cut in the middle for the terminal's width; a wider terminal, a "
                   "pipe or --format json shows them whole)")
    if dropped:
        prose(out, f"(left out for the terminal's width: {', '.join(dropped)}; a wider terminal or a pipe shows them)")


def period_row_json(rep: Report, row: Row) -> dict:
    d = {"period": row.period, "report": rep.period, "group": row.group, "by": rep.by,
         "providers": sorted(row.providers), "sessions": len(row.sessions), **row.totals.to_json(),
         "models": models_json(row.models, rep.price_keys)}
    if rep.period == "weekly" and row.period != NO_INSTANT:
        d["week_start"] = week_start(row.period)
    return d


def session_row_json(rep: Report, row: Row, col: Collected) -> dict:
    prov, sid = session_id_of(row)
    info = col.sessions.get((prov, sid))
    t = row.totals
    client = None
    differs = None
    if info is not None and info.client is not None:
        cr = info.client
        client = {"cost_usd": cr.cost_usd, "by_model": cr.by_model, "path": cr.path, "offset": cr.offset,
                  "source": cr.source}
        ours = t.cost()
        if cr.cost_usd is not None and ours is not None:
            differs = abs(cr.cost_usd - ours) > max(0.005, 0.005 * cr.cost_usd)
    sub = row.subagents
    return {"provider": prov, "session_id": sid, "is_subagent": False, "parent_session_id": None,
            "project": info.project if info else None, "transcripts": info.lanes if info else None,
            "first_at": instant(t.first_ts), "last_at": instant(t.last_ts), **t.to_json(),
            "subagent_lanes_with_usage": len(row.lanes),
            "subagents": {"messages": sub.messages, "total_tokens": sub.total, "cost_usd": sub.cost() if sub.messages else 0.0},
            "client_recorded": client, "client_cost_differs": differs,
            "models": models_json(row.models, rep.price_keys)}


def text_periods(out: Out, rep: Report, col: Collected, breakdown: bool) -> None:
    label = {"daily": "day", "weekly": "week", "monthly": "month", "session": "session"}[rep.period]
    columns: list[tuple[str, dict]] = [(label, {})] + ([(rep.by, {"flex": "left" if rep.by == "project" else True, "max_width": 40})] if rep.by else [])
    for c in ("models", "resp.", "input", "output", "cache write", "cache read", "total", "cost"):
        columns.append((c, {"justify": "left", "flex": True, "max_width": 36} if c == "models" else {"justify": "right"}))
    rows: list[list[str]] = []
    bars: list[int | None] = []
    whole: list[str | None] = []
    if rep.period == "session":  # the id's first 13 characters; on a narrow terminal its start and end
        columns[0][1].update(whole=whole, floor=9)
    for r in rep.rows:
        period = r.period
        if rep.period == "session":
            whole.append(session_id_of(r)[1])
            period = session_id_of(r)[1][:13]
        cells = [esc(period)] + ([esc(r.group)] if rep.by else [])
        ms = ", ".join(esc(m) for m in sorted(r.models, key=lambda m: -(r.models[m].total or 0)))
        cells += [clip(ms, 36) if not breakdown else plural(len(r.models), "model"), taken(r.totals), num(r.totals.input),
                  num(r.totals.output),
                  num(r.totals.cache_write), num(r.totals.cache_read), total_cell(r.totals), money(r.totals)]
        rows.append(cells)
        bars.append(r.totals.total)
        if breakdown:
            for m, mt in sorted(r.models.items(), key=lambda kv: -(kv[1].total or 0)):
                rows.append([*(["", ""] if rep.by else [""]), "  " + clip(m, 34), taken(mt), num(mt.input),
                             num(mt.output), num(mt.cache_write), num(mt.cache_read), num(mt.total), money(mt)])
                bars.append(None)
                whole.append(None)
    tt = rep.totals
    rows.append(["total"] + ([""] if rep.by else []) + [plural(len(rep.models), "model"), taken(tt), num(tt.input),
                num(tt.output), num(tt.cache_write), num(tt.cache_read), total_cell(tt), money(tt)])
    bars.append(None)
    whole.append(None)
    print_table(out, columns, rows, bars)
    prose(out, "resp. = responses with usage, counted once; +N? = assistant messages that recorded none "
             "(their tokens and cost unknown); - = not recorded"
             + ("; +Nd = sessions the client deleted (history.jsonl keeps their prompts; their usage is gone): "
                "≥ a lower bound" if rep.totals.deleted else ""))


def text_sessions_extra(out: Out, rep: Report, col: Collected) -> None:
    for r in rep.rows:
        prov, sid = session_id_of(r)
        info = col.sessions.get((prov, sid))
        if info is None or info.client is None or info.client.cost_usd is None:
            continue
        ours = r.totals.cost()
        c = info.client.cost_usd
        src = info.client.source
        if ours is None:
            why = ("we have no price for " + ", ".join(esc(m) for m in sorted(r.totals.no_price))) if r.totals.no_price \
                else "its messages recorded no usage"
            prose(out, f"  {esc(sid)}: the client recorded ${c:,.4f} ({esc(src)}); {why}"
                     + (" (a client that knows no price records 0)" if c == 0 else ""))
        elif abs(c - ours) > max(0.005, 0.005 * c):
            prose(out, f"  {esc(sid)}: the client recorded ${c:,.4f} ({esc(src)}), the records price at ${ours:,.4f}: "
                     "the client also counts requests that write no assistant record (compaction summaries, "
                     "titles, side questions)")


def window_json(w: Window, price_keys) -> dict:
    return {"start": instant(w.start), "end": instant(w.end), "active": w.active,
            "gap_before_seconds": None if w.gap_before is None else round(w.gap_before, 3),
            "sessions": len(w.sessions), **w.totals.to_json(),
            "burn_rate": w.burn,
            "projection": None if w.projection is None else {**w.projection, "at": instant(w.projection["at"])},
            "models": models_json(w.models, price_keys)}


def _hm(ts: float, tz) -> str:
    return datetime.fromtimestamp(ts, tz).strftime("%Y-%m-%d %H:%M")


_WINDOW_DROPS = {"closes": 0, "models": 1, "cache write": 2, "cache read": 3}
"""What a narrow terminal leaves out of `usage blocks`, first to last: a window closes 5 hours after
it opens (its status says when an active one does), then the models, then the cache columns."""


def text_windows(out: Out, ws: list[Window], tz, now: float, limit: int | None = None) -> None:
    from ..usage.blocks import limit_status

    columns: list[tuple[str, dict]] = []
    names = ["opens", "closes", "status", "models", "resp.", "input", "output", "cache write", "cache read", "total"]
    names += (["of limit"] if limit is not None else []) + ["cost"]
    for c in names:
        columns.append((c, {"justify": "left" if c in ("opens", "closes", "status", "models") else "right"}))
        if c == "models":
            columns[-1][1].update(flex=True, max_width=30)
        if c in _WINDOW_DROPS:
            columns[-1][1]["drop"] = _WINDOW_DROPS[c]
    rows: list[list[str]] = []
    for w in ws:
        if w.active:
            left = int(w.end - now)
            status = f"ACTIVE, {left // 3600}h{(left % 3600) // 60:02d}m left"
        else:
            status = "closed"
        ms = ", ".join(esc(m) for m in w.models)
        cells = [_hm(w.start, tz), _hm(w.end, tz), status, clip(ms, 30), taken(w.totals), num(w.totals.input),
                 num(w.totals.output), num(w.totals.cache_write), num(w.totals.cache_read), num(w.totals.total)]
        if limit is not None:
            p = limit_status(w, limit)["used_percent"]
            cells.append("-" if p is None else f"{p:.1f}%")
        rows.append(cells + [money(w.totals)])
    print_table(out, columns, rows, [w.totals.total for w in ws])
    for w in ws:
        if w.active and w.burn:
            b, p = w.burn, w.projection
            cph = "no price" if b["cost_usd_per_hour"] is None else f"${b['cost_usd_per_hour']:,.2f}/h"
            pc = "" if p["cost_usd"] is None else f", ${p['cost_usd']:,.2f}"
            prose(out, f"active window: {b['tokens_per_minute']:,.0f} tokens/min, {cph} over the {b['over_seconds'] / 60:.0f} min "
                     f"since it opened; projected at {_hm(w.end, tz)}: {p['total_tokens']:,} tokens{pc}")
        if w.active and limit is not None:
            st = limit_status(w, limit)
            used = "-" if st["used_tokens"] is None else f"{st['used_tokens']:,}"
            left = "-" if st["remaining_tokens"] is None else f"{st['remaining_tokens']:,}"
            proj = ("" if st["projected_percent"] is None
                    else f"; projected {st['projected_tokens']:,} ({st['projected_percent']:.1f}%): {st['status'].upper()}")
            prose(out, f"token limit {limit:,}: {used} used, {left} left{proj}")
    if limit is not None:
        prose(out, f"of limit = the window's total against --token-limit {limit:,}")


def now_utc() -> float:
    return datetime.now(timezone.utc).timestamp()
