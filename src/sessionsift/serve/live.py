"""The live page: every session's state with its evidence (`sessionsift.live.status.status`: one
verdict per session, from its provider's live-state capability; a provider without one answers
unknown with its reason), and where it stands (the listing's prompts, last prompt and last
activity), updated on its own: the store's watcher sees a transcript grow, the page's event
stream (`/live/events`, server-sent events) sends every row again as JSON, and app.js writes them
into the table with textContent."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .layout import e, page, session_href, t

if TYPE_CHECKING:
    from ..live.status import SessionVerdict

ORDER = {"running": 0, "waiting": 1, "waiting-children": 2, "idle-background-open": 3}
SETTLED = ("idle-eot", "stale-dead", "unknown")
"""Verdicts of a session nothing is happening in (or nothing can say): of these the page shows the
RECENT most recent; every other verdict is always shown. The counts cover every session."""
RECENT = 100


def row_id(provider: str, sid: str) -> str:
    return "live-" + hashlib.sha1(f"{provider}\0{sid}".encode("utf-8", "surrogateescape")).hexdigest()[:16]


@dataclass
class LiveAnswer:
    """What the page shows of one status answer (`sessionsift.live.status.status`): the verdicts
    shown (every one not settled, in the answer's order, then the RECENT most recently active
    settled ones), the count of every verdict, and how many settled ones are not shown. Made in
    the server's live worker (serve/worker.py) when it has one: each unit is sent without its
    provider and native session (the page reads its name, display and ref)."""

    shown: list[SessionVerdict]
    counts: dict[str, int]
    not_shown: int


def answer(sel, last: dict[tuple[str, str], float], now: float | None = None) -> LiveAnswer:
    """The status of every session of `sel`, cut to what the page shows: `last` is each listed
    session's last activity as a sort key (a session not in it: the lowest)."""
    from ..live.status import SessionVerdict, status
    from ..live.world import Unit

    res = status(sel, now)
    low = _ts(None)
    settled = sorted((v for v in res.verdicts if v.state.verdict in SETTLED),
                     key=lambda v: last.get((v.unit.name, v.unit.ref.session_id), low), reverse=True)
    shown = [v for v in res.verdicts if v.state.verdict not in SETTLED] + settled[:RECENT]
    slim = [SessionVerdict(Unit(v.unit.name, v.unit.display, None, v.unit.ref, None, v.unit.child), v.state)
            for v in shown]
    return LiveAnswer(slim, res.counts, len(settled) - len(settled[:RECENT]))


def state(store) -> dict:
    """Every row of the page as plain data (what the event stream sends)."""
    from .worker import KEEP

    snap = store.snapshot()

    def make():
        last = {k: _ts(r.last_at) for k, r in snap.by_key.items()}
        ans = store.compute(KEEP, answer, last)
        rows = []
        for v in ans.shown:
            u, st = v.unit, v.state
            lr = snap.by_key.get((u.name, u.ref.session_id))
            sm = lr.summary if lr is not None else None
            rows.append({
                "id": row_id(u.name, u.ref.session_id), "provider": u.name, "display": u.display,
                "session_id": u.ref.session_id, "href": session_href(u.name, u.ref.session_id),
                "verdict": st.verdict, "reason": st.reason,
                "evidence": [{"surface": x.get("surface"), "value": x.get("value"), "path": x.get("path")}
                             for x in st.evidence],
                "invisible": list(st.invisible),
                "prompts": None if sm is None else sm.prompts,
                "last_prompt": None if sm is None else (sm.last_prompt or sm.first_prompt),
                "last_at": None if lr is None else lr.last_at,
            })
        rows.sort(key=lambda r: (ORDER.get(r["verdict"], len(ORDER)), -_ts(r["last_at"])))
        return {"generation": snap.generation, "counts": ans.counts, "rows": rows,
                "not_shown": ans.not_shown, "more": _more(ans.not_shown), "changed": list(store.changed[:20])}

    return store.memo(("live",), make)


def _ts(s: str | None) -> float:
    from ..listing import sort_key

    v = sort_key(s)
    return v if v != float("-inf") else -1e18


def event(store) -> str:
    """One server-sent event carrying the whole state (JSON escapes every newline)."""
    return store.memo(("live-event",),
                      lambda: f"event: state\ndata: {json.dumps(state(store), ensure_ascii=True)}\n\n")


def _evidence(r: dict) -> str:
    ev = "".join(f"<li><b>{t(x['surface'])}</b>: {t(x['value'])}</li>" for x in r["evidence"])
    inv = "".join(f"<li>invisible: {t(x)}</li>" for x in r["invisible"])
    return f'<details class="evidence"><summary>evidence ({len(r["evidence"])})</summary><ul>{ev}{inv}</ul></details>'


def _more(n: int) -> str:
    return (f"every session not idle, stale or unknown, and the {RECENT} most recent of those; {n} more "
            "(idle, stale or unknown) not shown: the counts above cover them") if n else ""


def render(store) -> str:
    s = state(store)
    counts = " · ".join(f"{e(k)} {v}" for k, v in sorted(s["counts"].items()))
    rows = []
    for r in s["rows"]:
        rows.append(f'<tr id="{e(r["id"])}"><td class="who"><a href="{r["href"]}">{t(r["session_id"])}</a>'
                    f'<div class="meta">{t(r["display"])}</div></td>'
                    f'<td class="state"><span class="verdict {e(r["verdict"])}">{t(r["verdict"])}</span>'
                    f'<div class="reason meta">{t(r["reason"])}</div></td>'
                    f'<td class="n prompts">{"—" if r["prompts"] is None else r["prompts"]}</td>'
                    f'<td class="last-prompt">{t((r["last_prompt"] or "")[:200])}</td>'
                    f'<td class="last-at">{t((r["last_at"] or "")[:19].replace("T", " "))}</td>'
                    f'<td class="ev">{_evidence(r)}</td></tr>')
    body = (f'<h1>Live</h1><p class="counts"><span id="live-counts">{counts}</span> · '
            f'<span id="live-status" data-generation="{s["generation"]}">generation {s["generation"]}; '
            "updates arrive on their own</span></p>"
            f'<p class="meta" id="live-more">{t(s["more"])}</p>'
            '<table class="grid" id="live"><thead><tr><th>Session</th><th>State</th><th class="n">Prompts</th>'
            "<th>Last prompt</th><th>Last activity</th><th>Evidence</th></tr></thead><tbody>"
            + "".join(rows) + "</tbody></table>")
    return page("Live", body, current="/live", scripts=("live.js",))
