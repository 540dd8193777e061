"""A session-level byte prefilter for `search` over the shared records.

NECESSITY only (as `search.prefilter`): a needle is a literal every match contains, made only of
printable ASCII that JSON encoding cannot alter (no quote, backslash or whitespace; >= 3 bytes).
For a provider whose records' matchable text is made of JSON string values written in the
session's own files (`text_in_bytes`), a session none of whose files holds a needle cannot hold a
match: it is not parsed. Compressed files (`.zst`) are searched through the decompressor. A
database, a directory, or a provider without that guarantee is always read.

Which providers keep the guarantee is tested on their real-client samples
(tests/test_shared_prefilter.py: every needle-safe fragment of every record's matchable text
occurs in its session's bytes); an outside reader opts in with the class attribute
``text_in_bytes = True``.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

TEXT_IN_BYTES: dict[str, frozenset[str]] = {
    "claude-code": frozenset(),
    "codex": frozenset(),
    "gemini-cli": frozenset({"meta"}),
}
"""Built-in readers whose matchable text is JSON values written in the session's own files, with
the kinds for which that does NOT hold (Gemini CLI's session header is a `meta` record whose text
the reader composes): a query selecting one of those is never prefiltered."""

_STRUCTURAL = re.compile(r"[:,{}\[\]]")

CHUNK = 1 << 22
SMALL = 1 << 20
"""Files up to this size are read whole (cheaper than a mapping); larger ones are mapped."""


def safe_for(prov, kinds: frozenset[str]) -> bool:
    """Whether a session of `prov` with no needle in its files can hold no match of `kinds`."""
    name = getattr(prov, "name", None)
    if name in TEXT_IN_BYTES:
        return not (kinds & TEXT_IN_BYTES[name])
    return getattr(type(prov), "text_in_bytes", False) is True


def session_needles(needles: list[str] | tuple[str, ...] | None) -> list[str] | None:
    """Needles for whole files: each pattern needle cut at JSON's structural characters (a client
    may write `{"a": 1}` where the matched text, re-serialised, says `{"a":1}`) and its longest
    piece kept -- still in every match; None when a needle has no piece of 3 bytes."""
    if not needles:
        return None
    out = []
    for n in needles:
        parts = [x for x in _STRUCTURAL.split(n) if len(x) >= 3]
        if not parts:
            return None
        out.append(max(parts, key=len))
    return sorted(set(out))


_RX: dict = {}


def _rx(needles: list[str], ci: bool):
    key = (tuple(needles), ci)
    rx = _RX.get(key)
    if rx is None:
        rx = _RX[key] = _compile(needles, ci)
    return rx


def _compile(needles: list[str], ci: bool):
    import re2

    from ..search.prefilter import _re2_escape

    opts = re2.Options()
    opts.log_errors = False
    alt = b"|".join(_re2_escape(n.encode("ascii")) for n in needles)
    return re2.compile((b"(?i)" if ci else b"") + alt, opts)


def may_match(paths: list[Path], needles: list[str], ci: bool, rx=None) -> bool:
    """False only when no file of `paths` holds any needle (so no record can match)."""
    rx = rx or _rx(needles, ci)
    keep = max(len(n) for n in needles) - 1
    for p in paths:
        name = os.fspath(p)
        try:
            if name.endswith((".jsonl", ".json")):
                with open(name, "rb") as f:
                    if os.fstat(f.fileno()).st_size <= SMALL:
                        if rx.search(f.read()) is not None:
                            return True
                        continue
                from ..read.lines import open_map

                with open_map(name) as m:  # mapped, never loaded: a file can be GBs
                    if len(m.buf) and rx.search(m.buf) is not None:
                        return True
            elif name.endswith(".zst"):
                import zstandard

                with open(name, "rb") as f, zstandard.ZstdDecompressor().stream_reader(f) as r:
                    tail = b""
                    while True:
                        chunk = r.read(CHUNK)
                        if not chunk:
                            break
                        if rx.search(tail + chunk) is not None:
                            return True
                        tail = chunk[-keep:] if keep > 0 else b""
            else:
                return True  # a store this prefilter does not read: parse it
        except Exception:  # unreadable or corrupt: let the reader say what is wrong
            return True
    return False
