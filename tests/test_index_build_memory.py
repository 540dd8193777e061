"""The ranked index reads each session as a stream: `turns_of` takes the reader's records as an
iterable and holds only the turns' text, never every record (the first `index update` over one
500 MB transcript peaked at 660 MB, 460 MB of it the session's records held in a list; now 205 MB,
the lane build's peak). Held here: over every session of every agent in examples/home (real-client
data), the turns made from a one-shot iterator equal those made from the list, turn for turn."""

from __future__ import annotations

from pathlib import Path

from sessionsift.providers.base import ReadReport
from sessionsift.providers.scope import RootRequest, select, survey
from sessionsift.search.rank import turns_of

HOME = Path(__file__).resolve().parents[1] / "examples" / "home"


def test_turns_from_a_stream_equal_turns_from_the_list_for_every_agent():
    sel = select(survey(RootRequest(roots={}, home=HOME)), [])
    provs = {e.name: e.provider for e in sel.survey.entries if e.provider is not None}
    seen: dict[str, int] = {}
    for ref in sel.session_refs():
        prov = provs[ref.provider]
        listed = turns_of(list(prov.read(ref, ReadReport())))
        streamed = turns_of(iter(prov.read(ref, ReadReport())))
        assert streamed == listed, (ref.provider, ref.session_id)
        seen[ref.provider] = seen.get(ref.provider, 0) + len(listed)
    assert sorted(seen) == sorted(provs) and min(seen.values()) > 0, seen


def test_the_full_text_build_releases_the_mapped_pages_it_has_read(tmp_path, monkeypatch):
    """A mapping's pages count in the resident size until released: the full-text build of one
    large transcript held every page it had read. Data: a real Claude Code transcript
    (examples/claude-home) repeated to 12 MB; the texts read with the pages released behind are
    the texts read without, and pages were released (before: no release, 0 calls)."""
    from sessionsift.index import fulltext
    from sessionsift.providers import load
    from sessionsift.read import lines as L

    src = max((HOME.parent / "claude-home" / "projects").glob("*/*.jsonl"), key=lambda p: p.stat().st_size)
    data = src.read_bytes()
    big = tmp_path / "big.jsonl"
    big.write_bytes(data * (12 * (1 << 20) // len(data) + 1))
    line_text = load("claude-code").line_text
    released: list[tuple[int, int]] = []
    real = L.release
    monkeypatch.setattr(L, "release", lambda buf, lo, hi: released.append((lo, hi)) or real(buf, lo, hi))
    with L.open_map(big) as m:
        got = list(fulltext.lane_texts(m.buf, 0, len(m.buf), line_text))
    want = []
    for ln in big.read_bytes().split(b"\n"):
        o = L.parse_line(ln) if ln else None
        t = line_text(o) if isinstance(o, dict) else None
        if t:
            want.append(t)
    assert got == want and len(got) > 1000
    assert len(released) >= 2 and released[0][0] == 0  # released from the start, batch by batch
