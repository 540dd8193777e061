"""`statusline`: one line for Claude Code's `statusLine` hook - this session's cost, today's, and
the current five-hour window's time left and burn rate (docs/usage.md "statusline").

Claude Code runs the hook command after each turn (and every `refreshInterval` seconds) with a
JSON object on stdin; the fields read here, as the 2.1.258 client builds them (its statusLine
setup prompt documents the same object): `session_id`, `transcript_path`, `model.display_name`,
`cost.total_cost_usd` (the client's own meter for the session) and, for subscribers,
`rate_limits.five_hour.{used_percentage, resets_at}` (the server's window: its reset instant in
epoch seconds). Everything else is read from the transcripts.

Warm, it answers without parsing a transcript: a cache (marshal, in the index directory) keeps,
per transcript, the stat it was read at, the offset read to and its responses merged by message
id, each already priced. A run stats every transcript of the data root, reads only what was
appended since (or a file that changed otherwise, again), and sums. The module imports nothing
heavy on that path (no click, msgspec, re or the price table); a transcript that has to be read
brings the hook client's usage reader in (providers.hook_usage).

Rules (the same as `usage`): a response is counted once, by its message id across every file;
of its copies the one with the largest total is kept (on clean data every copy is identical;
`usage` takes the per-field maximum, the same figure whenever one copy is complete). The cost of
a response whose model has no price, or that recorded no token count, is unknown: the sums that
include one are lower bounds (`>=`). Days are local days (`TZ`, else the system's). A window
opens at the first response after the previous one closed and lasts five hours; when the hook
gives the server's reset instant, the window is the one ending there. Transcripts not modified in
the last 48 hours are not read for today or for the window (their responses are older); when no
five-hour pause exists in that span the window's opening is not known and the line says `?`.
Subagent lanes are read for the sessions whose main transcript changed in that span.
"""

from __future__ import annotations

import marshal
import os
import sys
import time

CACHE_VERSION = 1
WINDOW = 5 * 3600
RECENT = 48 * 3600
"""Transcripts modified within this span are read for today and the window."""


# -- small helpers (no `re`: this is the warm path) -----------------------------------------

def _money(v: float | None, lower: bool) -> str:
    if v is None:
        return "$?"
    return ("≥" if lower else "") + f"${v:,.2f}"


def _cache_dir() -> str:
    env = os.environ
    if env.get("SESSIONSIFT_INDEX_DIR"):
        return env["SESSIONSIFT_INDEX_DIR"]
    base = env.get("XDG_CACHE_HOME") or os.path.join(env.get("HOME") or os.path.expanduser("~"), ".cache")
    return os.path.join(base, "sessionsift", "index")


def _cache_path(home: str) -> str:
    import zlib

    return os.path.join(_cache_dir(), f"statusline-v{CACHE_VERSION}-{zlib.crc32(os.fsencode(home)):08x}.marshal")


def _prices_stamp(prices_file: str | None) -> tuple:
    if prices_file is None:
        here = os.path.dirname(os.path.abspath(__file__))
        prices_file = os.path.join(here, "data", "prices.json")
    try:
        st = os.stat(prices_file)
        return (prices_file, st.st_size, st.st_mtime_ns)
    except OSError:
        return (prices_file, None, None)


# -- which files ------------------------------------------------------------------------------

def _lanes_of(session_dir: str) -> list[str]:
    """A session's subagent transcripts: `<session>/subagents/*.jsonl` and its workflows' agent
    files (the same files providers/claude/usage_scan.transcripts lists; tests hold them equal)."""
    sub = os.path.join(session_dir, "subagents")
    try:
        entries = sorted((e.name, e.path, e.is_file(), e.is_dir()) for e in os.scandir(sub))
    except OSError:
        return []
    out = [p for n, p, f, _d in entries if n.endswith(".jsonl") and f]
    for n, p, _f, d in entries:
        if n == "workflows" and d:
            try:
                runs = sorted((e.name, e.path) for e in os.scandir(p) if e.name.startswith("wf_") and e.is_dir())
            except OSError:
                runs = []
            for _rn, rp in runs:
                try:
                    out += [fp for _fn, fp in sorted((e.name, e.path) for e in os.scandir(rp)
                                                      if e.name.endswith(".jsonl") and e.name != "journal.jsonl"
                                                      and e.is_file())]
                except OSError:
                    continue
    return out


def _walk(home: str, since: float, want_session: str | None):
    """(path, session id, stat) of every main transcript, and of the subagent lanes of sessions
    whose main transcript changed since `since` (and of `want_session`)."""
    projects = os.path.join(home, "projects")
    out = []
    problems = []
    try:
        pdirs = [e.path for e in os.scandir(projects) if e.is_dir()]
    except OSError as exc:
        return out, [(projects, f"{type(exc).__name__}: {exc.strerror or exc}")]
    for pd in pdirs:
        try:
            ents = list(os.scandir(pd))
        except OSError as exc:
            problems.append((pd, f"{type(exc).__name__}: {exc.strerror or exc}"))
            continue
        for e in ents:
            n = e.name
            if not n.endswith(".jsonl"):
                continue
            try:
                st = e.stat()
            except OSError as exc:
                problems.append((e.path, f"{type(exc).__name__}: {exc.strerror or exc}"))
                continue
            sid = n[:-6]
            out.append((e.path, sid, st))
            if st.st_mtime >= since or sid == want_session:
                for lp in _lanes_of(os.path.join(pd, sid)):
                    try:
                        out.append((lp, sid, os.stat(lp)))
                    except OSError as exc:
                        problems.append((lp, f"{type(exc).__name__}: {exc.strerror or exc}"))
    return out, problems


# -- reading (the cold path: only for files that changed) -------------------------------------

LIGHT_BYTES = 1 << 20
"""Appended bytes up to this size are read by the light scan (no msgspec, orjson or stringzilla)."""


class _Quotes:
    """Prices per model as plain quotes (usage.rates), kept in the cache: a response of a model
    seen before is priced without loading the price table (prices.py, which a new model brings)."""

    def __init__(self, cached: dict, prices_file: str | None):
        self.q = dict(cached)
        self.prices_file = prices_file
        self.table = None

    def get(self, model: str) -> tuple | None:
        if model in self.q:
            return self.q[model]
        if self.table is None:
            from . import prices as P

            self.table = P.load(self.prices_file) if self.prices_file else P.load()
        p = self.table.lookup(model)
        self.q[model] = None if p is None else p.quote
        return self.q[model]

    def price(self, e) -> tuple[float | None, str | None]:
        from .rates import cost_of

        q = self.get(e.model) if e.model else None
        return cost_of(q, e.model, e.input, e.output, e.cache_read, e.cache_write, e.cache_write_1h, e.speed, e.geo)


def _read(path: str, start: int, pricer: _Quotes, size: int) -> tuple[int, list[tuple]]:
    """(offset read to, responses) of `path` from byte `start`: one tuple per message id (the copy
    with the largest total): (key, instant, total tokens or None, cost or None, the model without
    a price or None)."""
    from ..providers import hook_usage
    from .events import Ledger

    end, events = hook_usage()(path, start, size - start <= LIGHT_BYTES)
    led = Ledger()
    for e in events:
        led.add(e)
    out = []
    for e in led.events:
        c, missing = pricer.price(e)
        out.append((e.key, e.ts, e.total() if e.has_tokens() else None, c, missing))
    return end, out


def _merge(old: list[tuple], new: list[tuple]) -> list[tuple]:
    by = {r[0]: r for r in old}
    for r in new:
        o = by.get(r[0])
        if o is None or (r[2] or 0) > (o[2] or 0):
            by[r[0]] = r
    return list(by.values())


# -- the answer --------------------------------------------------------------------------------

class _Sum:
    __slots__ = ("cost", "tokens", "messages", "priced", "lower", "unpriced")

    def __init__(self) -> None:
        self.priced = 0
        self.cost = 0.0
        self.tokens = 0
        self.messages = 0
        self.lower = False
        self.unpriced: set[str] = set()

    def add(self, r: tuple) -> None:
        self.messages += 1
        if r[2] is not None:
            self.tokens += r[2]
        if r[3] is None:
            self.lower = True
            if r[4]:
                self.unpriced.add(r[4])
        else:
            self.cost += r[3]
            self.priced += 1

    def doc(self) -> dict:
        return {"cost_usd": None if self.messages and not self.priced else round(self.cost, 6),
                "cost_is_lower_bound": self.lower, "total_tokens": self.tokens, "messages": self.messages,
                "no_price": sorted(self.unpriced)}


def _day_start(now: float) -> float:
    t = time.localtime(now)
    return time.mktime((t.tm_year, t.tm_mon, t.tm_mday, 0, 0, 0, 0, 0, -1))


def _window(events: list[tuple], now: float, horizon: float, resets_at: float | None) -> dict:
    """The current window over `events` (merged responses with an instant, sorted by it)."""
    if resets_at is not None and now < resets_at <= now + WINDOW + 60:
        start, end, source = resets_at - WINDOW, resets_at, "server"
    else:
        timed = [r for r in events if r[1] is not None and r[1] >= horizon]
        # the chain of windows is known from the first response after a five-hour pause
        i0 = None
        if timed and timed[0][1] >= horizon + WINDOW:
            i0 = 0
        else:
            for i in range(1, len(timed)):
                if timed[i][1] - timed[i - 1][1] >= WINDOW:
                    i0 = i
                    break
        if not timed:
            return {"active": False, "known": True, "source": "transcripts"}
        if i0 is None:
            return {"active": None, "known": False, "source": "transcripts",
                    "why": "no five-hour pause in the last 48 hours: the window's opening is not known"}
        start = end = None
        for r in timed[i0:]:
            if end is None or r[1] >= end:
                start, end = r[1], r[1] + WINDOW
        source = "transcripts"
        if not (start <= now < end):
            return {"active": False, "known": True, "source": source}
    s = _Sum()
    for r in events:
        if r[1] is not None and start <= r[1] < end:
            s.add(r)
    elapsed = max(now - start, 60.0)
    d = s.doc()
    return {"active": True, "known": True, "source": source, "start": start, "end": end,
            "seconds_left": round(end - now, 1), **d,
            "burn_rate": {"tokens_per_minute": round(s.tokens / (elapsed / 60), 1),
                          "cost_usd_per_hour": None if d["cost_usd"] is None else round(s.cost / (elapsed / 3600), 4),
                          "over_seconds": round(elapsed, 1), "cost_is_lower_bound": s.lower}}


def answer(hook: dict, home: str | None = None, now: float | None = None, use_cache: bool = True,
           prices_file: str | None = None) -> dict:
    """The figures of the status line for `hook` (the statusLine JSON object). `home`: the Claude
    Code data root (default: the one `transcript_path` lies in, else $CLAUDE_CONFIG_DIR, else
    ~/.claude)."""
    now = time.time() if now is None else now
    sid = hook.get("session_id") if isinstance(hook.get("session_id"), str) else None
    tp = hook.get("transcript_path") if isinstance(hook.get("transcript_path"), str) else None
    if home is None:
        if tp and os.path.basename(os.path.dirname(os.path.dirname(tp))) == "projects":
            home = os.path.dirname(os.path.dirname(os.path.dirname(tp)))
        else:
            home = os.environ.get("CLAUDE_CONFIG_DIR") or os.path.join(os.path.expanduser("~"), ".claude")
    home = os.path.abspath(home)
    horizon = now - RECENT
    stamp = _prices_stamp(prices_file)
    cpath = _cache_path(home)
    cache: dict = {}
    quotes: dict = {}
    state = "off"
    if use_cache:
        state = "cold"
        try:
            with open(cpath, "rb") as f:
                c = marshal.load(f)
            if isinstance(c, dict) and c.get("v") == CACHE_VERSION and c.get("home") == home and \
                    tuple(c.get("prices") or ()) == stamp:
                cache = c.get("files") or {}
                quotes = c.get("quotes") or {}
                state = "warm"
        except (OSError, EOFError, ValueError, TypeError):
            pass
    files, problems = _walk(home, horizon, sid)
    pricer = None
    new_cache: dict = {}
    reads = 0
    per_file: dict[str, list[tuple]] = {}
    session_files: set[str] = set()
    for path, fsid, st in files:
        if fsid == sid:
            session_files.add(path)
        old = cache.get(path)
        recent = st.st_mtime >= horizon or fsid == sid
        key = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
        if old is not None and tuple(old[:4]) == key and (old[5] is not None or not recent):
            new_cache[path] = old
            if old[5] is not None:
                per_file[path] = old[5]
            continue
        if not recent:
            new_cache[path] = (*key, 0, None)
            continue
        if pricer is None:
            pricer = _Quotes(quotes, prices_file)
        try:
            if old is not None and old[5] is not None and old[0] == st.st_dev and old[1] == st.st_ino \
                    and st.st_size >= old[2] and old[4] <= st.st_size:
                end, evs = _read(path, old[4], pricer, st.st_size)
                evs = _merge(old[5], evs)
            else:
                end, evs = _read(path, 0, pricer, st.st_size)
        except (OSError, ValueError) as exc:
            problems.append((path, f"{type(exc).__name__}: {exc}"))
            continue
        reads += 1
        new_cache[path] = (*key, end, evs)
        per_file[path] = evs
    # every response once (by message id), the copy with the largest total
    merged: dict = {}
    owner: dict = {}
    for path, evs in per_file.items():
        for r in evs:
            o = merged.get(r[0])
            if o is None or (r[2] or 0) > (o[2] or 0):
                merged[r[0]] = r
            if path in session_files:
                owner[r[0]] = True
    events = sorted(merged.values(), key=lambda r: (r[1] is None, r[1] or 0.0))
    sess, today = _Sum(), _Sum()
    d0 = _day_start(now)
    d1 = _day_start(d0 + 36 * 3600)
    for r in events:
        if r[0] in owner:
            sess.add(r)
        if r[1] is not None and d0 <= r[1] < d1:
            today.add(r)
    rl = hook.get("rate_limits")
    five = rl.get("five_hour") if isinstance(rl, dict) else None
    resets = five.get("resets_at") if isinstance(five, dict) else None
    resets = float(resets) if isinstance(resets, (int, float)) and not isinstance(resets, bool) else None
    block = _window(events, now, horizon, resets)
    if isinstance(five, dict) and isinstance(five.get("used_percentage"), (int, float)):
        block["server_used_percent"] = five["used_percentage"]
    cost = hook.get("cost")
    client = cost.get("total_cost_usd") if isinstance(cost, dict) else None
    client = float(client) if isinstance(client, (int, float)) and not isinstance(client, bool) else None
    if use_cache and (reads or set(new_cache) != set(cache)):
        try:
            os.makedirs(_cache_dir(), mode=0o700, exist_ok=True)
            tmp = f"{cpath}.{os.getpid()}.tmp"
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "wb") as f:
                marshal.dump({"v": CACHE_VERSION, "home": home, "prices": stamp, "files": new_cache,
                              "quotes": pricer.q if pricer is not None else quotes}, f)
            os.replace(tmp, cpath)
        except OSError as exc:
            problems.append((cpath, f"cache not written: {type(exc).__name__}: {exc.strerror or exc}"))
    model = hook.get("model")
    sdoc = sess.doc()
    if not session_files:  # no transcript of this session on disk: its cost is not known here
        sdoc.update(cost_usd=None, total_tokens=None, messages=None)
    return {"session_id": sid, "claude_home": home, "model": model.get("display_name") if isinstance(model, dict) else None,
            "session": {**sdoc, "client_cost_usd": client, "transcripts": len(session_files)}, "today": {"day": time.strftime("%Y-%m-%d", time.localtime(now)),
                                                                        **today.doc()},
            "block": block, "cache": state, "files": len(files), "files_read": reads,
            "problems": [{"path": p, "why": w} for p, w in problems]}


def line(a: dict) -> str:
    """The one line Claude Code shows (not escaped: the CLI's rendering path escapes it)."""
    parts = []
    if a.get("model"):
        parts.append(str(a["model"]))
    s = a["session"]
    txt = _money(s["cost_usd"], s["cost_is_lower_bound"]) + " session"
    c = s.get("client_cost_usd")
    if c is not None and s["cost_usd"] is not None and abs(c - s["cost_usd"]) > max(0.005, 0.005 * c):
        txt += f" (client ${c:,.2f})"
    parts.append(txt)
    t = a["today"]
    parts.append(_money(t["cost_usd"], t["cost_is_lower_bound"]) + " today")
    b = a["block"]
    if not b.get("known"):
        parts.append("block ?")
    elif not b.get("active"):
        parts.append("no active block")
    else:
        left = int(b["seconds_left"])
        txt = f"block {_money(b['cost_usd'], b['cost_is_lower_bound'])}, {left // 3600}h{(left % 3600) // 60:02d}m left"
        br = b["burn_rate"]
        if br["cost_usd_per_hour"] is not None:
            txt += f", {'≥' if br['cost_is_lower_bound'] else ''}${br['cost_usd_per_hour']:,.2f}/h"
        txt += f" ({br['tokens_per_minute']:,.0f} tok/min)"
        parts.append(txt)
    if a["problems"]:
        parts.append(f"{len(a['problems'])} unreadable")
    return " · ".join(parts)
