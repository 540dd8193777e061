"""`show` over the shared records: one session's records by line, locator or turn."""

from __future__ import annotations

from ..errors import NoSuchRecord, UsageError
from ..providers.base import Provider, ReadReport, Record, SessionRef


def show(prov: Provider, ref: SessionRef, *, lines: str | None = None, locator: str | None = None,
         turn: int | None = None) -> tuple[list[Record], ReadReport]:
    """Records of `ref` (with their raw record): `lines` N / A..B (physical lines of a
    line-based store), `locator` (``L12``, ``L12#1``, ``part:prt_...``: the record with exactly that
    locator, else every item of that line or row, ``L12#0``, ``L12#1`` ...), or `turn` (1-based; negative counts from the end; a turn runs from one
    prompt to the next)."""
    from ..read.lines import parse_lines

    rep = ReadReport()
    name = getattr(prov, "display", None) or ref.provider  # `Crush`, not `crush`: this is read by people
    recs = list(prov.read(ref, rep, raw=True))
    for r, t in zip(recs, number_turns(recs)):
        r.turn = t
    if lines is not None:
        a, b, explicit = parse_lines(lines)
        if not any(r.line is not None for r in recs):
            raise UsageError(f"{name} session {ref.session_id} is not stored in lines: use --locator "
                             "(each JSON row's `locator`)")
        picked = [r for r in recs if r.line is not None and a <= r.line <= b]
        if not picked:
            raise NoSuchRecord(f"no such record(s): {'L%d' % a if explicit else f'L{a}..L{b}'} in session "
                               f"{ref.session_id} ({name})")
    elif locator is not None:
        # an exact locator names one record; else `L12` / `part:X` names every item of that line/row
        picked = [r for r in recs if r.locator == locator] or [r for r in recs if r.locator.startswith(locator + "#")]
        if not picked:
            raise NoSuchRecord(f"no such record: {locator} in session {ref.session_id} ({name})")
    elif turn is not None:
        numbered = [r.turn for r in recs]
        n = max((t for t in numbered if t is not None), default=0)
        t = n + 1 + turn if turn < 0 else turn
        if n == 0 or t < 1 or t > n:
            raise NoSuchRecord(f"no such record(s): turn {turn} in session {ref.session_id} "
                               f"(it has {n} turn{'' if n == 1 else 's'})")
        picked = [r for r, tn in zip(recs, numbered) if tn == t]
    else:
        raise UsageError("show needs one of --line, --locator or --turn")
    return picked, rep


def number_turns(recs: list[Record]) -> list[int | None]:
    """The turn of each record: the reader's own number where it gives one, else the count of
    prompts (copies excluded) up to and including the record."""
    return [n for _r, n in numbered(recs)]


def numbered(recs):
    """(record, its turn) for each record of an iterable, as `number_turns` numbers them, read as
    a stream (nothing held)."""
    n = 0
    for r in recs:
        if r.kind == "prompt" and r.copy_of is None:
            n += 1
        yield r, (r.turn if r.turn is not None else (n or None))
