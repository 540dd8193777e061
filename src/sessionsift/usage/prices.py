"""Cost from a bundled price table (LiteLLM's `model_prices_and_context_window.json`, trimmed).

The table is data, not code: `data/prices.json` holds the models of the providers whose agents
sessionsift reads (Anthropic, OpenAI, Google Gemini, and the model vendors opencode commonly
routes to), with the fields a cost needs, and a `_meta` block naming its source, version, date,
sha256 and licence. There is no network at run time. Refresh it from a downloaded file:

    python -m sessionsift.usage.prices --refresh model_prices_and_context_window.json \
        --source "litellm <version or commit>"

Rules (the table maintainer's own, litellm/litellm_core_utils/llm_cost_calc/utils.py
`_get_token_base_cost`):
- a request whose PROMPT (input + cache read + cache write) exceeds a tier threshold
  (`*_above_200k_tokens`, `_above_272k_`, ...; xAI: reaches it) is priced at that tier's rates for
  EVERY token type (input, output, cache read, cache write); the highest threshold exceeded wins;
- an absent cache-read or cache-write rate is the input rate; an absent 1-hour cache-write rate
  (`cache_creation_input_token_cost_above_1hr`) is the 5-minute cache-write rate;
- `provider_specific_entry.fast` multiplies a request recorded with `speed: "fast"`, and
  `provider_specific_entry.<geo>` one recorded with `inference_geo: "<geo>"`.
- reasoning tokens are inside `output` (the shared Tokens contract) and priced as output.
A model the table does not name has NO price: the cost is None, never 0 (a request with zero
tokens costs 0 whatever its model). Names are matched exactly after removing a context tag
(`[1m]`), a date suffix (`-20250929`, `-2024-08-06`) or a provider prefix; never fuzzily.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent / "data" / "prices.json"

KEEP_PROVIDERS = ("anthropic", "openai", "gemini", "vertex_ai-language-models", "deepseek", "xai",
                  "mistral", "groq")
"""litellm_provider values kept when the table is refreshed."""
KEEP_MODES = ("chat", "responses")

_BASE_KEYS = {
    "input": "input_cost_per_token",
    "output": "output_cost_per_token",
    "cache_read": "cache_read_input_token_cost",
    "cache_write": "cache_creation_input_token_cost",
    "cache_write_1h": "cache_creation_input_token_cost_above_1hr",
}
_TIER_RE = re.compile(r"^(?P<base>input_cost_per_token|output_cost_per_token|cache_read_input_token_cost|"
                      r"cache_creation_input_token_cost(?:_above_1hr)?)_above_(?P<n>\d+)(?P<k>k?)_tokens$")
_DATE_SUFFIX = re.compile(r"-(?:\d{8}|\d{4}-\d{2}-\d{2})$")
_CONTEXT_TAG = re.compile(r"\[[^\]]*\]$")


@dataclass(frozen=True)
class Rates:
    """USD per token for one model (one tier)."""

    input: float
    output: float
    cache_read: float
    cache_write: float
    cache_write_1h: float


@dataclass(frozen=True)
class Price:
    key: str
    """The table's key that matched."""
    provider: str | None
    base: Rates
    tiers: tuple[tuple[int, Rates], ...]
    """(prompt-token threshold, rates) in ascending threshold order."""
    multipliers: dict[str, float]

    @cached_property
    def quote(self) -> tuple:
        """The price as plain tuples (usage.rates): (inclusive, base, ((threshold, rates), ...),
        multipliers), rates = (input, output, cache_read, cache_write, cache_write_1h)."""
        t = lambda r: (r.input, r.output, r.cache_read, r.cache_write, r.cache_write_1h)  # noqa: E731
        return (self.provider == "xai", t(self.base), tuple((n, t(r)) for n, r in self.tiers), dict(self.multipliers))

    def rates_for(self, prompt_tokens: int) -> Rates:
        # the table maintainer bills xAI's tier from the threshold itself (>=), the others above it
        inclusive = self.provider == "xai"
        r = self.base
        for threshold, tr in self.tiers:
            if prompt_tokens > threshold or (inclusive and prompt_tokens == threshold):
                r = tr
        return r


def _rates(entry: dict, base: Rates | None = None, suffix: str = "") -> Rates | None:
    def get(name: str) -> float | None:
        v = entry.get(_BASE_KEYS[name] + suffix)
        return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None

    inp = get("input")
    out = get("output")
    if base is None:
        if inp is None or out is None:
            return None
    else:
        inp = base.input if inp is None else inp
        out = base.output if out is None else out
    cr = get("cache_read")
    cw = get("cache_write")
    cw1 = get("cache_write_1h")
    if base is not None:
        cr = base.cache_read if cr is None else cr
        cw = base.cache_write if cw is None else cw
        cw1 = base.cache_write_1h if cw1 is None else cw1
    cr = inp if cr is None else cr
    cw = inp if cw is None else cw
    cw1 = cw if cw1 is None else cw1
    return Rates(inp, out, cr, cw, cw1)


def _price(key: str, entry: dict) -> Price | None:
    base = _rates(entry)
    if base is None:
        return None
    suffixes: dict[int, str] = {}
    for k in entry:
        m = _TIER_RE.match(k)
        if m:
            n = int(m.group("n")) * (1000 if m.group("k") else 1)
            suffixes[n] = f"_above_{m.group('n')}{m.group('k')}_tokens"
    tiers = [(n, _rates(entry, base, suffixes[n])) for n in sorted(suffixes)]
    mult = {}
    pse = entry.get("provider_specific_entry")
    if isinstance(pse, dict):
        mult = {str(k): float(v) for k, v in pse.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
    return Price(key, entry.get("litellm_provider"), base, tuple(tiers), mult)


@dataclass
class PriceTable:
    meta: dict
    models: dict[str, dict]

    @lru_cache(maxsize=4096)  # noqa: B019 - a table lives for the process
    def lookup(self, model: str | None) -> Price | None:
        if not model or not isinstance(model, str):
            return None
        for cand in candidates(model):
            e = self.models.get(cand)
            if e is not None:
                p = _price(cand, e)
                if p is not None:
                    return p
        return None

    def __hash__(self) -> int:  # lru_cache on a method needs a hashable self
        return id(self)

    def describe(self) -> dict:
        m = self.meta
        return {"source": m.get("source"), "version": m.get("version"), "retrieved": m.get("retrieved"),
                "sha256": m.get("sha256"), "licence": m.get("licence"), "models": len(self.models)}


def candidates(model: str) -> list[str]:
    """The exact names a model is looked up under, in order (no fuzzy matching)."""
    out: list[str] = []

    def add(s: str) -> None:
        if s and s not in out:
            out.append(s)

    m = model.strip()
    add(m)
    m2 = _CONTEXT_TAG.sub("", m)
    add(m2)
    bare = m2.split("/", 1)[1] if "/" in m2 else m2
    add(bare)
    for s in (m2, bare):
        d = _DATE_SUFFIX.sub("", s)
        add(d)
    for s in list(out):
        if s.startswith("gemini") and "/" not in s:
            add("gemini/" + s)
            add("vertex_ai/" + s)
        elif s.startswith("claude") and "/" not in s:
            add(f"anthropic.{s}-v1:0")  # Bedrock's list price (labelled by the key that matched)
    return out


def cost(price: Price, input: int = 0, output: int = 0, cache_read: int = 0, cache_write: int = 0,
         cache_write_1h: int = 0, speed: str | None = None, geo: str | None = None) -> float:
    """USD for one request. `cache_write` counts the 5-minute writes only; `cache_write_1h` the
    1-hour ones (their sum is the request's cache writes). The arithmetic: usage.rates.cost."""
    from .rates import cost as _cost

    return _cost(price.quote, input, output, cache_read, cache_write, cache_write_1h, speed, geo)


def cost_of(table: "PriceTable", model: str | None, input: int | None, output: int | None, cache_read: int | None,
            cache_write: int | None, cache_write_1h: int | None = None, speed: str | None = None,
            geo: str | None = None) -> tuple[float | None, str | None]:
    """(cost, the model without a price) of one response from its recorded counts: usage.rates.cost_of
    with the quote of `model` in `table` (None where it has no price)."""
    from .rates import cost_of as _cost_of

    p = table.lookup(model) if model else None
    return _cost_of(None if p is None else p.quote, model, input, output, cache_read, cache_write, cache_write_1h,
                    speed, geo)


@lru_cache(maxsize=None)
def load(path: str | None = None) -> PriceTable:
    raw = json.loads(Path(path or DATA).read_text(encoding="utf-8"))
    return PriceTable(raw.get("_meta", {}), raw.get("models", {}))


# -- refresh --------------------------------------------------------------------------------

def _kept_fields(entry: dict) -> dict:
    out = {}
    for k, v in entry.items():
        if k in ("litellm_provider", "mode", "max_input_tokens", "provider_specific_entry"):
            out[k] = v
        elif k in _BASE_KEYS.values() or _TIER_RE.match(k):
            out[k] = v
        elif k == "output_cost_per_reasoning_token":
            out[k] = v
    return out


def trim(full: dict, providers: tuple[str, ...] = KEEP_PROVIDERS) -> dict[str, dict]:
    models = {}
    for key, entry in full.items():
        if not isinstance(entry, dict) or key == "sample_spec":
            continue
        if entry.get("mode") not in KEEP_MODES:
            continue
        prov = entry.get("litellm_provider")
        if prov not in providers and not _fallback_key(key, prov):
            continue
        if _rates(entry) is None:
            continue
        models[key] = _kept_fields(entry)
    return dict(sorted(models.items()))


def _fallback_key(key: str, provider: str | None) -> bool:
    """Entries kept as labelled fallbacks: Bedrock's list price of an Anthropic model the
    anthropic section no longer carries (`anthropic.<model>-v1:0`, no region prefix), and
    Vertex's `vertex_ai/gemini-*` (models the Gemini section does not name)."""
    if provider in ("bedrock", "bedrock_converse"):
        return key.startswith("anthropic.claude") and key.endswith("-v1:0")
    if provider == "vertex_ai":
        return key.startswith("vertex_ai/gemini")
    return False


def refresh(src: Path, dest: Path = DATA, source: str | None = None, retrieved: str | None = None) -> dict:
    data = src.read_bytes()
    full = json.loads(data)
    models = trim(full)
    meta = {
        "source": "https://github.com/BerriAI/litellm/blob/main/model_prices_and_context_window.json",
        "version": source or "unknown",
        "retrieved": retrieved or __import__("datetime").date.today().isoformat(),
        "sha256": __import__("hashlib").sha256(data).hexdigest(),
        "licence": "MIT (c) 2023 Berri AI; see LITELLM-LICENSE beside this file",
        "providers": list(KEEP_PROVIDERS),
        "modes": list(KEEP_MODES),
        "note": "trimmed by `python -m sessionsift.usage.prices --refresh`: standard-tier rates, "
                "long-context tiers, cache read/write (5 min, 1 h) and speed/geo multipliers",
    }
    dest.write_text(json.dumps({"_meta": meta, "models": models}, indent=1, sort_keys=False) + "\n",
                    encoding="utf-8")
    load.cache_clear()
    return {"models": len(models), "dest": str(dest), **meta}


def main(argv: list[str] | None = None) -> int:
    import argparse

    ap = argparse.ArgumentParser(prog="python -m sessionsift.usage.prices",
                                 description="Show or refresh the bundled price table (no network).")
    ap.add_argument("--refresh", metavar="FILE", type=Path,
                    help="a downloaded LiteLLM model_prices_and_context_window.json")
    ap.add_argument("--source", help="what FILE is, e.g. 'litellm 1.110.2 wheel' or a commit hash")
    ap.add_argument("--out", type=Path, default=DATA, help="where to write (default: the bundled table)")
    ap.add_argument("--lookup", metavar="MODEL", help="print the rates a model name resolves to")
    a = ap.parse_args(argv)
    if a.refresh:
        res = refresh(a.refresh, a.out, a.source)
        print(json.dumps(res, indent=1))
        return 0
    t = load()
    if a.lookup:
        p = t.lookup(a.lookup)
        print(json.dumps(None if p is None else {"key": p.key, "provider": p.provider, "base": p.base.__dict__,
                                                 "tiers": [[n, r.__dict__] for n, r in p.tiers],
                                                 "multipliers": p.multipliers}, indent=1))
        return 0 if p else 1
    print(json.dumps(t.describe(), indent=1))
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
