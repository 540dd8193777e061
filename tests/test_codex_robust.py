"""Codex CLI reader: coverage states, compressed rollouts and a fuzz pass, all on REAL rollouts.

Every input here is a rollout the real client wrote (examples/codex-home, or this session's live
run), copied into a temp home and then damaged on purpose: made unreadable, truncated, rewritten
into another shape, compressed, or mutated at random. Only the damage is made by hand; nothing
here is a hand-written record.
"""
from __future__ import annotations

import io
import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import zstandard

from sessionsift.providers.base import ReadReport, Root
from sessionsift.providers.codex import Codex
from sessionsift.read import lines as linesmod

CX = Codex()
REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(params=["examples", "live"], scope="module")
def corpus(request):
    return request.getfixturevalue("codex_examples" if request.param == "examples" else "codex_corpus")


def plain_bytes(p: Path) -> bytes:
    data = p.read_bytes()
    return zstandard.ZstdDecompressor().stream_reader(io.BytesIO(data)).read() if p.suffix == ".zst" else data


def real_rollouts(corpus) -> list[Path]:
    return [p for run in corpus for p in run.rollouts]


def home_with(tmp_path: Path, files: dict[str, bytes]) -> Path:
    home = tmp_path / "codex-home"
    for rel, data in files.items():
        f = home / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_bytes(data)
    return home


def read_all(ref):
    rep = ReadReport()
    return list(CX.read(ref, rep)), rep


def shape(recs):
    return [(r.locator, r.role, r.kind, r.native, r.instant, r.text, r.tool_name, r.call_id, r.exit_code,
             r.is_error, r.file_changes, r.tokens, r.model, r.copy_of, r.turn) for r in recs]


DAY = "sessions/2026/12/01/"


# ---------------------------------------------------------------------------------------- coverage

def test_absent_is_a_true_zero(tmp_path):
    missing = CX.discover(Root(tmp_path / "nope", "test")).coverage
    assert (missing.state, missing.sessions) == ("absent", 0)
    (tmp_path / "empty-home").mkdir()
    no_sessions = CX.discover(Root(tmp_path / "empty-home", "test")).coverage
    assert (no_sessions.state, no_sessions.sessions) == ("absent", 0) and "sessions/" in no_sessions.reason
    (tmp_path / "h2" / "sessions").mkdir(parents=True)
    empty = CX.discover(Root(tmp_path / "h2", "test")).coverage
    assert (empty.state, empty.sessions) == ("absent", 0)


def test_root_that_is_a_file_is_unreadable_not_zero(tmp_path):
    f = tmp_path / "codex-home"
    f.write_text("x")
    cov = CX.discover(Root(f, "test")).coverage
    assert cov.state == "unreadable" and cov.sessions is None and "not a directory" in cov.reason


def test_unknown_format_when_lines_lack_the_envelope(tmp_path, codex_examples):
    src = real_rollouts(codex_examples)[0]
    lines = [json.loads(ln) for ln in plain_bytes(src).splitlines()]
    # the same real records without the {timestamp, type, payload} envelope
    legacy = b"".join(json.dumps(o["payload"]).encode() + b"\n" for o in lines)
    home = home_with(tmp_path, {DAY + src.name.replace(".zst", ""): legacy})
    d = CX.discover(Root(home, "test"))
    assert d.coverage.state == "unknown_format" and d.coverage.sessions is None
    assert d.problems and "unknown format" in d.problems[0].why
    # beside a good rollout: counted 1, the other named, never silently dropped
    good = real_rollouts(codex_examples)[1]
    (home / DAY / good.name.replace(".zst", "")).write_bytes(plain_bytes(good))
    d = CX.discover(Root(home, "test"))
    assert (d.coverage.state, d.coverage.sessions) == ("ok", 1) and "unknown format" in d.coverage.reason
    assert len(d.problems) == 1


def test_truncated_rollouts(tmp_path, codex_examples):
    src = real_rollouts(codex_examples)[0]
    data = plain_bytes(src)
    first_nl = data.index(b"\n")
    cut_mid = data.rindex(b"\n", 0, len(data) // 2) + 40  # inside a later line
    home = home_with(tmp_path, {DAY + "rollout-2026-12-01T00-00-00-aaaaaaaa-0000-7000-8000-000000000001.jsonl":
                                data[: first_nl // 2],
                                DAY + "rollout-2026-12-01T00-00-01-aaaaaaaa-0000-7000-8000-000000000002.jsonl":
                                data[:cut_mid]})
    d = CX.discover(Root(home, "test"))
    assert (d.coverage.state, d.coverage.sessions) == ("ok", 1)
    assert [p.why for p in d.problems] == ["unreadable: no complete JSON line"]
    recs, rep = read_all(d.sessions[0])
    assert rep.torn_tail_bytes == cut_mid - (data.rindex(b"\n", 0, cut_mid) + 1)
    assert recs and recs[-1].line == data[:cut_mid].count(b"\n")
    # only the torn one: unreadable, null
    (home / DAY / "rollout-2026-12-01T00-00-01-aaaaaaaa-0000-7000-8000-000000000002.jsonl").unlink()
    cov = CX.discover(Root(home, "test")).coverage
    assert cov.state == "unreadable" and cov.sessions is None


def _unprivileged(code: str) -> dict:
    """Run ``code`` (prints one JSON line) as a user whom permissions bind: root without
    CAP_DAC_OVERRIDE/CAP_DAC_READ_SEARCH (capsh), or the current user when not root."""
    argv = [sys.executable, "-c", code]
    if os.geteuid() == 0:
        if not shutil.which("capsh"):
            pytest.skip("running as root and `capsh` is not on PATH: cannot drop CAP_DAC_OVERRIDE to test "
                        "permission checks (root reads any file)")
        argv = ["capsh", "--drop=cap_dac_override,cap_dac_read_search", "--", "-c",
                " ".join(f"'{a}'" if a != code else "\"$SSIFT_CODE\"" for a in argv)]
    env = dict(os.environ, PYTHONPATH=str(REPO / "src"), SSIFT_CODE=code)
    r = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


PROBE = """
import json, sys
from pathlib import Path
from sessionsift.providers.base import ReadReport, Root, SessionRef
from sessionsift.providers.codex import Codex
home = Path(sys.argv[1]) if len(sys.argv) > 1 else Path({home!r})
c = Codex()
d = c.discover(Root(home, "test"))
rep = ReadReport()
ref = SessionRef("codex", "x", [Path({target!r})])
recs = list(c.read(ref, rep))
print(json.dumps({{"state": d.coverage.state, "sessions": d.coverage.sessions, "reason": d.coverage.reason,
                  "problems": [p.why for p in d.problems], "read_records": len(recs),
                  "read_problems": [p.why for p in rep.problems]}}))
"""


def test_unreadable_rollout_and_sessions_dir(tmp_path, codex_examples):
    src = real_rollouts(codex_examples)[0]
    name = src.name.replace(".zst", "")
    home = home_with(tmp_path, {DAY + name: plain_bytes(src)})
    target = home / DAY / name
    os.chmod(target, 0)
    try:
        out = _unprivileged(PROBE.format(home=str(home), target=str(target)))
    finally:
        os.chmod(target, 0o644)
    assert out["state"] == "unreadable" and out["sessions"] is None and "Permission denied" in out["reason"]
    assert out["read_records"] == 0 and "Permission denied" in out["read_problems"][0]
    sessions = home / "sessions"
    os.chmod(sessions, 0)
    try:
        out = _unprivileged(PROBE.format(home=str(home), target=str(target)))
    finally:
        os.chmod(sessions, 0o755)
    assert out["state"] == "unreadable" and out["sessions"] is None and "cannot list" in out["reason"]


def test_dangling_symlink_rollout_is_a_problem(tmp_path, codex_examples):
    src = real_rollouts(codex_examples)[0]
    home = home_with(tmp_path, {DAY + src.name.replace(".zst", ""): plain_bytes(src)})
    (home / DAY / "rollout-2026-12-01T00-00-00-bbbbbbbb-0000-7000-8000-000000000009.jsonl").symlink_to(
        tmp_path / "gone")
    d = CX.discover(Root(home, "test"))
    assert (d.coverage.state, d.coverage.sessions) == ("ok", 1) and "unreadable" in d.coverage.reason
    assert any("gone" in p.path or "No such file" in p.why for p in d.problems)


# ---------------------------------------------------------------------------------------- zstd

def test_zst_copy_reads_the_same_as_the_plain_file(tmp_path, corpus):
    cctx = zstandard.ZstdCompressor(level=3)
    for i, src in enumerate(real_rollouts(corpus)):
        data = plain_bytes(src)
        name = src.name.replace(".zst", "")
        a = home_with(tmp_path / f"a{i}", {DAY + name: data})
        b = home_with(tmp_path / f"b{i}", {DAY + name + ".zst": cctx.compress(data)})
        (ra,), (rb,) = CX.discover(Root(a, "t")).sessions, CX.discover(Root(b, "t")).sessions
        assert (ra.session_id, ra.first_at, ra.last_at, ra.project) == (rb.session_id, rb.first_at, rb.last_at,
                                                                         rb.project)
        assert rb.extra["compressed"] is True
        (ka, repa), (kb, repb) = read_all(ra), read_all(rb)
        assert shape(ka) == shape(kb) and len(ka) > 10
        assert [r.offset for r in ka] == [r.offset for r in kb]  # offsets of the decompressed stream
        assert repa.omissions() == repb.omissions() and repb.bytes == len(data)


def test_plain_file_wins_over_its_compressed_sibling(tmp_path, codex_examples):
    src = real_rollouts(codex_examples)[0]
    data = plain_bytes(src)
    name = src.name.replace(".zst", "")
    stale = b"\n".join(data.splitlines()[:5]) + b"\n"
    home = home_with(tmp_path, {DAY + name: data, DAY + name + ".zst": zstandard.ZstdCompressor().compress(stale)})
    (ref,) = CX.discover(Root(home, "t")).sessions
    assert ref.paths == [home / DAY / name] and ref.extra["shadowed"].endswith(".zst")
    assert len(read_all(ref)[0]) > 5
    assert CX.footprint(ref) == [home / DAY / name, home / DAY / (name + ".zst")]  # clean takes both


def test_corrupt_zst_is_unreadable_with_a_reason(tmp_path, codex_examples):
    src = real_rollouts(codex_examples)[0]
    comp = zstandard.ZstdCompressor().compress(plain_bytes(src))
    home = home_with(tmp_path, {DAY + src.name.replace(".zst", "") + ".zst": comp[: len(comp) // 2] + b"\xff" * 64})
    d = CX.discover(Root(home, "t"))
    if d.sessions:  # the head decompressed: reading stops with a problem and keeps what it read
        recs, rep = read_all(d.sessions[0])
        assert rep.problems and "stopped reading" in rep.problems[0].why
    else:
        assert d.coverage.state == "unreadable" and d.coverage.sessions is None


# ---------------------------------------------------------------------------------------- stream framing

DAMAGED = [  # hand-made byte damage (the client cannot be made to write these): framing only
    b"",
    b"\n",
    b'{"a":1}\n{"b":2}',
    b'{"a":1}\n{"b":',
    b'{"a":1}\n' + b"\x00" * 300 + b'{"b":2}\n' + b"\x00" * 77,
    b'{"a":"caf\xe9"}\n{"x\n\n\n{"c":3}\n',
    (b'{"k":"' + b"x" * 5000 + b'"}\n') * 7 + b'{"tail":',
]


@pytest.mark.parametrize("data", DAMAGED)
def test_stream_framing_equals_mapped_framing(tmp_path, monkeypatch, data):
    monkeypatch.setattr(linesmod, "STREAM_CHUNK", 7)  # lines cross chunk boundaries
    p = tmp_path / "x.jsonl"
    p.write_bytes(data)
    sa, sb = linesmod.ReadStats(), linesmod.ReadStats()
    a = [(ln.no, ln.offset, ln.raw) for ln in linesmod.iter_lines(p, stats=sa)]
    b = [(ln.no, ln.offset, ln.raw) for ln in linesmod.iter_stream_lines(io.BytesIO(data), sb)]
    assert a == b
    assert (sa.lines, sa.torn_tail_bytes, sa.zero_filled_lines, sa.bytes) == (
        sb.lines, sb.torn_tail_bytes, sb.zero_filled_lines, sb.bytes)


# ---------------------------------------------------------------------------------------- fuzz

HOSTILE = ["\x1b[31mred\x1b[0m", "bell\x07", "cr\rline", "two\nlines", "\u202ebidi", "", None, 0, -1, 2 ** 70,
           [], {}, [1, "x"], {"type": 7}, True, "x" * 3000]


def _mutate_obj(o, rnd: random.Random):
    """Replace one random nested value of a real record by a hostile or wrongly typed one."""
    path = []
    cur = o
    while isinstance(cur, (dict, list)) and cur and rnd.random() < 0.8:
        k = rnd.choice(list(cur.keys())) if isinstance(cur, dict) else rnd.randrange(len(cur))
        path.append((cur, k))
        cur = cur[k]
    if path:
        parent, k = path[-1]
        parent[k] = rnd.choice(HOSTILE)
    return o


def mutants(data: bytes, rnd: random.Random, n: int):
    lines = data.splitlines(keepends=True)
    ops = ["flip", "truncate", "dup", "drop", "swap", "type", "ptype", "payload", "nested", "nul", "itemtype"]
    for _ in range(n):
        op = rnd.choice(ops)
        ls = list(lines)
        i = rnd.randrange(len(ls))
        injected = None
        if op == "flip":
            b = bytearray(data)
            for _ in range(rnd.randint(1, 20)):
                b[rnd.randrange(len(b))] = rnd.randrange(256)
            yield op, bytes(b), None
            continue
        if op == "truncate":
            yield op, data[: rnd.randrange(len(data))], None
            continue
        if op == "dup":
            ls.insert(i, ls[i])
        elif op == "drop":
            del ls[i]
        elif op == "swap":
            j = rnd.randrange(len(ls))
            ls[i], ls[j] = ls[j], ls[i]
        elif op == "nul":
            ls.insert(i, b"\x00" * rnd.randint(1, 4096) + (b"\n" if rnd.random() < 0.5 else b""))
        else:
            o = json.loads(ls[i])
            if op == "type":
                injected = o["type"] = f"future_kind_{rnd.randrange(1000)}"
            elif op == "ptype" and isinstance(o.get("payload"), dict):
                o["payload"]["type"] = f"future_payload_{rnd.randrange(1000)}"
            elif op == "payload":
                o["payload"] = rnd.choice(HOSTILE)
            elif op == "itemtype" and isinstance(o.get("payload"), dict) and isinstance(o["payload"].get("item"), dict):
                o["payload"]["item"]["type"] = "FutureItem"
            else:
                _mutate_obj(o, rnd)
            ls[i] = json.dumps(o).encode() + b"\n"
        yield op, b"".join(ls), injected


def test_fuzz_mutated_real_rollouts_never_crash_the_reader(tmp_path, codex_examples, codex_legacy_examples):
    rnd = random.Random(1712)
    n_checked = 0
    for k, src in enumerate(real_rollouts(codex_examples) + real_rollouts(codex_legacy_examples)):
        data = plain_bytes(src)
        name = src.name.replace(".zst", "")
        for m, (op, mutated, injected) in enumerate(mutants(data, rnd, 40)):
            home = home_with(tmp_path / f"{k}-{m}", {DAY + name: mutated})
            d = CX.discover(Root(home, "fuzz"))  # never raises
            assert d.coverage.state in ("ok", "unknown_format", "unreadable")
            assert (d.coverage.sessions is None) == (d.coverage.state != "ok")
            for ref in d.sessions:
                recs, rep = read_all(ref)
                assert rep.records == len(recs) and rep.duplicates == sum(r.copy_of is not None for r in recs)
                locs = {r.locator for r in recs}
                assert all(r.copy_of in locs for r in recs if r.copy_of)
                if injected is not None:
                    assert rep.unknown_kinds[injected] >= 1
                    assert any(r.kind == "unknown" and r.native == injected and r.raw is not None for r in recs)
                n_checked += 1
            shutil.rmtree(tmp_path / f"{k}-{m}")
    assert n_checked > 200


def test_side_stores_are_read_without_leaving_wal_or_shm(tmp_path):
    """The real client's side stores, closed (no -wal/-shm, as a copied or backed-up ~/.codex):
    reading them enriches the sessions and leaves no file behind. thread_history_1.sqlite needs
    trusted_schema=ON on SQLite < 3.41; that open used to skip the immutable rule and left an
    empty -wal and a -shm (they had been committed with the sample)."""
    home = tmp_path / "codex-home"
    shutil.copytree(REPO / "examples" / "codex-home", home, symlinks=True)
    for f in home.glob("*.sqlite-*"):
        f.unlink()
    before = sorted(p.name for p in home.iterdir())
    disc = CX.discover(CX.locate(explicit=str(home)))
    assert sorted(p.name for p in home.iterdir()) == before
    statuses = {s.session_id: s.extra.get("turn_statuses") for s in disc.sessions}
    assert statuses and all(statuses.values()), statuses  # thread_history was read
    assert any(s.extra.get("title") or s.title for s in disc.sessions)


def test_committed_samples_carry_no_sqlite_sidecars():
    left = [str(p.relative_to(REPO)) for p in (REPO / "examples").rglob("*.sqlite-*")]
    left += [str(p.relative_to(REPO)) for p in (REPO / "examples").rglob("*.db-*")]
    assert left == []
