"""Five-hour usage windows ("blocks"), as a Claude subscription meters them.

Definition (docs/usage.md): a window OPENS at the instant of the first response after the
previous window closed and CLOSES five hours later; every response in [open, open + 5 h) belongs
to it. What is on disk does not record the server's windows (the reset time reaches the client
as an HTTP header it does not write down); the client's own rate-limit simulator sets a
five-hour claim's `resetsAt` to now + 18000 s, i.e. no rounding, and that is the rule used here.
ccusage instead floors the opening instant to the hour; `align="hour"` reproduces that (for a
side-by-side comparison).

The active window (now inside [open, close)) gets a burn rate over the time elapsed since it
opened (idle minutes included: the clock runs whether or not the agent works) and a projection
of its totals at the close.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Iterable

from .events import Event
from .report import Pricer, Totals

WINDOW_SECS = 5 * 3600


@dataclass
class Window:
    start: float
    end: float
    totals: Totals = field(default_factory=Totals)
    models: dict[str, Totals] = field(default_factory=dict)
    sessions: set[str] = field(default_factory=set)
    gap_before: float | None = None
    """Seconds between the previous window's close and this one's opening (None: the first)."""
    active: bool = False
    burn: dict | None = None
    projection: dict | None = None


def windows(events: Iterable[Event], pricer: Pricer | None = None, length: float = WINDOW_SECS,
            align: str | None = None, now: float | None = None) -> list[Window]:
    pricer = pricer or Pricer()
    evs = sorted((e for e in events if e.ts is not None), key=lambda e: e.ts)
    out: list[Window] = []
    cur: Window | None = None
    for e in evs:
        if cur is None or e.ts >= cur.end:
            start = e.ts - (e.ts % 3600) if align == "hour" else e.ts
            w = Window(start, start + length)
            if cur is not None:
                w.gap_before = max(0.0, start - cur.end)
            out.append(w)
            cur = w
        c, missing = pricer.price(e)
        cur.totals.add(e, c, missing)
        cur.models.setdefault(e.model or "(unknown model)", Totals()).add(e, c, missing)
        cur.sessions.add(e.session_id)
    now = time.time() if now is None else now
    if out and out[-1].start <= now < out[-1].end:
        w = out[-1]
        w.active = True
        elapsed = max(now - w.start, 60.0)
        tot = w.totals.total or 0
        per_min = tot / (elapsed / 60)
        cost = w.totals.cost()
        cost_h = None if cost is None else cost / (elapsed / 3600)
        left = w.end - now
        w.burn = {"tokens_per_minute": round(per_min, 1), "cost_usd_per_hour": None if cost_h is None else round(cost_h, 4),
                  "over_seconds": round(elapsed, 1), "cost_is_lower_bound": not w.totals.cost_complete}
        w.projection = {"at": w.end, "seconds_left": round(left, 1), "total_tokens": int(tot + per_min * left / 60),
                        "cost_usd": None if cost_h is None else round(cost + cost_h * left / 3600, 4)}
    return out


WARNING_SHARE = 0.8
"""`--token-limit`: a window whose projected total passes this share of the limit is a warning
(ccusage's threshold)."""


def resolve_limit(spec: str | None, ws: list[Window]) -> int | None:
    """`--token-limit N` or `max` (the largest total of a closed window, ccusage's rule); None when
    no limit was asked. Raises ValueError for anything else, and for `max` with no closed window
    whose total is known (a maximum of nothing is not 0)."""
    if spec is None:
        return None
    s = spec.strip().lower()
    if s == "max":
        closed = [w.totals.total for w in ws if not w.active and w.totals.total is not None]
        if not closed:
            raise ValueError("--token-limit max: no closed window to take the largest total from")
        return max(closed)
    try:
        n = int(s.replace(",", "").replace("_", ""))
    except ValueError:
        raise ValueError(f"--token-limit {spec!r}: a number of tokens (e.g. 500000) or max") from None
    if n <= 0:
        raise ValueError(f"--token-limit {spec!r}: a number of tokens above 0")
    return n


def limit_status(w: Window, limit: int) -> dict:
    """A window against a token limit: its share used, what is left, and (the active window) its
    projected total at the close against the limit: ok, warning (over WARNING_SHARE) or exceeds.
    A total nobody recorded gives None figures, never 0."""
    used = w.totals.total
    projected = w.projection["total_tokens"] if w.projection is not None else used
    status = None
    if projected is not None:
        status = "exceeds" if projected > limit else "warning" if projected > limit * WARNING_SHARE else "ok"
    return {"limit": limit, "used_tokens": used,
            "used_percent": None if used is None else round(used / limit * 100, 1),
            "remaining_tokens": None if used is None else max(0, limit - used),
            "projected_tokens": projected,
            "projected_percent": None if projected is None else round(projected / limit * 100, 1),
            "status": status}


def place_unpaid(ws: list[Window], unpaid: Iterable, keep=None) -> int:
    """Count each assistant message that recorded no usage (`usage/collect.py` Unpaid: provider,
    session, instant, model) where `usage daily` and `session` count it: in the window its instant
    falls in (its tokens and cost unknown there, never a silent 0), for the messages `keep(m)`
    accepts. Returns how many fell in no window (an instant before every window, after the last
    one's close, or unknown): the caller's totals hold those alone."""
    outside = 0
    for m in unpaid:
        if keep is not None and not keep(m):
            continue
        w = next((w for w in ws if m.ts is not None and w.start <= m.ts < w.end), None)
        if w is None:
            outside += 1
            continue
        w.totals.without_usage += 1
        w.models.setdefault(m.model or "(unknown model)", Totals()).without_usage += 1
        w.sessions.add(m.session_id)
    return outside

