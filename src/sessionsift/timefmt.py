"""Instants: every instant is given in UTC and in local time."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

from .errors import UsageError


def parse_ts(ts: str | None) -> datetime | None:
    if not ts or not isinstance(ts, str):
        return None
    try:
        s = ts.strip()
        if s.endswith("Z"):
            s = s[:-1] + "+00:00"
        d = datetime.fromisoformat(s)
        if d.tzinfo is None:
            d = d.replace(tzinfo=timezone.utc)
        return d
    except ValueError:
        return None


def instant(ts: str | datetime | float | None) -> dict | None:
    """{"utc": ISO-8601 Z, "local": ISO-8601 with offset}; None when unknown."""
    if ts is None:
        return None
    if isinstance(ts, (int, float)):
        d = datetime.fromtimestamp(ts, tz=timezone.utc)
    elif isinstance(ts, datetime):
        d = ts
    else:
        d = parse_ts(ts)
        if d is None:
            return None
    utc = d.astimezone(timezone.utc)
    return {
        "utc": utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z",
        "local": d.astimezone().isoformat(timespec="seconds"),
    }


def short_local(ts: str | None) -> str:
    d = parse_ts(ts)
    if d is None:
        return "-"
    return d.astimezone().strftime("%Y-%m-%d %H:%M")


_DUR = re.compile(r"^(\d+(?:\.\d+)?)\s*(s|m|h|d|w)$")


def parse_when(s: str, now: datetime | None = None) -> datetime:
    """A duration ago (`90s`, `2h`, `3d`) or an ISO instant (naive = local time)."""
    now = now or datetime.now(timezone.utc)
    m = _DUR.match(s.strip())
    if m:
        n = float(m.group(1))
        unit = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}[m.group(2)]
        return now - timedelta(seconds=n * unit)
    try:
        d = datetime.fromisoformat(s.strip().replace("Z", "+00:00"))
    except ValueError:
        raise UsageError(f"cannot read {s!r} as a duration (e.g. 2h, 30m, 3d) or an ISO instant")
    if d.tzinfo is None:
        d = d.astimezone()
    return d


def parse_bound(s: str, *, end: bool = False, now: datetime | None = None) -> datetime:
    """A window bound as every command's ``--since``/``--until`` reads it: a duration ago
    (``2h``, ``3d``), a local date (``2026-11-30`` or ``20261130``: its first instant, or with
    ``end`` its last, so ``--until 2026-11-30`` takes the whole day), or an ISO instant (naive =
    local time)."""
    t = s.strip()
    day = None
    if len(t) == 8 and t.isdigit():
        day = t[:4] + "-" + t[4:6] + "-" + t[6:]
    elif len(t) == 10 and t[4:5] == "-" and t[7:8] == "-":
        day = t
    if day is not None:
        try:
            d = datetime.fromisoformat(day).astimezone()
        except ValueError:
            raise UsageError(f"cannot read {s!r} as a date")
        return d + timedelta(days=1, microseconds=-1) if end else d
    return parse_when(t, now)
