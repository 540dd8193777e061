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


# -- readers: one-pass / fast reading against the plain reading --------------------------------

def _rec_tuple(r):
    from sessionsift.providers.base import Record

    return tuple(getattr(r, f) for f in Record.__slots__)


def _report_tuple(rep):
    return (rep.files, rep.bytes, rep.records, list(rep.malformed_lines), rep.zero_filled_lines,
            rep.invalid_utf8_lines, rep.torn_tail_bytes, dict(rep.unknown_kinds), rep.duplicates,
            [(p.path, p.why) for p in rep.problems], list(rep.notes))


def _read_all(prov, refs, raw=False):
    from sessionsift.providers.base import ReadReport

    out = []
    for ref in refs:
        rep = ReadReport()
        recs = [_rec_tuple(r) for r in prov.read(ref, rep, raw=raw)]
        out.append((ref.session_id, recs, _report_tuple(rep)))
    return out


def _damaged_homes(tmp_path, src_root, pattern: str):
    """(name, root) for the sample root itself and, per damage kind, a copy of it in which every
    file matching `pattern` carries that damage."""
    import shutil

    from tests.fastpath_corpus import damages

    yield "original", src_root
    files = sorted(p for p in src_root.rglob(pattern) if p.is_file())
    kinds = [n for n, _ in damages(files[0].read_bytes(), 0)] if files else []
    for j, kind in enumerate(kinds):
        root = tmp_path / f"d{j}"
        shutil.copytree(src_root, root, symlinks=True)
        for i, p in enumerate(sorted(q for q in root.rglob(pattern) if q.is_file())):
            got = dict(damages(p.read_bytes(), i))
            if kind in got:
                p.write_bytes(got[kind])
        yield kind, root


_BOOKKEEPING_EDITS = {
    # the client's bookkeeping line at the edges of the reader's byte gate (hand-made: no client
    # writes these; each must read as the plain parse reads it)
    "invalid utf-8 in the value": lambda ln: ln.replace(b'":"', b'":"\xff\xfe', 1),
    "escaped quote in the value": lambda ln: ln.replace(b'":"', b'":"a\\"b', 1),
    "control character in the value": lambda ln: ln.replace(b'":"', b'":"\x01', 1),
    "trailing space": lambda ln: ln + b" ",
    "nul inside": lambda ln: ln[:5] + b"\x00" + ln[5:],
    "a second key": lambda ln: ln[:-2] + b',"summary":"s"}}',
    "cut short": lambda ln: ln[:-1],
    "as the unterminated last line": None,
}


def _bookkeeping_variants(data: bytes):
    lines = data.split(b"\n")
    marks = [i for i, ln in enumerate(lines) if ln.startswith(b'{"$set":{"lastUpdated":"')]
    for name, edit in _BOOKKEEPING_EDITS.items():
        if not marks:
            return
        if edit is None:
            yield name, data.rstrip(b"\n") + b"\n" + lines[marks[0]]
            continue
        out = list(lines)
        for i in marks[::2]:
            out[i] = edit(out[i])
        yield name, b"\n".join(out)


def test_gemini_one_pass_reads_what_two_passes_read(tmp_path, monkeypatch):
    """The one-pass reading and the bookkeeping-line gate (each on and off) read what the plain
    two-pass, parse-every-line reading reads, on the samples, their damaged copies and copies
    whose bookkeeping lines are edited at the gate's edges."""
    from sessionsift.providers import get
    from sessionsift.providers.gemini import read as GR
    from tests.fastpath_corpus import EXAMPLES

    prov = get("gemini-cli")
    n = gated = 0
    homes = []
    for src in (EXAMPLES / "gemini-home", EXAMPLES / "home" / ".gemini"):
        homes += list(_damaged_homes(tmp_path / src.parent.name, src, "session-*.json*"))
    src = EXAMPLES / "gemini-home"
    for j, (what, _e) in enumerate(_BOOKKEEPING_EDITS.items()):
        import shutil

        root = tmp_path / f"bk{j}"
        shutil.copytree(src, root, symlinks=True)
        for p in root.rglob("session-*.jsonl"):
            got = dict(_bookkeeping_variants(p.read_bytes()))
            if what in got:
                p.write_bytes(got[what])
        homes.append((what, root))
    for kind, root in homes:
        refs = prov.discover(prov.locate(explicit=str(root))).sessions
        assert refs, kind
        for raw in (False, True):
            monkeypatch.setattr(GR, "ONE_PASS_BYTES", -1)
            monkeypatch.setattr(GR, "GATE_BOOKKEEPING", False)
            plain = _read_all(prov, refs, raw)
            for one_pass, gate in ((1 << 20, True), (1 << 20, False), (-1, True)):
                monkeypatch.setattr(GR, "ONE_PASS_BYTES", one_pass)
                monkeypatch.setattr(GR, "GATE_BOOKKEEPING", gate)
                fast = _read_all(prov, refs, raw)
                assert fast == plain, (kind, raw, one_pass, gate)
            n += sum(len(x[1]) for x in plain)
    for p in (EXAMPLES / "gemini-home").rglob("session-*.jsonl"):
        gated += sum(1 for ln in p.read_bytes().split(b"\n") if GR._BOOKKEEPING.fullmatch(ln))
    assert n > 1000 and gated > 20  # the samples hold lines the gate skips


def test_gemini_norm_equals_the_regex_it_replaced():
    """_norm (str.split) = the former ``_NORM.sub(" ", t).strip()``: the pattern matches exactly the
    characters str.isspace() holds (plus ``*``), and both agree on every pair of them around words,
    on all code points in one string and on every text of the Gemini samples."""
    import sys

    from sessionsift.providers.gemini.read import _NORM, _norm

    def old(t):
        return _NORM.sub(" ", t or "").strip()

    every = "".join(chr(c) for c in range(sys.maxunicode + 1) if not 0xD800 <= c < 0xE000)
    spaces = "".join(_NORM.findall(every))
    assert spaces == "".join(c for c in every if c.isspace() or c == "*")  # the same characters
    texts = [None, "", "*", " ** a ** ", "**Subject** body\n\n more\t*", every, every[::-1]]
    texts += [f"{a}x{b}*{a}y{b}" for a in spaces for b in spaces]
    from tests.fastpath_corpus import EXAMPLES

    for p in (EXAMPLES / "gemini-home").rglob("session-*.json*"):
        texts += re.findall(r'"text":\s*"((?:[^"\\]|\\.)*)"', p.read_text("utf-8", "replace"))
    assert len(texts) > 500
    diff = [t for t in texts if _norm(t) != old(t)]
    assert diff == []


def _span_plain(records):
    """list's former first/last instant fold (each comparison parsing both sides again)."""
    from sessionsift.timefmt import parse_ts

    def _earlier(a, b):
        da, db = parse_ts(a), parse_ts(b)
        return da is not None and (db is None or da < db)

    first = last = None
    for r in records:
        if r.copy_of is not None or not r.instant:
            continue
        if first is None or _earlier(r.instant, first):
            first = r.instant
        if last is None or _earlier(last, r.instant):
            last = r.instant
    return first, last


def test_list_span_parses_each_instant_once_with_the_same_answer():
    """summarize's first/last instants = the former fold, on every sample session of the readers
    in examples/ and on hand-made instants no client writes (unparseable, offsets, naive, equal
    instants spelled differently: a reader passes disk strings through, so these can occur)."""
    from dataclasses import replace

    from sessionsift.providers import get
    from sessionsift.providers.base import ReadReport, Record, SessionRef
    from sessionsift.providers.base import Provider
    from tests.fastpath_corpus import EXAMPLES

    def summarize(prov, ref):  # the default reading every reader without a bounded one takes
        return Provider.summarize(prov, ref)

    class Fixed:
        def __init__(self, recs):
            self.recs = recs

        def read(self, ref, report, raw=False):
            return iter(self.recs)

    homes = {"gemini-cli": [EXAMPLES / "gemini-home"], "codex": [EXAMPLES / "codex-home"],
             "opencode": [EXAMPLES / "opencode-home"], "crush": [EXAMPLES / "crush-home"]}
    seen = 0
    for name, roots in homes.items():
        prov = get(name)
        for root in roots:
            if not root.exists():
                continue
            for ref in prov.discover(prov.locate(explicit=str(root))).sessions:
                recs = list(prov.read(ref, ReadReport()))
                row = summarize(Fixed(recs), replace(ref, first_at=None, last_at=None))
                assert (row.first_at, row.last_at) == _span_plain(recs), (name, ref.session_id)
                seen += sum(1 for r in recs if r.instant)
    assert seen > 500
    odd = [None, "", "garbage", "2026-12-01T10:00:00Z", "2026-12-01T10:00:00.000+00:00", "2026-12-01T11:00:00+02:00",
           "2026-12-01T09:00:00", "not a time", "2026-12-01T10:00:00.5Z", "2025-01-01T00:00:00Z", "2027-01-01T00:00:00Z",
           "garbage2"]
    import itertools
    import random

    rng = random.Random(7)
    ref = SessionRef(provider="x", session_id="s", paths=[])
    cases = [list(p) for p in itertools.permutations(odd[:5])] + [list(p) for p in itertools.permutations(odd[3:7])]
    cases += [rng.sample(odd, rng.randint(1, len(odd))) for _ in range(600)]
    for seq in cases:
        recs = [Record("x", "s", f"L{i}", "user", "message", "n", instant=t) for i, t in enumerate(seq)]
        row = summarize(Fixed(recs), ref)
        assert (row.first_at, row.last_at) == _span_plain(recs), seq


def test_truncation_marks_searched_in_the_batch_rule_out_what_a_second_read_rules_out(tmp_path, monkeypatch):
    """prefilter.rule_out with Codex's truncation marker searched in the batch's bytes (one read of
    a plain file) = the former second read of every still-ruled-out session's files, on the real
    Codex samples and copies with the marker planted (hand-made: raw and \\u-escaped, in plain and
    .zst rollouts, one per session at most) and for words found in some, all and no sessions."""
    import shutil

    import zstandard

    from sessionsift.providers import get
    from sessionsift.search import gate as PF
    from sessionsift.providers.claude.kinds import DEFAULT_KINDS
    from tests.fastpath_corpus import EXAMPLES

    prov = get("codex")
    root = tmp_path / "codex"
    shutil.copytree(EXAMPLES / "codex-home", root, symlinks=True)
    files = sorted(p for p in root.rglob("rollout-*.jsonl*") if p.is_file())
    for i, p in enumerate(files):
        if i % 3 == 2:
            continue
        mark = "\u202677224 tokens truncated\u2026".encode() if i % 2 else b"\\u20263 chars truncated\\u2026"
        raw = p.read_bytes()
        zst = p.name.endswith(".zst")
        data = zstandard.ZstdDecompressor().stream_reader(raw).read() if zst else raw
        at = data.find(b'"output":"')
        if at < 0:
            continue
        data = data[:at + 10] + mark + data[at + 10:]
        p.write_bytes(zstandard.ZstdCompressor().compress(data) if zst else data)
    homes = [EXAMPLES / "codex-home", root]
    if (EXAMPLES / "home" / ".codex").exists():
        homes.append(EXAMPLES / "home" / ".codex")
    n = flips = 0
    for home in homes:
        refs = prov.discover(prov.locate(explicit=str(home))).sessions
        pairs = [(prov, r) for r in refs]
        assert pairs
        for word, ci in [(w, ci) for w in ("hello", "exit", "P1]", "zqx-nowhere-7731", "rollout", "HELLO")
                         for ci in (False, True)]:
            needles = [word]
            monkeypatch.setattr(PF, "MARKS_IN_BATCH", False)
            plain = PF.rule_out(pairs, needles, ci, DEFAULT_KINDS)
            for lits in (False, True):
                monkeypatch.setattr(PF, "MARKS_IN_BATCH", True)
                monkeypatch.setattr(PF, "MARK_LITERALS", lits)
                fast = PF.rule_out(pairs, needles, ci, DEFAULT_KINDS)
                assert fast == plain, (home, word, ci, lits)
            n += len(fast)
            if home == root and word == "zqx-nowhere-7731":
                flips = len(fast) - sum(fast)  # sessions kept for their planted marker
    assert n > 50 and flips > 0


def test_the_truncation_literal_is_in_every_match_of_the_marker():
    """One of Codex's truncation_literal bytes is in every match of its marker: the marker's
    alternatives spelled out (hand-made: both ellipsis spellings, both units, digit runs)."""
    import re

    from sessionsift.providers.codex import Codex

    lit, rx = Codex.truncation_literal, re.compile(Codex.truncation_marker)
    samples = [a + d + b" " + u + b" truncated" + z for a in ("\u2026".encode(), b"\\u2026")
               for z in ("\u2026".encode(), b"\\u2026") for u in (b"tokens", b"chars") for d in (b"0", b"77224")]
    matched = [m.group(0) for s in samples for m in [rx.search(s)] if m]
    assert len(matched) == len(samples)
    assert all(any(x in m for x in lit) for m in matched)
    assert set(re.findall(rb"[a-z]+", Codex.truncation_marker)) <= {b"u", b"tokens", b"chars", b"truncated"}
