"""The fast paths of the providers layer give the plain paths' answers, on every real-client sample
corpus in examples/ and on damaged copies of its files (tests/fastpath_corpus.py: NUL runs, torn
tails, malformed lines, invalid UTF-8).

Each test runs the same question twice -- once with the fast path, once with it switched off (the
code it replaced, kept as the fallback or written out here) -- and compares everything the answer
holds."""

from __future__ import annotations

import re

import pytest

from sessionsift.read import lines as L
from tests.fastpath_corpus import damages, sample_files

FILES = [p for p in sample_files() if not p.name.endswith(".zst")]


def _variants():
    for i, p in enumerate(FILES):
        data = p.read_bytes()
        yield p.name, "original", data
        for name, d in damages(data, i):
            yield p.name, name, d


VARIANTS = list(_variants())


def _frames(path, stats):
    return [(ln.no, ln.offset, ln.raw) for ln in L.iter_lines(path, stats=stats)]


def _stats(st: L.ReadStats):
    return (st.files, st.bytes, st.lines, st.torn_tail_bytes, st.zero_filled_lines)


def test_whole_read_frames_like_the_mapping(tmp_path, monkeypatch):
    """iter_lines reads a small file with one call; a mapping (READ_WHOLE=-1) frames it the same."""
    assert VARIANTS
    for k, (name, what, data) in enumerate(VARIANTS):
        p = tmp_path / f"{k}.jsonl"
        p.write_bytes(data)
        for start in (0, min(len(data), 7)):
            fast_st, plain_st = L.ReadStats(), L.ReadStats()
            fast = [(ln.no, ln.offset, ln.raw) for ln in L.iter_lines(p, start=start, stats=fast_st)]
            monkeypatch.setattr(L, "READ_WHOLE", -1)
            plain = [(ln.no, ln.offset, ln.raw) for ln in L.iter_lines(p, start=start, stats=plain_st)]
            monkeypatch.setattr(L, "READ_WHOLE", 1 << 20)
            assert fast == plain, (name, what, start)
            assert _stats(fast_st) == _stats(plain_st), (name, what, start)


def _last_forward(rx, buf):
    """The Gemini peek's former reading of the last value: the last match of a forward scan."""
    from sessionsift.providers.gemini.discover import _unescape

    v = None
    for m in rx.finditer(buf):
        v = m.group(1)
    return _unescape(v) if v is not None else None


def test_gemini_last_value_found_backwards_equals_the_forward_scan():
    from sessionsift.providers.gemini.discover import _RE, _last

    seen = 0
    for name, what, data in VARIANTS:
        if not (name.startswith("session-") or "gemini" in name):
            continue
        for key in ("lastUpdated", "timestamp", "sessionId"):
            rx = _RE[key]
            for buf in (data, data[len(data) // 3:]):
                assert _last(rx, buf) == _last_forward(rx, buf), (name, what, key)
                seen += 1
    assert seen > 100


def test_codex_peek_reads_what_head_line_and_tail_lines_read(tmp_path):
    """One read for discovery's head and tail (plain and zstd) = the two separate readings."""
    import zstandard

    from sessionsift.providers.codex import files as rf

    n = 0
    for k, (name, what, data) in enumerate(VARIANTS):
        if not name.startswith("rollout-"):
            continue
        for comp in (False, True):
            p = tmp_path / f"rollout-{k}.jsonl" if not comp else tmp_path / f"rollout-{k}.jsonl.zst"
            p.write_bytes(zstandard.ZstdCompressor().compress(data) if comp else data)
            pk = rf.peek(p)
            assert pk is not None
            assert pk.size == p.stat().st_size
            assert pk.head == rf.head_line(p), (name, what, comp)
            assert pk.tail == rf.tail_lines(p), (name, what, comp)
            n += 1
    assert n > 20


@pytest.mark.parametrize("size", [0, 1, 5, 100, 70000, 140000])
def test_codex_tail_windows_on_long_files(tmp_path, size):
    """Files around the 64 KiB window of tail_lines (several lines per window, blank lines)."""
    from sessionsift.providers.codex import files as rf

    body = b"".join(b'{"timestamp":"t%d","type":"x","payload":{}}\n' % i + (b"\n" if i % 7 == 0 else b"")
                    for i in range(size // 40 + 1))[:size]
    p = tmp_path / "rollout-x.jsonl"
    p.write_bytes(body)
    if size <= rf.PEEK_WHOLE:
        pk = rf.peek(p)
        assert pk.head == rf.head_line(p)
        assert pk.tail == rf.tail_lines(p)
        assert rf._tail_of(body, 4, 1 << 10) == _tail_plain(body, 4, 1 << 10)


def _tail_plain(data: bytes, want: int, window: int) -> list[bytes]:
    """tail_lines' reading written out over bytes (backwards windows, then the last pieces)."""
    pos, buf = len(data), b""
    while pos > 0:
        step = min(window, pos)
        pos -= step
        buf = data[pos:pos + step] + buf
        if buf.count(b"\n") > want or pos == 0:
            break
    parts = buf.split(b"\n")
    if pos > 0:
        parts = parts[1:]
    return [p for p in parts if p.strip()][-want:]


def test_the_needle_regexes_are_plain_keys():
    """_last finds a key by its quoted name: the patterns must start with one."""
    from sessionsift.providers.gemini.discover import _RE

    for k, rx in _RE.items():
        assert re.match(rb'"[A-Za-z]+"', rx.pattern).group(0) == b'"' + k.encode() + b'"'
