"""One usage event per API response, deduplicated across every copy a provider wrote.

An `Event` is what one request consumed as the provider recorded it. Providers write the same
response more than once (Claude Code one record per content block of a message, replays after a
compaction, copies in forks and subagent lanes), so events are merged by a `key` (the
provider's unit: a message id, a response id, a step) before anything is summed.

Merge rule (documented per provider in docs/usage.md): the token fields take the per-field MAX
over the copies of one key. Evidence: copies of one message are byte-identical in 99.97% of the
groups measured (QT-040); the exceptions are partial copies written while a response was still
streaming (fewer output tokens) and compaction replays whose four counts are zeroed (QT-041,
where the zeroed copies come LAST, so "last wins" would lose the real counts). The maximum is
right in both cases and does not depend on the order files are read. The attribution (session,
lane, instant, model) is that of the copy with the largest total, preferring a main-lane copy
over a subagent-lane copy and then the earliest instant.
"""

from __future__ import annotations

from ..providers.usage import TOKEN_FIELDS, Event

__all__ = ["TOKEN_FIELDS", "Event", "Ledger", "merge"]


def _max(a: int | None, b: int | None) -> int | None:
    if a is None:
        return b
    if b is None:
        return a
    return a if a >= b else b


def _prefer(new: Event, old: Event) -> bool:
    """Whether `new` should give the merged event its attribution."""
    nt, ot = new.total(), old.total()
    if nt != ot:
        return nt > ot
    nm, om = new.lane == "main", old.lane == "main"
    if nm != om:
        return nm
    if new.ts is not None and (old.ts is None or new.ts < old.ts):
        return True
    return False


class Ledger:
    """Events merged by key; events without a key are kept as they are."""

    __slots__ = ("by_key", "events", "copies_merged")

    def __init__(self) -> None:
        self.by_key: dict[str, Event] = {}
        self.events: list[Event] = []
        self.copies_merged = 0
        """Records that repeated a key already seen (merged, not counted again)."""

    def add(self, e: Event) -> None:
        k = e.key
        if k is None:
            self.events.append(e)
            return
        old = self.by_key.get(k)
        if old is None:
            self.by_key[k] = e
            self.events.append(e)
            return
        self.copies_merged += 1
        merge(old, e)


def merge(old: Event, e: Event) -> None:
    """Merge `e`, a later copy of `old`'s response (the same key), into `old`: per-field max of the
    counts, the attribution of the preferred copy (module docstring). The one merge rule: the
    ledger here and a dataset's query (sessionsift.sync) both merge with it."""
    prefer = _prefer(e, old)
    vals = [_max(getattr(old, f), getattr(e, f)) for f in TOKEN_FIELDS]
    cc = old.client_cost if e.client_cost is None else (
        e.client_cost if old.client_cost is None else max(old.client_cost, e.client_cost))
    if prefer:
        old.provider, old.session_id, old.lane, old.project = e.provider, e.session_id, e.lane, e.project or old.project
        old.model, old.ts, old.path = e.model or old.model, e.ts, e.path
        old.speed, old.geo, old.service_tier = e.speed, e.geo, e.service_tier
    for f, v in zip(TOKEN_FIELDS, vals):
        setattr(old, f, v)
    old.client_cost = cc
    old.copies += e.copies
