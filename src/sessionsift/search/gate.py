"""A session-level byte prefilter for `search` over the shared records.

NECESSITY only (as `read.needles`): a needle is a literal every match contains, made only of
printable ASCII that JSON encoding cannot alter (no quote, backslash or whitespace; >= 3 bytes).
For a provider whose records' matchable text is made of JSON string values written in the
session's own files (`text_in_bytes`), a session none of whose files holds a needle cannot hold a
match: it is not parsed. Compressed files (`.zst`) are searched through the decompressor. A
database (unless its reader gates the rows itself: ``rule_out_rows(refs, needles, ci, kinds) ->
[bool]``, opencode's, with SQL), a directory, or a provider without that guarantee is always read.

Many sessions are gated at once (:func:`rule_out`): their small files are read back to back into
one page-aligned buffer (one ``readv`` per file, no mapping, no Python object per file beyond its
span) and the buffer is searched once -- with stringzilla (SIMD) for a single case-sensitive
needle, RE2 otherwise -- each file's bytes separated by a newline, which no needle holds. A hit
skips the rest of its file. Larger files are mapped and searched one by one.

Which providers keep the guarantee is tested on their real-client samples
(tests/test_shared_prefilter.py: every needle-safe fragment of every record's matchable text
occurs in its session's bytes); a reader opts in with the class attribute
``text_in_bytes = True`` (providers.base.Provider).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

def text_in_bytes() -> dict[str, frozenset[str]]:
    """The registered readers that keep the guarantee (Provider.text_in_bytes), each with the kinds
    for which it does not hold (Provider.text_not_in_bytes)."""
    from ..providers import registry

    return {n: c.text_not_in_bytes for n, c in registry().items() if c.text_in_bytes is True}


_STRUCTURAL = re.compile(r"[:,{}\[\]]")

CHUNK = 1 << 22
SMALL = 1 << 20
"""Files up to this size are read whole (cheaper than a mapping); larger ones are mapped."""


def safe_for(prov, kinds: frozenset[str]) -> bool:
    """Whether a session of `prov` with no needle in its files can hold no match of `kinds`."""
    if getattr(type(prov), "text_in_bytes", False) is not True:
        return False
    return not (kinds & getattr(type(prov), "text_not_in_bytes", frozenset()))


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

    from ..read.needles import re2_escape

    opts = re2.Options()
    opts.log_errors = False
    alt = b"|".join(re2_escape(n.encode("ascii")) for n in needles)
    return re2.compile((b"(?i)" if ci else b"") + alt, opts)


def may_match(paths: list[Path], needles: list[str], ci: bool, rx=None, keep: int | None = None) -> bool:
    """False only when no file of `paths` holds any needle (so no record can match). With `rx`
    (a compiled RE2) it is searched instead, `keep` bytes carried across compressed chunks."""
    rx = rx or _rx(needles, ci)
    keep = max(len(n) for n in needles) - 1 if keep is None else keep
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



BUF = 8 << 20
"""The batch buffer: files are packed into it until the next one would not fit."""


def _searcher(needles: list[str], ci: bool):
    """``find(buf, start, end) -> bool``: a needle occurs in buf[start:end] (buf: a memoryview of
    a mapping)."""
    if len(needles) == 1 and not ci:
        import stringzilla as sz

        nd = needles[0].encode("ascii")
        Str = sz.Str

        def find(buf, start, end):
            return Str(buf).find(nd, start, end) >= 0

        return find
    rx = _rx(needles, ci)

    def find_rx(buf, start, end):
        return rx.search(buf, start, end) is not None

    return find_rx


def scan_files(names: list[str], needles: list[str], ci: bool, marks: list | None = None) -> list[bool]:
    """For each plain file (``.jsonl``/``.json``): whether it may hold a needle (True also when it
    cannot be read: the reader then says what is wrong), or, with `marks` (per file a compiled
    RE2 or None), that file's mark (a provider's truncation marker: searched in the same bytes,
    not read again). Files up to SMALL bytes are read back to back into one page-aligned buffer
    (an anonymous mapping) and each one's span searched there; larger ones are mapped and
    searched alone."""
    import mmap

    find_nd = _searcher(needles, ci)
    if marks is None or not any(m is not None for m in marks):
        def find(buf, start, end, k):
            return find_nd(buf, start, end)
    else:
        import stringzilla as sz

        Str = sz.Str

        def find(buf, start, end, k):
            if find_nd(buf, start, end):
                return True
            mk = marks[k]
            if mk is None:
                return False
            rx, lits = mk
            if lits is not None and all(Str(buf).find(x, start, end) < 0 for x in lits):
                return False  # none of the marker's literals: no match of it
            return rx.search(buf, start, end) is not None
    out = [True] * len(names)
    buf = mmap.mmap(-1, BUF)
    mv = memoryview(buf)
    spans: list[tuple[int, int, int]] = []  # (start, end, index in names)
    fill = 0
    flags = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0)
    try:
        for i, name in enumerate(names):
            try:
                fd = os.open(name, flags)
            except OSError:
                continue  # True: the reader says what is wrong
            try:
                size = os.fstat(fd).st_size
                if size > SMALL:
                    out[i] = _mapped_may_match(fd, find, i)
                    continue
                if fill + size + 1 > BUF:
                    for st, en, k in spans:
                        out[k] = find(mv, st, en, k)
                    spans.clear()
                    fill = 0
                # one byte more than fstat said: a file that grew since is seen whole, alone
                got = os.readv(fd, [mv[fill:fill + size + 1]])
                if got > size:
                    out[i] = _mapped_may_match(fd, find, i)
                    continue
                spans.append((fill, fill + got, i))
                fill += got
            except OSError:
                out[i] = True
            finally:
                os.close(fd)
        for st, en, k in spans:
            out[k] = find(mv, st, en, k)
    finally:
        mv.release()
        buf.close()
    return out


def _mapped_may_match(fd: int, find, k: int) -> bool:
    import mmap

    if os.fstat(fd).st_size == 0:
        return False
    try:
        m = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):
        return True
    try:
        with memoryview(m) as v:
            return find(v, 0, len(m), k)
    finally:
        m.close()


def rule_out(pairs: list, needles: tuple[str, ...] | list[str] | None, ci: bool, kinds: frozenset[str]) -> list[bool]:
    """For each (provider, SessionRef): True when no file of the session can hold a needle, so it
    need not be parsed (the same verdict as :func:`may_match` per session, all files gated in one
    batch). A session of a provider without the guarantee, with no files, or with a file this
    prefilter does not read is never ruled out."""
    out = [False] * len(pairs)
    nd = session_needles(needles)
    if not nd:
        return out
    names: list[str] = []
    owner: list[int] = []
    marks: list = []
    zst: list[tuple[int, str]] = []
    by_rows: dict[int, tuple] = {}  # a reader that gates its database rows itself (rule_out_rows)
    for j, (prov, ref) in enumerate(pairs):
        if callable(getattr(prov, "rule_out_rows", None)):
            by_rows.setdefault(id(prov), (prov, []))[1].append(j)
            continue
        if not ref.paths or not safe_for(prov, kinds):
            continue
        mine: list[str] = []
        ok = True
        for p in ref.paths:
            name = os.fspath(p)
            if name.endswith((".jsonl", ".json")):
                mine.append(name)
            elif name.endswith(".zst"):
                zst.append((j, name))
            else:
                ok = False
                break
        if not ok:
            zst = [z for z in zst if z[0] != j]
            continue
        out[j] = True
        names += mine
        owner += [j] * len(mine)
        mark = getattr(type(prov), "truncation_marker", None) if MARKS_IN_BATCH else None
        lit = getattr(type(prov), "truncation_literal", None) if MARK_LITERALS else None
        marks += [(_marker_rx(mark), lit) if mark else None] * len(mine)
    for j, hit in zip(owner, scan_files(names, nd, ci, marks)):
        if hit:
            out[j] = False
    for j, name in zst:
        if not out[j]:
            continue
        mark = getattr(type(pairs[j][0]), "truncation_marker", None) if MARKS_IN_BATCH else None
        if mark:  # needles and the marker in one decompression
            lit = getattr(type(pairs[j][0]), "truncation_literal", None) if MARK_LITERALS else None
            if _zst_may_match(name, nd, ci, mark, lit):
                out[j] = False
        elif may_match([Path(name)], nd, ci):
            out[j] = False
    for prov, idx in by_rows.values():
        try:
            got = prov.rule_out_rows([pairs[j][1] for j in idx], nd, ci, kinds)
        except Exception:  # the gate only saves time: these sessions are read
            continue
        for j, ruled in zip(idx, got):
            out[j] = ruled is True
    for j, (prov, ref) in enumerate(pairs):
        mark = getattr(type(prov), "truncation_marker", None)
        if not (out[j] and mark):
            continue
        # searched for the marker with the needles (plain files in the batch, compressed ones above)
        left = [p for p in ref.paths if not os.fspath(p).endswith((".jsonl", ".json", ".zst"))] if MARKS_IN_BATCH \
            else ref.paths
        if left and may_match(left, [], False, rx=_marker_rx(mark), keep=MARK_KEEP):
            out[j] = False  # parsed after all: its cut records are counted (Provider.truncation_marker)
    return out


MARK_LITERALS = True
"""A plain file is searched with a truncation marker's expression only when it holds the
provider's ``truncation_literal`` bytes (off: every file is)."""
MARKS_IN_BATCH = True
"""A provider's truncation marker is searched with the needles (in the batch's bytes of a plain
file, in the same decompression of a .zst): each file is read once; off, every file of a session
still ruled out is read (and decompressed) again for it."""


def _zst_may_match(name: str, needles: list[str], ci: bool, mark: bytes, lits: tuple | None) -> bool:
    """``may_match`` of a compressed file for the needles or a truncation marker, in one
    decompression (the marker's expression only on chunks holding its literal, when known): False
    only when neither occurs."""
    rx, mrx = _rx(needles, ci), _marker_rx(mark)
    keep = max(MARK_KEEP, max(len(n) for n in needles) - 1)
    try:
        import zstandard

        with open(name, "rb") as f, zstandard.ZstdDecompressor().stream_reader(f) as r:
            tail = b""
            while True:
                chunk = r.read(CHUNK)
                if not chunk:
                    break
                buf = tail + chunk
                if rx.search(buf) is not None:
                    return True
                if (lits is None or any(x in buf for x in lits)) and mrx.search(buf) is not None:
                    return True
                tail = chunk[-keep:]
    except Exception:  # unreadable or corrupt: let the reader say what is wrong
        return True
    return False


MARK_KEEP = 256
"""Bytes carried across compressed chunks when looking for a truncation marker (longer than any)."""


def _marker_rx(mark: bytes):
    rx = _RX.get(("marker", mark))
    if rx is None:
        import re2

        opts = re2.Options()
        opts.log_errors = False
        rx = _RX[("marker", mark)] = re2.compile(mark, opts)
    return rx
