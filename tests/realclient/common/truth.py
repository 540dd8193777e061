"""Small helpers the runners' ground truths share."""
from __future__ import annotations

import hashlib


def subst(x, work: str):
    """``x`` with ``{W}`` replaced by the work dir in every string (dicts, lists, tuples walked)."""
    if isinstance(x, str):
        return x.replace("{W}", work)
    if isinstance(x, dict):
        return {k: subst(v, work) for k, v in x.items()}
    if isinstance(x, list):
        return [subst(v, work) for v in x]
    if isinstance(x, tuple):
        return tuple(subst(v, work) for v in x)
    return x


def sha256(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()


def routes(requests: list[dict]) -> dict[str, int]:
    """How many requests the mock logged per route (its prefix before ``:``; else the method)."""
    out: dict[str, int] = {}
    for r in requests:
        k = str(r.get("route", r.get("method"))).split(":")[0]
        out[k] = out.get(k, 0) + 1
    return out
