"""Byte needles (every agent): literal needles every match must contain, found in the raw bytes of
a JSON Lines file; the candidate lines that hold one. (Claude Code's record shapes read from a
line's first bytes are providers/claude/search/shape.py.)

Laws (the client writes compact JSON, MISC-014; a newline in a string is the escape `\\n`,
MISC-015; the text matched is the transcript's, never a rendered label, NAR-010):
- NECESSITY only: a needle is a substring of every possible match, so a line without it cannot
  hold a match. When in doubt, no needle (a full scan) - never a needle that could drop a record.
- The matched text is decoded JSON; the raw line is JSON-encoded. A needle is used only if JSON
  encoding cannot change its bytes: printable ASCII without `"`, `\\` or whitespace (spaces are
  excluded too, because record text joins fields with separators the raw line does not hold),
  at least 3 bytes. Non-ASCII is excluded (a reserialised line may spell it `\\uXXXX`).
- Structural needles for label selection are bare values (`"user"`), never compact
  `"key":"value"` pairs, so a line reserialised with spaces after the colon is still found.
"""

from __future__ import annotations

import _thread
import os
import re
from typing import Iterable, Iterator

from .lines import SCAN_WINDOW, release

try:  # Python 3.11+: the stdlib parser, used only to read the pattern's structure
    import re._parser as _sre_parse  # type: ignore[import-not-found]
    import re._constants as _sre_c  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover
    import sre_parse as _sre_parse  # type: ignore[no-redef]
    import sre_constants as _sre_c  # type: ignore[no-redef]

MIN_NEEDLE = 3
DENSE_GAP = 16 << 10
"""Mean bytes between candidates below which `find` beats RE2's per-call cost."""


# Under Unicode case folding `k` also matches KELVIN SIGN and `s` LONG S (non-ASCII bytes), so a
# case-insensitive needle never carries them.
_FOLD_UNSAFE = frozenset(map(ord, "kKsS"))


def _safe_char(cp: int, ignore_case: bool = False) -> bool:
    return 0x21 <= cp <= 0x7E and cp not in (0x22, 0x5C) and not (ignore_case and cp in _FOLD_UNSAFE)


def _text_char(cp: int, ignore_case: bool = False) -> bool:
    """A character a literal over decoded record text (the full-text index, index/fulltext.py) may
    hold: anything but NUL and surrogates; ignoring case, ASCII only (its folding is the same in
    RE2 and in SQLite's trigram tokenizer) and never k/s (RE2 folds them with KELVIN SIGN and
    LONG S)."""
    if cp == 0 or 0xD800 <= cp <= 0xDFFF:
        return False
    return not ignore_case or (cp < 0x80 and cp not in _FOLD_UNSAFE)


def safe_fragments(text: str, ignore_case: bool = False, text_mode: bool = False) -> list[str]:
    """The maximal runs of `text` a JSON encoder cannot alter, of at least MIN_NEEDLE bytes
    (`text_mode`: the runs a literal over decoded text may hold, `_text_char`)."""
    out, cur = [], []
    ok = _text_char if text_mode else _safe_char
    for ch in text:
        if ok(ord(ch), ignore_case):
            cur.append(ch)
        else:
            if len(cur) >= MIN_NEEDLE:
                out.append("".join(cur))
            cur = []
    if len(cur) >= MIN_NEEDLE:
        out.append("".join(cur))
    return out


_POSIX_CLASS = re.compile(r"\[[:.=]")


class _Unsupported(Exception):
    pass


# A requirement is an OR-set of literal strings: a match contains at least one of them.
# A pattern's requirements are an AND-list of such OR-sets.


def _seq_requirements(items: list, ic: bool, tm: bool = False) -> list[frozenset[str]]:
    reqs: list[frozenset[str]] = []
    run: list[str] = []

    def flush() -> None:
        if run:
            for frag in safe_fragments("".join(run), ic, tm):
                reqs.append(frozenset([frag]))
            run.clear()

    for op, av in items:
        if op is _sre_c.LITERAL:
            run.append(chr(av))
            continue
        if op in (_sre_c.AT,):
            continue  # anchors consume nothing; the literal run stays contiguous
        flush()
        if op is _sre_c.SUBPATTERN:
            _group, add_flags, del_flags, sub = av
            if add_flags or del_flags:
                continue  # scoped flags: stay conservative
            reqs.extend(_seq_requirements(list(sub), ic, tm))
        elif op in (_sre_c.MAX_REPEAT, _sre_c.MIN_REPEAT, getattr(_sre_c, "POSSESSIVE_REPEAT", None)):
            lo, _hi, sub = av
            if lo >= 1:
                reqs.extend(_seq_requirements(list(sub), ic, tm))
        elif op is _sre_c.BRANCH:
            _, alts = av
            alt_sets = []
            for alt in alts:
                r = _seq_requirements(list(alt), ic, tm)
                if not r:
                    alt_sets = None
                    break
                alt_sets.append(max(r, key=_score))
            if alt_sets:
                reqs.append(frozenset().union(*alt_sets))
        elif op in (_sre_c.GROUPREF, _sre_c.GROUPREF_EXISTS, _sre_c.ASSERT, _sre_c.ASSERT_NOT):
            raise _Unsupported(op)
        # IN, ANY, NOT_LITERAL, CATEGORY ...: break the run, require nothing
    flush()
    return reqs


def _score(s: frozenset[str]) -> int:
    return min(len(x) for x in s) if s else 0


def needles_for(patterns: Iterable[str], ignore_case: bool, fixed: bool = False,
                text: bool = False) -> tuple[list[str] | None, bool]:
    """(needles, case_insensitive): an OR-set of needles one of which every match of any pattern
    contains (None = no safe needle: every line is a candidate), and whether to look for them
    ignoring ASCII case. The empty pattern matches everything, so it has no needle. `text`: the
    literals over decoded record text (spaces and, matching case, any character allowed).
    A pattern holding ``[:``, ``[.`` or ``[=`` has none: RE2 reads ``[[:alpha:]]`` as a class
    where Python's parser sees a literal ``]``.
    """
    out: set[str] = set()
    ci = ignore_case
    for p in patterns:
        if p == "":
            return None, ci
        if fixed:
            frags = safe_fragments(p, ignore_case, text)
            if not frags:
                return None, ci
            out.add(max(frags, key=len))
            continue
        if _POSIX_CLASS.search(p):
            return None, ci
        try:
            parsed = _sre_parse.parse(p)
        except Exception:
            return None, ci  # syntax the stdlib parser does not know: full scan (sound)
        pci = ignore_case or bool(parsed.state.flags & re.IGNORECASE)
        ci = ci or pci
        try:
            reqs = _seq_requirements(list(parsed), pci, text)
        except _Unsupported:
            return None, ci
        if not reqs:
            return None, ci
        out |= max(reqs, key=_score)
    if not out:
        return None, ci
    if ci:
        out = {s.lower() for s in out}
    return sorted(out), ci


def has_nonlinear(p: str) -> str | None:
    """Name the construct that cannot run in linear time (backreference, lookaround), if any."""
    try:
        parsed = _sre_parse.parse(p)
    except Exception:
        return None
    def walk(items) -> str | None:
        for op, av in items:
            if op in (_sre_c.GROUPREF, _sre_c.GROUPREF_EXISTS):
                return "a backreference"
            if op in (_sre_c.ASSERT, _sre_c.ASSERT_NOT):
                return "a lookaround assertion"
            if op is _sre_c.SUBPATTERN:
                r = walk(list(av[3]))
            elif op in (_sre_c.MAX_REPEAT, _sre_c.MIN_REPEAT, getattr(_sre_c, "POSSESSIVE_REPEAT", None)):
                r = walk(list(av[2]))
            elif op is _sre_c.BRANCH:
                r = None
                for alt in av[1]:
                    r = r or walk(list(alt))
            else:
                r = None
            if r:
                return r
        return None
    return walk(list(parsed))


# --- candidate lines ------------------------------------------------------------------------


_RX: dict = {}


def candidate_spans(buf, needles: list[str], ignore_case: bool) -> Iterator[tuple[int, int]]:
    """(start, end) of every line holding at least one needle, in file order (end excludes \\n).

    Two engines, same answer: RE2 on the mapping scans ~5.9 GB/s but costs ~10 us per call in its
    Python wrapper; `mmap.find` scans ~1.6 GB/s for ~0.5 us a call. A file starts with RE2 (rare
    needles: one call per file) and switches to per-needle `find` once candidates turn out dense
    (mean gap under 16 KB per needle). Case-insensitive needles always use RE2.
    """
    size = len(buf)
    bneedles = [n.encode("ascii") for n in needles]
    if not bneedles:
        return
    if SZ and not ignore_case:
        yield from _sz_spans(buf, bneedles)
        return
    key = (tuple(bneedles), ignore_case)
    rx = _RX.get(key)
    if rx is None:
        import re2

        opts = re2.Options()
        opts.log_errors = False
        alt = b"|".join(re2_escape(n) for n in bneedles)
        rx = _RX[key] = re2.compile((b"(?i)" if ignore_case else b"") + alt, opts)
    search, find, rfind = rx.search, buf.find, buf.rfind
    dense_gap = DENSE_GAP * len(bneedles)
    nxt: list[int] = []

    over = max(len(n) for n in bneedles) - 1
    windowed = getattr(buf, "madvise", None) is not None

    def by_re2(pos: int) -> int:
        if not windowed:
            m = search(buf, pos)
            return -1 if m is None else m.start()
        # a mapping is searched a window at a time, each released once searched: a search that
        # runs far ahead would leave all it passed resident (the leftmost match is the same)
        while pos < size:
            stop = min(size, pos + SCAN_WINDOW)
            m = search(buf, pos, min(size, stop + over))
            release(buf, pos, stop)
            if m is not None:
                return m.start()
            pos = stop
        return -1

    def by_find(pos: int) -> int:
        # merge the per-needle occurrence streams (each needle scanned once, forward)
        for j, b in enumerate(bneedles):
            if 0 <= nxt[j] < pos:
                nxt[j] = find(b, pos)
        live = [x for x in nxt if x >= 0]
        return min(live) if live else -1

    next_hit = by_re2
    pos = n = 0
    while pos < size:
        i = next_hit(pos)
        if i < 0:
            return
        s = rfind(b"\n", 0, i) + 1
        e = find(b"\n", i)
        if e < 0:
            e = size
        yield s, e
        pos = e + 1
        n += 1
        if next_hit is by_re2 and not ignore_case and n >= 8 and pos < n * dense_gap:
            nxt[:] = [find(b, pos) for b in bneedles]
            if len(bneedles) == 1:
                one = bneedles[0]
                next_hit = lambda pos: find(one, pos)  # noqa: E731
            else:
                next_hit = by_find


SZ = True
"""Case-sensitive needles are found with stringzilla (SIMD: ~15 GB/s on `"user"`, whose first
byte `"` is the most frequent byte of JSON, where RE2 and `find` run at ~1.5 GB/s)."""


def _sz_spans(buf, bneedles: list[bytes]) -> Iterator[tuple[int, int]]:
    """candidate_spans for case-sensitive needles: each needle's occurrences found with
    stringzilla, merged in file order; a line is yielded once, whichever needles it holds."""
    import stringzilla as sz

    find, rfind = sz.find, sz.rfind
    mv = buf if isinstance(buf, bytes) else memoryview(buf)  # stringzilla takes no mmap itself
    try:
        size = len(mv)
        if len(bneedles) == 1:  # the common case (a census's `"user"`), without the merging
            one = bneedles[0]
            i = find(mv, one, 0)
            while i >= 0:
                e = find(mv, b"\n", i)
                if e < 0:
                    e = size
                yield rfind(mv, b"\n", 0, i) + 1, e
                i = find(mv, one, e + 1) if e + 1 < size else -1
            return
        nxt = [find(mv, b, 0) for b in bneedles]
        pos = 0
        while pos < size:
            for j, b in enumerate(bneedles):
                if 0 <= nxt[j] < pos:
                    nxt[j] = find(mv, b, pos)
            i = min((x for x in nxt if x >= 0), default=-1)
            if i < 0:
                return
            s = rfind(mv, b"\n", 0, i) + 1
            e = find(mv, b"\n", i)
            if e < 0:
                e = size
            yield s, e
            pos = e + 1
    finally:
        if mv is not buf:
            mv.release()  # the mapping can close


BUF_BYTES = 16 << 20
_LOCAL = _thread._local()  # threading.local without importing threading (a warm search does not)
"""The read buffer of a thread (an anonymous mapping: page-aligned, reused for every file it
reads). One per thread, not per process: `serve` answers searches in several threads at once, and
one shared buffer let a thread find its needle in the bytes another thread had just read into it
(three concurrent `-i hello` searches over one store counted 17,862, 17,875 and 17,914 hits)."""


def _buffer():
    mv = getattr(_LOCAL, "buf", None)
    if mv is None:
        import mmap

        mv = _LOCAL.buf = memoryview(mmap.mmap(-1, BUF_BYTES))
    return mv


_FINDERS: dict = {}


def _finder(needles: list[str], ignore_case: bool):
    """(overlap, find(buffer, n) -> whether buffer[:n] holds a needle) for a needle set, made
    once per process (it holds no buffer: each thread passes its own)."""
    key = (tuple(needles), ignore_case)
    f = _FINDERS.get(key)
    if f is not None:
        return f
    bn = [n.encode("ascii") for n in needles]
    over = max(len(b) for b in bn) - 1
    if len(bn) == 1 and not ignore_case:
        import stringzilla as sz

        one = bn[0]
        Str = sz.Str
        find = lambda mv, n: Str(mv[:n]).find(one) >= 0  # noqa: E731
    else:
        rkey = (tuple(bn), ignore_case)
        rx = _RX.get(rkey)
        if rx is None:
            import re2

            opts = re2.Options()
            opts.log_errors = False
            alt = b"|".join(re2_escape(n) for n in bn)
            rx = _RX[rkey] = re2.compile((b"(?i)" if ignore_case else b"") + alt, opts)
        search = rx.search
        find = lambda mv, n: search(mv, 0, n) is not None  # noqa: E731
    f = _FINDERS[key] = (over, find)
    return f


def file_holds(path, needles: list[str], ignore_case: bool, count_lines: bool = False) -> tuple[bool, int, int | None]:
    """(whether the file holds one of `needles` anywhere, its size, its line count when asked and
    the needle is absent) - read into the thread's reused page-aligned buffer, in pieces that overlap by a
    needle's length, so a store of many small files costs one read each (no mapping). One
    case-sensitive needle is found with stringzilla (SIMD, whatever its first byte), several or a
    case-insensitive one with RE2. Necessity only: a file that holds a needle may hold no match."""
    if not needles:
        return False, os.stat(path).st_size, None
    over, find = _finder(needles, ignore_case)
    mv = _buffer()
    fd = os.open(path, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        pos = 0
        keep = 0  # bytes kept at the buffer's start from the previous piece
        lines = 0
        last = b""
        while True:
            n = os.preadv(fd, [mv[keep:]], pos) if pos < size else 0
            if n <= 0 and keep == 0:
                break
            total = keep + n
            if find(mv, total):
                return True, size, None
            if count_lines:
                lines += mv[keep:total].tobytes().count(b"\n") if n else 0
                if n:
                    last = mv[total - 1:total].tobytes()
            pos += n
            if n <= 0 or pos >= size:
                break
            keep = min(over, total)
            mv[:keep] = mv[total - keep:total]
        if count_lines and size and last != b"\n":
            lines += 1
        return False, size, lines if count_lines else None
    finally:
        os.close(fd)


def re2_escape(b: bytes) -> bytes:
    return b"".join(bytes([c]) if (48 <= c <= 57 or 65 <= c <= 90 or 97 <= c <= 122) else b"\\" + bytes([c]) for c in b)


def line_has(raw: bytes, needles: list[bytes], lowered: bool) -> bool:
    if lowered:
        raw = raw.lower()
    return any(n in raw for n in needles)
