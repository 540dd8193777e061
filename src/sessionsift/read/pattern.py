"""The pattern of a search, for every agent: RE2 (linear time) validated and combined; a pattern
RE2 cannot run in linear time is refused with the reason (docs/search.md)."""

from __future__ import annotations

import re

from ..errors import UsageError
from .needles import has_nonlinear


def _re2():
    import re2

    opts = re2.Options()
    opts.log_errors = False
    return re2, opts


def compile_regex(patterns: tuple[str, ...], ignore_case: bool, fixed: bool) -> str | None:
    """Validate every pattern under RE2 and return one combined pattern (None = match all)."""
    if not patterns or any(p == "" for p in patterns):
        return None
    re2, opts = _re2()
    parts = []
    for p in patterns:
        if fixed:
            src = re.escape(p)
        else:
            why = has_nonlinear(p)
            if why:
                raise UsageError(
                    f"pattern {p!r} uses {why}, which cannot run in linear time; "
                    "search uses a linear-time engine (RE2) and refuses it",
                    hint="rewrite without backreferences/lookaround, or match a superset and filter the JSON output",
                )
            src = p
        try:
            re2.compile(src, opts)
        except Exception as exc:  # re2 raises its own error type
            msg = exc.args[0] if exc.args else str(exc)
            if isinstance(msg, bytes):
                msg = msg.decode("utf-8", "replace")
            if "invalid perl operator: (?<" in msg or "invalid perl operator: (?=" in msg or "(?!" in msg:
                raise UsageError(f"pattern {p!r} uses a lookaround assertion, which cannot run in linear time; refused")
            if "invalid escape sequence: \\" in msg and re.search(r"\\[1-9]", p):
                raise UsageError(f"pattern {p!r} uses a backreference, which cannot run in linear time; refused")
            raise UsageError(f"invalid regular expression {p!r}: {msg}")
        parts.append(src)
    combined = parts[0] if len(parts) == 1 else "|".join(f"(?:{x})" for x in parts)
    if ignore_case:
        combined = "(?i)" + combined
    return combined


_RX_CACHE: dict = {}


def compiled(regex: str):
    """The compiled RE2 of a (validated) combined pattern, cached per process."""
    r = _RX_CACHE.get(regex)
    if r is None:
        re2, opts = _re2()
        r = _RX_CACHE[regex] = re2.compile(regex, opts)
    return r
