"""Character arithmetic in the unit Claude Code counts: UTF-16 code units (JS `String.length`,
MISC-012). An astral character (emoji, CJK ext-B) counts 2; BMP text counts 1 per character.

- `u16len(s)`: the length the client sees;
- `u16_prefix(s, n)` / `u16_suffix(s, n)`: the longest prefix/suffix of at most n units that never
  splits a surrogate pair;
- `trim_middle(s, cap, marker)`: keep head and tail, replace the middle by an explicit marker;
- `slice_text(text, window)`: cut a text into chunks of at most `window` units whose concatenation
  is the text, exactly (the SessionStart `additionalContext` threshold is 10,000: ELI-025).
"""

from __future__ import annotations

from typing import Callable

# A chunk may end early at a newline only if the newline lies in the last fifth of the window,
# so every chunk but the last holds at least 4/5 of a window: n chunks carry >= (n-1)*0.8*window
# units, which is what lets a hook recipe with a fixed number of slots promise to carry it all.
MIN_FILL = 0.8


def u16len(s: str) -> int:
    """Length in UTF-16 code units (what JavaScript's String.length returns)."""
    return len(s.encode("utf-16-le", "surrogatepass")) // 2


def _units(ch: str) -> int:
    return 2 if ord(ch) > 0xFFFF else 1


def u16_prefix(s: str, n: int) -> str:
    """The longest prefix of `s` of at most `n` UTF-16 units (never half a surrogate pair)."""
    if n <= 0:
        return ""
    if len(s) <= n // 2 or u16len(s) <= n:
        return s if u16len(s) <= n else _walk_prefix(s, n)
    return _walk_prefix(s, n)


def _walk_prefix(s: str, n: int) -> str:
    used = 0
    for i, ch in enumerate(s):
        u = _units(ch)
        if used + u > n:
            return s[:i]
        used += u
    return s


def u16_suffix(s: str, n: int) -> str:
    """The longest suffix of `s` of at most `n` UTF-16 units."""
    if n <= 0:
        return ""
    used = 0
    for i in range(len(s) - 1, -1, -1):
        u = _units(s[i])
        if used + u > n:
            return s[i + 1:]
        used += u
    return s


def trim_middle(s: str, cap: int, marker: Callable[[int, int], str]) -> tuple[str, int]:
    """Trim `s` to at most `cap` UTF-16 units by cutting its middle.

    `marker(removed, total)` builds the explicit note put where the middle was (both in UTF-16
    units). Returns (text, removed_units); removed 0 means the text was left whole. If even the
    marker does not fit, the marker alone is returned (never a silent cut).
    """
    total = u16len(s)
    if cap <= 0 or total <= cap:
        return s, 0
    # the marker's own length depends on the removed count; two passes settle it
    m = marker(total, total)
    room = cap - u16len(m)
    if room <= 0:
        return m, total
    head = u16_prefix(s, room - room // 3)
    tail = u16_suffix(s[len(head):], room - u16len(head))
    removed = total - u16len(head) - u16len(tail)
    m = marker(removed, total)
    while u16len(head) + u16len(m) + u16len(tail) > cap and (head or tail):
        # the final marker came out longer than the first estimate: give back a little
        if len(tail) >= len(head) and tail:
            tail = tail[1:]
        else:
            head = head[:-1]
        removed = total - u16len(head) - u16len(tail)
        m = marker(removed, total)
    return head + m + tail, removed


def slice_text(text: str, window: int) -> list[str]:
    """Cut `text` into chunks of at most `window` UTF-16 units; "".join(chunks) == text.

    A chunk ends just after a newline when one lies in the last fifth of the window (so slices
    break between lines), else exactly at the window (never inside a surrogate pair). An empty
    text gives no chunks.
    """
    if window < 2:
        raise ValueError("window must be at least 2 UTF-16 units")
    out: list[str] = []
    pos = 0
    n = len(text)
    floor = int(window * MIN_FILL)
    while pos < n:
        chunk = u16_prefix(text[pos:pos + window], window)
        if pos + len(chunk) < n:
            cut = chunk.rfind("\n")
            if cut >= 0 and u16len(chunk[:cut + 1]) >= floor:
                chunk = chunk[:cut + 1]
        if not chunk:  # cannot happen for window >= 2; guard against an endless loop
            raise ValueError("window too small for the text")
        out.append(chunk)
        pos += len(chunk)
    return out


def max_slices(chars: int, window: int) -> int:
    """An upper bound on len(slice_text(t, window)) for any text of `chars` UTF-16 units: every
    chunk but the last holds at least int(0.8 * window) units."""
    if chars <= 0:
        return 0
    floor = max(1, min(int(window * MIN_FILL), window - 1))
    return 1 + (chars - 1) // floor


def budget_for_slots(slots: int, window: int) -> int:
    """The largest text (UTF-16 units) that `slice_text(_, window)` always cuts into at most
    `slots` chunks - what a hook recipe with `slots` hooks can carry without loss."""
    floor = max(1, min(int(window * MIN_FILL), window - 1))
    return slots * floor if slots > 0 else 0
