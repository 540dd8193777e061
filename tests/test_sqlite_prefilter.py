"""The row-level prefilter of the database readers' sessions (Opencode.rule_out_rows and
Crush.rule_out_rows, used by search/gate.rule_out) is sound on the REAL-client samples
(opencode 1.18.33 in examples/opencode-home and examples/home; Crush in examples/crush-home and
examples/home): every needle-safe fragment of every record's matchable text (kinds outside
``meta``) is found by the same SQL in the rows its session is read from, so a session whose rows
hold no needle holds no match; searches with and without it give the same hits; a word found
nowhere rules every database session out, a case-insensitive or ``meta`` query none."""
from __future__ import annotations

from pathlib import Path

import pytest

from sessionsift.providers import get
from sessionsift.providers.base import ReadReport
from sessionsift.providers.claude.kinds import DEFAULT_KINDS
from sessionsift.search.gate import _STRUCTURAL, session_needles
from sessionsift.search.records import SharedQuery, record_text, search_records
from sessionsift.read.pattern import compile_regex
from sessionsift.read.needles import needles_for, safe_fragments

REPO = Path(__file__).resolve().parents[1]
HOMES = {
    "opencode": ("sqlite", [REPO / "examples" / "opencode-home", REPO / "examples" / "home" / ".local" / "share" / "opencode"]),
    "crush": ("crush.db", [REPO / "examples" / "crush-home", REPO / "examples" / "home" / ".local" / "share" / "crush"]),
}
NAMES = sorted(HOMES)


def _sessions(name: str = "opencode"):
    prov = get(name)
    store, homes = HOMES[name]
    out = []
    for h in homes:
        if h.exists():
            out += [r for r in prov.discover(prov.locate(explicit=str(h))).sessions if r.extra.get("store") == store]
    if not out:
        pytest.skip(f"no {name} database sample under examples/")
    return prov, out


def _pieces(text: str) -> set[str]:
    return {p for f in safe_fragments(text, False) for p in _STRUCTURAL.split(f) if len(p) >= 3}


@pytest.mark.parametrize("name", NAMES)
def test_every_fragment_of_matchable_text_is_found_in_the_sessions_rows(name):
    prov, refs = _sessions(name)
    assert _check_fragments(prov, refs) > 100


def test_parts_filed_under_another_session_or_no_message(tmp_path):
    """Hand-made (no client writes these; the reader reads such a part under its message's session
    AND, as an orphan, under the session its own row names): the gate finds the text under both."""
    import shutil
    import sqlite3

    prov, refs = _sessions()
    src = Path(refs[0].extra["db_path"])
    db = tmp_path / "opencode.db"
    shutil.copy(src, db)
    con = sqlite3.connect(db)
    sids = [r[0] for r in con.execute("SELECT id FROM session ORDER BY time_created, id")]
    parts = con.execute("SELECT p.id, m.session_id FROM part p JOIN message m ON m.id = p.message_id "
                        "WHERE p.data LIKE '%\"text\"%' ORDER BY p.id").fetchall()
    assert len(sids) > 2 and len(parts) > 4
    for k, (pid, owner) in enumerate(parts[:6]):
        other = next(s for s in sids if s != owner)
        if k % 2:
            con.execute("UPDATE part SET session_id = ? WHERE id = ?", (other, pid))
        else:
            con.execute("UPDATE part SET session_id = ?, message_id = 'msg_gone' WHERE id = ?", (other, pid))
    con.commit()
    con.close()
    moved = [r for r in prov.discover(prov.locate(explicit=str(tmp_path))).sessions]
    assert _check_fragments(prov, moved) > 100


def _check_fragments(prov, refs) -> int:
    checked = 0
    for ref in refs:
        pieces: set[str] = set()
        for r in prov.read(ref, ReadReport()):
            if r.kind != "meta":
                pieces |= _pieces(record_text(r))
        for piece in sorted(pieces):
            assert prov.rule_out_rows([ref], [piece], False, DEFAULT_KINDS) == [False], (ref.session_id, piece)
            checked += 1
    return checked


@pytest.mark.parametrize("name", NAMES)
def test_the_row_prefilter_changes_speed_never_hits(name):
    prov, refs = _sessions(name)
    words = ["hello", "exit", "notes.md", "README", "bash", "zqx-nowhere-7731"]
    ruled = {}
    for w in words:
        rx = compile_regex((w,), False, True)
        needles, ci = needles_for((w,), False, True)
        base = SharedQuery(regex=rx, kinds=DEFAULT_KINDS)
        fast = SharedQuery(regex=rx, kinds=base.kinds, needles=tuple(needles or ()), needles_ci=ci)
        outs_a, sm_a = search_records([(prov, r) for r in refs], base)
        outs_b, sm_b = search_records([(prov, r) for r in refs], fast)
        assert [(o.ref.session_id, [h.record.locator for h in o.hits]) for o in outs_a if o.hit_count] == \
               [(o.ref.session_id, [h.record.locator for h in o.hits]) for o in outs_b if o.hit_count], w
        assert sm_a.hits == sm_b.hits and sm_a.sessions_with_hits == sm_b.sessions_with_hits, w
        assert sm_a.sessions_prefiltered == 0
        ruled[w] = sm_b.sessions_prefiltered
    assert ruled["zqx-nowhere-7731"] == len(refs)  # nothing parsed
    assert any(0 < ruled[w] < len(refs) for w in words)  # some sessions hold a word and others do not
    nd = session_needles(["zqx-nowhere-7731"])
    # case-insensitive, or a kind whose text the reader composes (meta): never ruled out
    assert prov.rule_out_rows(refs, nd, True, DEFAULT_KINDS) == [False] * len(refs)
    assert prov.rule_out_rows(refs, nd, False, DEFAULT_KINDS | {"meta"}) == [False] * len(refs)


@pytest.mark.parametrize("name", NAMES)
def test_a_damaged_or_missing_database_is_never_ruled_out(tmp_path, name):
    import shutil

    prov, refs = _sessions(name)
    db = Path(refs[0].extra["db_path"])
    bad = tmp_path / db.name
    shutil.copy(db, bad)
    data = bytearray(bad.read_bytes())
    data[100:4096] = b"\xff" * (4096 - 100)  # the first page's b-tree header and cells
    bad.write_bytes(bytes(data))
    from dataclasses import replace

    moved = [replace(r, paths=[bad], extra=dict(r.extra, db_path=str(bad))) for r in refs[:3]]
    gone = [replace(r, paths=[tmp_path / "none.db"], extra=dict(r.extra, db_path=str(tmp_path / "none.db")))
            for r in refs[:2]]
    nd = session_needles(["zqx-nowhere-7731"])
    assert prov.rule_out_rows(moved + gone, nd, False, DEFAULT_KINDS) == [False] * 5
