"""Daily / weekly / monthly / per-session reports over deduplicated usage events, with cost.

Periods are days in one named time zone (`--timezone`, default the machine's own), ISO weeks
(Monday first) and calendar months in that zone. A figure is a sum over the events that
recorded that field: a field no event recorded is None (unknown), never 0; every row says how
many messages it was taken over and how many assistant messages in it carried no usage.
Cost: per event from the bundled table (prices.py); an event whose model has no price makes
the row's cost a lower bound (`cost_complete` false, `no_price` names the models), and so does
an event that recorded no token count at all (its cost is unknown, not $0:
`messages_without_token_counts`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone, tzinfo
from pathlib import Path
from typing import Iterable

from ..errors import UsageError
from . import prices as P
from .collect import Collected
from .events import TOKEN_FIELDS, Event
from .rates import cost_of as _cost_of

Period = str  # "daily" | "weekly" | "monthly" | "session"
GROUPS = ("project", "provider", "model")
NO_INSTANT = "(no instant)"


# -- time zones -----------------------------------------------------------------------------

@dataclass(frozen=True)
class Zone:
    tz: tzinfo
    name: str
    """An IANA name where known (e.g. Europe/Berlin), else the local abbreviation."""
    source: str
    """--timezone, TZ, /etc/localtime, or system."""

    def describe(self, at: float | None = None) -> str:
        d = datetime.fromtimestamp(at, self.tz) if at is not None else datetime.now(self.tz)
        off = d.strftime("%z")
        return f"{self.name} (UTC{off[:3]}:{off[3:]})" if off else self.name


def zone(name: str | None = None) -> Zone:
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    if name:
        if name.upper() in ("UTC", "Z"):
            return Zone(timezone.utc, "UTC", "--timezone")
        try:
            return Zone(ZoneInfo(name), name, "--timezone")
        except (ZoneInfoNotFoundError, ValueError):
            raise UsageError(f"--timezone {name!r}: not a time zone name (e.g. UTC, Europe/Berlin)")
    env = os.environ.get("TZ")
    if env:
        try:
            return Zone(ZoneInfo(env.lstrip(":")), env.lstrip(":"), "TZ")
        except (ZoneInfoNotFoundError, ValueError):
            pass
    try:
        link = os.readlink("/etc/localtime")
        if "zoneinfo/" in link:
            n = link.split("zoneinfo/", 1)[1]
            return Zone(ZoneInfo(n), n, "/etc/localtime")
    except (OSError, ZoneInfoNotFoundError, ValueError):
        pass
    local = datetime.now().astimezone().tzinfo or timezone.utc
    return Zone(local, datetime.now().astimezone().tzname() or "local", "system")


def parse_day(s: str, z: Zone, now: datetime | None = None) -> date:
    """YYYY-MM-DD, YYYYMMDD, or a span back from today (7d, 2w)."""
    s = s.strip()
    try:
        if len(s) == 8 and s.isdigit():
            return date(int(s[:4]), int(s[4:6]), int(s[6:]))
        return date.fromisoformat(s)
    except ValueError:
        pass
    if s[:-1].isdigit() and s[-1:] in ("d", "w") and int(s[:-1]) > 0:
        n = int(s[:-1]) * (7 if s[-1] == "w" else 1)
        today = (now or datetime.now(z.tz)).astimezone(z.tz).date()
        return today - timedelta(days=n - 1)  # 7d: the last seven days, today included
    raise UsageError(f"cannot read {s!r} as a day (YYYY-MM-DD, YYYYMMDD) or a span back (7d, 2w)")


def period_key(ts: float | None, period: Period, z: Zone) -> str:
    if ts is None:
        return NO_INSTANT
    d = datetime.fromtimestamp(ts, z.tz).date()
    if period == "daily":
        return d.isoformat()
    if period == "weekly":
        iso = d.isocalendar()
        return f"{iso.year}-W{iso.week:02d}"
    if period == "monthly":
        return f"{d.year}-{d.month:02d}"
    raise ValueError(period)


def week_start(key: str) -> str | None:
    try:
        y, w = key.split("-W")
        return date.fromisocalendar(int(y), int(w), 1).isoformat()
    except ValueError:
        return None


# -- sums -----------------------------------------------------------------------------------

@dataclass
class Totals:
    messages: int = 0
    """Deduplicated responses with usage."""
    without_usage: int = 0
    """Assistant messages that recorded no usage."""
    input: int | None = None
    output: int | None = None
    cache_read: int | None = None
    cache_write: int | None = None
    cache_write_1h: int | None = None
    reasoning: int | None = None
    cost_usd: float = 0.0
    priced: int = 0
    """Messages whose cost is known (priced, or every count recorded and zero)."""
    no_tokens: int = 0
    """Messages that recorded no token count at all: their cost is unknown (not priced)."""
    no_price: set[str] = field(default_factory=set)
    client_cost_usd: float | None = None
    client_cost_messages: int = 0
    ours_where_client: float = 0.0
    """Our cost over the messages that carry the client's own cost AND have a price with us."""
    client_where_ours: float = 0.0
    """The client's cost over those same messages (like with like)."""
    client_unpriced_by_us: int = 0
    """Messages with a client cost that we have no price for."""
    first_ts: float | None = None
    last_ts: float | None = None
    copies: int = 0
    deleted: set[str] = field(default_factory=set)
    """Sessions whose prompts fall here but whose transcripts the client deleted (Claude Code's
    history.jsonl): their usage is not on disk, so every figure here is a lower bound."""

    def add(self, e: Event, c: float | None, missing: str | None) -> None:
        self.messages += 1
        self.copies += e.copies
        v = e.input
        if v is not None:
            self.input = v if self.input is None else self.input + v
        v = e.output
        if v is not None:
            self.output = v if self.output is None else self.output + v
        v = e.cache_read
        if v is not None:
            self.cache_read = v if self.cache_read is None else self.cache_read + v
        v = e.cache_write
        if v is not None:
            self.cache_write = v if self.cache_write is None else self.cache_write + v
        v = e.cache_write_1h
        if v is not None:
            self.cache_write_1h = v if self.cache_write_1h is None else self.cache_write_1h + v
        v = e.reasoning
        if v is not None:
            self.reasoning = v if self.reasoning is None else self.reasoning + v
        if c is not None:
            self.cost_usd += c
            self.priced += 1
        elif missing is not None:
            self.no_price.add(missing)
        if not e.has_tokens():
            self.no_tokens += 1
        if e.client_cost is not None:
            self.client_cost_usd = (self.client_cost_usd or 0.0) + e.client_cost
            self.client_cost_messages += 1
            if c is None:
                self.client_unpriced_by_us += 1
            else:
                self.ours_where_client += c
                self.client_where_ours += e.client_cost
        ts = e.ts
        if ts is not None:
            if self.first_ts is None or ts < self.first_ts:
                self.first_ts = ts
            if self.last_ts is None or ts > self.last_ts:
                self.last_ts = ts

    def merge(self, b: "Totals") -> "Totals":
        """Add another Totals into this one (returns self)."""
        self.messages += b.messages
        self.without_usage += b.without_usage
        self.copies += b.copies
        for f in TOKEN_FIELDS:
            v = getattr(b, f)
            if v is not None:
                cur = getattr(self, f)
                setattr(self, f, v if cur is None else cur + v)
        self.cost_usd += b.cost_usd
        self.priced += b.priced
        self.no_tokens += b.no_tokens
        self.no_price |= b.no_price
        if b.client_cost_usd is not None:
            self.client_cost_usd = (self.client_cost_usd or 0.0) + b.client_cost_usd
        self.client_cost_messages += b.client_cost_messages
        self.ours_where_client += b.ours_where_client
        self.client_where_ours += b.client_where_ours
        self.client_unpriced_by_us += b.client_unpriced_by_us
        self.deleted |= b.deleted
        for ts in (b.first_ts, b.last_ts):
            if ts is not None:
                self.first_ts = ts if self.first_ts is None else min(self.first_ts, ts)
                self.last_ts = ts if self.last_ts is None else max(self.last_ts, ts)
        return self

    @property
    def total(self) -> int | None:
        vals = [self.input, self.output, self.cache_read, self.cache_write]
        return None if all(v is None for v in vals) else sum(v or 0 for v in vals)

    @property
    def cost_complete(self) -> bool:
        """Every message of the row priced, none without usage (whose cost is unknown) and no
        session of it deleted by its client."""
        return self.priced == self.messages and self.without_usage == 0 and not self.deleted

    def cost(self) -> float | None:
        """The cost, or None when no message of the row could be priced (a partial sum is
        returned with cost_complete False: a lower bound)."""
        if self.priced == 0 and (self.messages or self.without_usage or self.deleted):
            return None
        return round(self.cost_usd, 6)

    def to_json(self) -> dict:
        return {
            "messages": self.messages, "messages_without_usage": self.without_usage,
            "messages_without_token_counts": self.no_tokens, "records_merged": self.copies,
            "input_tokens": self.input, "output_tokens": self.output, "cache_write_tokens": self.cache_write,
            "cache_write_1h_tokens": self.cache_write_1h, "cache_read_tokens": self.cache_read,
            "reasoning_tokens": self.reasoning, "total_tokens": self.total,
            "cost_usd": self.cost(), "cost_complete": self.cost_complete, "cost_is_lower_bound": not self.cost_complete,
            "no_price": sorted(self.no_price),
            "client_cost_usd": None if self.client_cost_usd is None else round(self.client_cost_usd, 6),
            "client_cost_messages": self.client_cost_messages,
            "sessions_deleted_by_client": len(self.deleted),
            "tokens_are_lower_bound": bool(self.deleted or self.without_usage or self.no_tokens),
        }


class Pricer:
    """Event cost, memoised per model."""

    def __init__(self, table: P.PriceTable | None = None):
        self.table = table or P.load()
        self.used: dict[str, str | None] = {}
        self.quotes: dict[str | None, tuple | None] = {}
        """Per model: its quote in the table (None: no price), looked up once (prices.cost_of
        looked it up again for each of a warm `usage daily`'s 28,827 events)."""

    def price(self, e: Event) -> tuple[float | None, str | None]:
        """(cost, missing model name) of one event (prices.cost_of, with the model's quote looked up
        once); (None, None) when it recorded no token count (its cost is unknown: an unknown count
        is not 0)."""
        m = e.model
        if m is not None and m not in self.used and e.has_tokens() and e.total():
            p = self.table.lookup(m)
            self.used[m] = p.key if p else None
        try:
            q = self.quotes[m]
        except KeyError:
            p = self.table.lookup(m) if m else None
            q = self.quotes[m] = None if p is None else p.quote
        return _cost_of(q, m, e.input, e.output, e.cache_read, e.cache_write, e.cache_write_1h, e.speed, e.geo)


@dataclass
class Row:
    period: str
    group: str | None
    totals: Totals = field(default_factory=Totals)
    models: dict[str, Totals] = field(default_factory=dict)
    providers: set[str] = field(default_factory=set)
    sessions: set[tuple[str, str]] = field(default_factory=set)
    subagents: Totals = field(default_factory=Totals)
    """The share written in subagent lanes (already inside `totals`)."""
    lanes: set[str] = field(default_factory=set)


@dataclass
class Report:
    period: Period
    by: str | None
    zone: Zone
    rows: list[Row]
    totals: Totals
    models: dict[str, Totals]
    price_keys: dict[str, str | None]
    since: date | None
    until: date | None
    excluded_by_dates: int = 0


def _group(e: Event, by: str | None) -> str | None:
    if by == "project":
        return e.project or "(unknown project)"
    if by == "provider":
        return e.provider
    if by == "model":
        return e.model or "(unknown model)"
    return None


def in_range(ts: float | None, z: Zone, since: date | None, until: date | None) -> bool:
    if since is None and until is None:
        return True
    if ts is None:
        return False
    d = datetime.fromtimestamp(ts, z.tz).date()
    return (since is None or d >= since) and (until is None or d <= until)


def build(col: Collected, period: Period, z: Zone, by: str | None = None, since: date | None = None,
          until: date | None = None, pricer: Pricer | None = None, providers: Iterable[str] | None = None) -> Report:
    if by is not None and by not in GROUPS:
        raise UsageError(f"--by {by!r}: expected one of {', '.join(GROUPS)}")
    pricer = pricer or Pricer()
    wanted = set(providers) if providers else None
    rows: dict[tuple[str, str | None], Row] = {}
    total = Totals()
    models: dict[str, Totals] = {}
    excluded = 0
    for e in col.events:
        if wanted is not None and e.provider not in wanted:
            continue
        if not in_range(e.ts, z, since, until):
            excluded += 1
            continue
        key = e.session_id if period == "session" else period_key(e.ts, period, z)
        if period == "session":
            key = f"{e.provider}\x00{e.session_id}"
        g = _group(e, by) if period != "session" else None
        row = rows.get((key, g))
        if row is None:
            row = rows[(key, g)] = Row(key, g)
        c, missing = pricer.price(e)
        mname = e.model or "(unknown model)"
        mt = row.models.get(mname)
        if mt is None:
            mt = row.models[mname] = Totals()
        mt.add(e, c, missing)
        row.providers.add(e.provider)
        row.sessions.add((e.provider, e.session_id))
        if e.lane != "main":
            row.subagents.add(e, c, missing)
            row.lanes.add(e.lane)
    # an assistant message that recorded no usage is counted in its own row: its period, and the
    # project / provider / model of its own record (never another group's row of that period)
    for u in col.without_usage:
        if wanted is not None and u.provider not in wanted:
            continue
        if not in_range(u.ts, z, since, until):
            continue
        if period == "session":
            key, g = f"{u.provider}\x00{u.session_id}", None
        else:
            key = period_key(u.ts, period, z)
            g = (None if by is None else (u.project or "(unknown project)") if by == "project"
                 else u.provider if by == "provider" else (u.model or "(unknown model)"))
        row = rows.get((key, g))
        if row is None:
            row = rows[(key, g)] = Row(key, g)
        mname = u.model or "(unknown model)"
        mt = row.models.get(mname)
        if mt is None:
            mt = row.models[mname] = Totals()
        mt.without_usage += 1
        row.providers.add(u.provider)
        row.sessions.add((u.provider, u.session_id))
    # a session whose transcript the client deleted: its prompts' periods (and project) are known,
    # its usage is not -- those rows (made if no response is left in them) are lower bounds
    for d in getattr(col, "deleted", ()):
        if wanted is not None and d.provider not in wanted:
            continue
        for ts in d.prompts:
            if not in_range(ts, z, since, until):
                continue
            if period == "session":
                key, g = f"{d.provider}\x00{d.session_id}", None
            else:
                key = period_key(ts, period, z)
                g = (None if by is None else (d.project or "(unknown project)") if by == "project"
                     else d.provider if by == "provider" else "(unknown model)")
            row = rows.get((key, g))
            if row is None:
                row = rows[(key, g)] = Row(key, g)
            row.totals.deleted.add(d.session_id)
            row.providers.add(d.provider)
    # a row's figures are the sum of its models', the report's the sum of its rows'
    for row in rows.values():
        for mname, mt in row.models.items():
            row.totals.merge(mt)
            models.setdefault(mname, Totals()).merge(mt)
        total.merge(row.totals)
    # ties (sessions with no dated response) in key order: the same order however the events were read
    ordered = sorted(rows.values(), key=lambda r: (r.period == NO_INSTANT, _sort_key(r, period), r.group or "", r.period))
    return Report(period, by, z, ordered, total, models, dict(pricer.used), since, until, excluded)


def reverse_rows(rep: Report) -> Report:
    """Newest first (`--order desc`); the `(no instant)` row stays last."""
    timed = [r for r in rep.rows if r.period != NO_INSTANT]
    rep.rows = timed[::-1] + [r for r in rep.rows if r.period == NO_INSTANT]
    return rep


def _sort_key(r: Row, period: Period):
    if period == "session":
        return r.totals.first_ts if r.totals.first_ts is not None else float("inf")
    return r.period


def session_id_of(row: Row) -> tuple[str, str]:
    prov, _, sid = row.period.partition("\x00")
    return prov, sid


def home_display(p: str | None) -> str | None:
    return None if p is None else str(Path(p))
