"""The session-level byte prefilter of the generic search is sound for the providers it trusts
(Provider.text_in_bytes, search/gate.py): on their REAL-client samples (examples/home: Claude Code,
Codex CLI, Gemini CLI), every needle-safe fragment of every record's matchable text occurs in the
bytes of its session's own files (decompressed for .zst), so a session whose files hold no needle
holds no match; and searches with and without the prefilter give the same hits."""
from __future__ import annotations

from pathlib import Path

import pytest

from sessionsift.providers import get
from sessionsift.providers.base import ReadReport
from sessionsift.search.gate import _STRUCTURAL, may_match, session_needles, text_in_bytes

TEXT_IN_BYTES = text_in_bytes()
from sessionsift.providers.claude.kinds import DEFAULT_KINDS
from sessionsift.search.records import SharedQuery, record_text, search_records
from sessionsift.read.pattern import compile_regex
from sessionsift.read.needles import needles_for, safe_fragments

REPO = Path(__file__).resolve().parents[1]
HOME = REPO / "examples" / "home"


def _sessions(name: str):
    prov = get(name)
    if prov is None:
        pytest.skip(f"no reader for {name}")
    d = prov.discover(prov.locate(home=str(HOME)))
    if not d.sessions:
        pytest.skip(f"no {name} sample under examples/home")
    return prov, d.sessions


def _bytes(paths) -> bytes:
    out = b""
    for p in paths:
        data = Path(p).read_bytes()
        if str(p).endswith(".zst"):
            import zstandard

            with zstandard.ZstdDecompressor().stream_reader(data) as r:
                data = r.read()
        out += data + b"\n"
    return out


def _pieces(text: str, ci: bool = False) -> list[str]:
    return [p for f in safe_fragments(text, ci) for p in _STRUCTURAL.split(f) if len(p) >= 3]


@pytest.mark.parametrize("name", sorted(TEXT_IN_BYTES))
def test_every_fragment_of_matchable_text_is_in_the_sessions_bytes(name):
    prov, refs = _sessions(name)
    checked = 0
    untrusted = TEXT_IN_BYTES[name]
    for ref in refs:
        data = _bytes(ref.paths)
        low = data.lower()
        for r in prov.read(ref, ReadReport()):
            if r.kind in untrusted:
                continue
            for piece in _pieces(record_text(r)):
                assert piece.encode() in data, (ref.session_id, r.locator, piece)
                checked += 1
            for piece in _pieces(record_text(r), True):
                assert piece.lower().encode() in low, (ref.session_id, r.locator, piece)
    assert checked > 100


def test_needles_are_cut_at_json_structure():
    assert session_needles(["yield_time_ms:10000"]) == ["yield_time_ms"]
    assert session_needles(["a:b"]) is None and session_needles(None) is None


@pytest.mark.parametrize("name", sorted(set(TEXT_IN_BYTES) - {"claude-code"}))
def test_the_prefilter_changes_speed_never_hits(name):
    prov, refs = _sessions(name)
    # words that occur in some sessions and not others, plus one that occurs nowhere
    words = ["P1]", "hello", "exit", "notes.md", "zqx-nowhere-7731"]
    for w in words:
        rx = compile_regex((w,), False, True)
        needles, ci = needles_for((w,), False, True)
        base = SharedQuery(regex=rx, kinds=DEFAULT_KINDS)
        fast = SharedQuery(regex=rx, kinds=base.kinds, needles=tuple(needles or ()), needles_ci=ci)
        outs_a, sm_a = search_records([(prov, r) for r in refs], base)
        outs_b, sm_b = search_records([(prov, r) for r in refs], fast)
        assert [(o.ref.session_id, [h.record.locator for h in o.hits]) for o in outs_a if o.hit_count] == \
               [(o.ref.session_id, [h.record.locator for h in o.hits]) for o in outs_b if o.hit_count], w
        assert sm_a.hits == sm_b.hits
        nd = session_needles(needles)
        ruled_out = [r for r in refs if nd and not may_match(list(r.paths), nd, ci)]
        assert sm_b.sessions_prefiltered == len(ruled_out), w
    assert sm_b.sessions_prefiltered == len(refs)  # the word that occurs nowhere: nothing parsed
    # a selection holding a kind whose text the reader composes is never prefiltered
    if TEXT_IN_BYTES[name]:
        q = SharedQuery(regex=rx, kinds=DEFAULT_KINDS | TEXT_IN_BYTES[name], needles=tuple(needles), needles_ci=ci)
        assert search_records([(prov, r) for r in refs], q)[1].sessions_prefiltered == 0
