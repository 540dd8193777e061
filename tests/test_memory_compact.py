"""Bounded memory (issue 16, review finding 14) must not change an answer. The compact forms and
the page releases are held equal to the plain reading on every real-client lane (examples/, both
client versions), the crash artefacts (examples/crash) and damaged copies of the real lanes
(zero-filled, malformed and torn lines made here from the real bytes: no client writes them on
purpose, a crash does). Nothing here measures memory (benchmarks/memory.py prints that)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sessionsift.providers.claude.discover import Lane
from sessionsift.providers.claude.model import lane as LM
from sessionsift.read import lines as L

REPO = Path(__file__).resolve().parent.parent
EX = REPO / "examples"


def real_lanes() -> list[Path]:
    out = sorted((EX / "claude-home" / "projects").rglob("*.jsonl"))
    out += sorted((EX / "newest-client").rglob("claude-home/projects/**/*.jsonl"))
    return [p for p in out if p.name != "journal.jsonl"]


CRASH = sorted((EX / "crash").glob("*.jsonl"))


def damaged(src: Path, dest: Path) -> list[Path]:
    """Three damaged copies of a real lane: a record zero-filled, a record cut in half (malformed),
    the final record torn."""
    data = src.read_bytes()
    lines = data.split(b"\n")
    mid = len(lines) // 2
    out = []
    z = list(lines)
    z[mid] = b"\x00" * len(z[mid])
    m = list(lines)
    m[mid] = m[mid][: len(m[mid]) // 2]
    for name, body in (("zero", b"\n".join(z)), ("malformed", b"\n".join(m)),
                       ("torn", data.rstrip(b"\n")[:-7])):
        p = dest / f"{src.stem}-{name}.jsonl"
        p.write_bytes(body)
        out.append(p)
    return out


def _lane(p: Path) -> Lane:
    return Lane(p, p.stem, "main", "main")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> list[Path]:
    lanes = real_lanes()
    assert len(lanes) >= 10, "the committed real-client corpus is missing"
    d = tmp_path_factory.mktemp("damaged")
    out = lanes + CRASH
    for p in lanes:
        out += damaged(p, d)
    return out


def test_load_many_releasing_pages_reads_every_record_unchanged(corpus, monkeypatch):
    """The pages read are released behind the reader every page (instead of every 4 MB here, so
    every lane of the corpus releases): each record re-read equals a plain read at its offset."""
    monkeypatch.setattr(L, "BATCH_BYTES", L.PAGE)
    released = []
    real = L.release
    monkeypatch.setattr(L, "release", lambda buf, lo, hi: (released.append((lo, hi)), real(buf, lo, hi)))
    for p in corpus:
        idx = LM.LaneIndex.build(_lane(p))
        got = list(idx.load_many(idx.entries))
        assert [e.no for e, _ in got] == [e.no for e in idx.entries]
        for e, obj in got:
            assert obj == LM.load_at(p, e.offset, e.length), (p, e.no)
    assert any(hi - lo >= L.PAGE for lo, hi in released)  # pages were let go mid-reading


def test_release_keeps_the_mapping_readable(tmp_path):
    """A released range reads back the same bytes (the pages come back from the file)."""
    p = tmp_path / "f.jsonl"
    src = real_lanes()[0].read_bytes()
    p.write_bytes(src * (1 + 3 * L.PAGE // max(1, len(src))))
    with L.open_map(p) as m:
        before = bytes(m.buf[:])
        L.release(m.buf, 0, len(m.buf))
        L.release(m.buf, 5, len(m.buf) - 5)
        assert bytes(m.buf[:]) == before
    L.release(b"abc", 0, 3)  # bytes: nothing to release


def _todo_reference(path: Path):
    """The todo reading before one-pass error lookup: every call id looked for over the whole file."""
    from sessionsift.providers.claude.live import todos as T
    from sessionsift.providers.claude.model import record as R

    st = T.todo_state(path)  # calls, line, items: unchanged code; errors re-derived the old way
    data = path.read_bytes()
    ids = set()
    for raw in data.split(b"\n"):
        if T.NEEDLE in raw:
            o = L.parse_line(raw)
            if o is not None and o.get("type") == "assistant":
                ids |= {b["id"] for b in R.tool_uses(o) if b.get("name") == "TodoWrite" and isinstance(b.get("id"), str)}
    errors = set()
    for cid in ids:
        j = data.find(cid.encode())
        while j >= 0:
            s = data.rfind(b"\n", 0, j) + 1
            e = data.find(b"\n", j)
            e = len(data) if e < 0 else e
            o = L.parse_line(data[s:e])
            if o is not None and o.get("type") == "user" and any(
                    b.get("tool_use_id") == cid and b.get("is_error") is True for b in R.tool_results(o)):
                errors.add(cid)
            j = data.find(cid.encode(), e)
    return st, len(errors)


def test_todo_errors_in_one_pass_equal_the_per_id_search(corpus, tmp_path, monkeypatch):
    """status's todo line: failed TodoWrite calls found in one pass over the `is_error` lines equal
    a search of every call id over the whole file; with windows of one page (every find releases).
    The real todos session's two TodoWrite calls both failed (client 2.1.258); a copy where they
    succeed is hand-made (the results' is_error turned false: no offline run was kept where the
    same calls pass)."""
    from sessionsift.providers.claude.live import todos as T

    monkeypatch.setattr(L, "SCAN_WINDOW", L.PAGE)
    src = EX / "claude-home" / "projects" / "-tmp-ssift-rc-todos-work" / "934337bf-5048-5090-a52a-998dd6ed05bb.jsonl"
    ok = tmp_path / "todo-ok.jsonl"
    ok.write_bytes(src.read_bytes().replace(b'"is_error":true', b'"is_error":false'))
    for p in [*corpus, ok]:
        st, n_err = _todo_reference(p)
        assert st.failed == n_err, p
    assert T.todo_state(src).failed == 2 and T.todo_state(src).line is None
    good = T.todo_state(ok)
    assert good.failed == 0 and good.line is not None and good.items


def test_status_candidate_lines_in_windows_equal_one_pass(corpus, monkeypatch):
    """status's background scan: candidate lines, their numbers and the newline count, found in
    line-aligned windows of about one page (each released once scanned), equal one pass over
    the whole region; so does a tool_result found by id across windows."""
    from sessionsift.providers.claude.live import background as BG
    from sessionsift.providers.claude.live import prefilter as P

    def scan(p: Path):
        with L.open_map(p) as m:
            end = m.buf.rfind(b"\n") + 1
            got = P.candidate_lines(m.buf, BG._PATS, 0, end)
            ids = [x.group(1) for x in __import__("re").finditer(rb'"tool_use_id":"([^"]+)"', bytes(m.buf[:end]))]
            found = [P.find_id(m.buf, b'"tool_use_id":"' + i + b'"', 0, end) for i in ids[:20]]
        return [list(a) for a in got[:3]], got[3], found

    monkeypatch.setattr(P, "RESULT_WINDOW", 64)
    whole = [scan(p) for p in corpus]
    monkeypatch.setattr(P, "WINDOW", L.PAGE)
    assert [scan(p) for p in corpus] == whole
    assert sum(len(w[0][0]) for w in whole) > 20 and any(w[2] for w in whole)


def test_search_spans_in_windows_equal_one_pass(corpus, monkeypatch):
    """search's candidate lines on a mapping, searched one page at a time (each released), equal
    one search over the whole file: several needles, case-sensitive and not."""
    from sessionsift.read import needles as PF

    cases = [(['"type":"user"'], False), (['tool_use_id', '"Bash"'], False), (['HELLO'], True), (['zzqq'], False)]

    def spans(p: Path):
        with L.open_map(p) as m:
            return [list(PF.candidate_spans(m.buf, n, ci)) for n, ci in cases]

    whole = [spans(p) for p in corpus if p.stat().st_size]
    monkeypatch.setattr(PF, "SCAN_WINDOW", L.PAGE)
    assert [spans(p) for p in corpus if p.stat().st_size] == whole
    assert sum(len(w[0]) for w in whole) > 100 and sum(len(w[2]) for w in whole) > 0
