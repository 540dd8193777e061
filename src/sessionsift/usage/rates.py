"""The arithmetic of a request's cost, over a price's plain `quote` (prices.Price.quote): a module
with no imports, so a reader that keeps quotes (the statusline cache) prices new responses without
loading the price table. prices.cost and prices.cost_of are these functions; there is no other."""

from __future__ import annotations


def cost(q: tuple, input: int = 0, output: int = 0, cache_read: int = 0, cache_write: int = 0,
         cache_write_1h: int = 0, speed: str | None = None, geo: str | None = None) -> float:
    """USD for one request at quote `q` = (inclusive, base rates, ((threshold, rates), ...),
    multipliers), rates = (input, output, cache_read, cache_write, cache_write_1h) per token. The
    whole request is priced at the rates of the highest tier its PROMPT (input + cache read + cache
    write) passes (`inclusive`: reaches); `cache_write` counts the 5-minute writes only."""
    inclusive, r, tiers, mult = q
    prompt = input + cache_read + cache_write + cache_write_1h
    for threshold, tr in tiers:
        if prompt > threshold or (inclusive and prompt == threshold):
            r = tr
    usd = input * r[0] + output * r[1] + cache_read * r[2] + cache_write * r[3] + cache_write_1h * r[4]
    if speed and speed != "standard" and speed in mult:
        usd *= mult[speed]
    if geo and geo in mult:
        usd *= mult[geo]
    return usd


def cost_of(q: tuple | None, model: str | None, input: int | None, output: int | None, cache_read: int | None,
            cache_write: int | None, cache_write_1h: int | None = None, speed: str | None = None,
            geo: str | None = None) -> tuple[float | None, str | None]:
    """(cost, the model without a price) of one response from its recorded counts (None where not
    recorded; `cache_write` is every cache write, `cache_write_1h` its 1-hour share), `q` the quote
    of its model or None when the table has none. No count recorded at all: (None, None), unknown,
    not 0; zero tokens: 0 whatever the model; no price: (None, the model's name)."""
    if input is None and output is None and cache_read is None and cache_write is None and cache_write_1h is None:
        return None, None
    if (input or 0) + (output or 0) + (cache_read or 0) + (cache_write or 0) == 0:
        return 0.0, None
    if q is None:
        return None, model or "(unknown model)"
    cw1 = cache_write_1h or 0
    cw5 = max(0, (cache_write or 0) - cw1)
    return cost(q, input or 0, output or 0, cache_read or 0, cw5, cw1, speed, geo), None
