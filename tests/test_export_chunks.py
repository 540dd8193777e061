"""`export chunks` on the committed real-client corpora of every provider (examples/home), the
crash artefacts made from a real transcript (examples/crash), and the ledger versions.
Expectations come from the raw files or the provider readers (the layer below), never from the
chunker's own output."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sessionsift import ledger
from sessionsift.export import keep
from sessionsift.providers.base import ReadReport
from sessionsift.providers.scope import RootRequest, select, survey
from sessionsift.export.source import pairs

REPO = Path(__file__).resolve().parent.parent
EX = REPO / "examples"
HOME = EX / "home"


def _run(*args, env=None):
    p = subprocess.run([sys.executable, "-m", "sessionsift", *args], capture_output=True, text=True, env=env)
    return p, [json.loads(x) for x in p.stdout.splitlines() if x.startswith("{")]


def _chunks(out: Path) -> dict[tuple[str, str], list[dict]]:
    res: dict[tuple[str, str], list[dict]] = {}
    for f in sorted(out.rglob("*.chunks.jsonl")):
        for ln in f.read_text().splitlines():
            c = json.loads(ln)
            res.setdefault((c["provider"], c["session_id"]), []).append(c)
    return res


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """One export for the module's tests. A module fixture runs before the per-test isolation of
    conftest.py, so it names its own ledger dir (never this machine's); tests that consult the
    ledger read that one (`ledger_root`)."""
    out = tmp_path_factory.mktemp("chunks")
    data = tmp_path_factory.mktemp("xdg-data")
    env = {**os.environ, "XDG_DATA_HOME": str(data), "HOME": str(tmp_path_factory.mktemp("home"))}
    p, rows = _run("export", "chunks", "--home", str(HOME), "--out", str(out), "--max-chars", "600",
                   "--format", "json", env=env)
    assert p.returncode == 0, p.stderr
    assert rows[-1]["ledger"] == str(data / "sessionsift" / "ledger.jsonl")
    return out, rows, data / "sessionsift"


def _pairs(**kw):
    return pairs(select(survey(RootRequest(**kw)), []))


def test_every_session_of_every_provider(exported):
    out, rows, ledger_root = exported
    ex = [r for r in rows if r["kind"] == "export"]
    assert {r["provider"] for r in ex} == {"claude-code", "codex", "gemini-cli", "opencode", "crush", "pi", "qwen-code", "copilot-cli",
                                           "kilo-code"}
    assert rows[-1]["written"] == len(ex) == 68 and rows[-1]["failed"] == 0
    got = _chunks(out)
    for r in ex:
        assert Path(r["path"]).is_file() and r["version"] == 1
        assert len(got.get((r["provider"], r["session_id"]), [])) == r["chunks"]


def test_chunks_cover_every_textual_record_once_under_the_limit(exported):
    """Each record the reader yields with text (copies aside) is in exactly one chunk, unless it
    is longer than the limit (then in consecutive split chunks); every chunk is under the limit
    and holds one lane's one turn."""
    out, _, _ = exported
    got = _chunks(out)
    for prov, ref in _pairs(home=str(HOME)):
        want = [r for r in prov.read(ref, ReadReport()) if r.copy_of is None and (
            (r.kind in ("prompt", "message", "reasoning", "tool_result") and r.text) or r.kind == "tool_call"
            or (r.kind == "meta" and r.role == "user" and r.text))]
        cs = got.get((ref.provider, ref.session_id), [])
        seen: dict[str, int] = {}
        for c in cs:
            assert c["chars"] == len(c["text"]) <= 600
            assert c["exact_copy"] is False and "omissions" in c and c["reading"]["fingerprint"].startswith("sha256:")
            for loc in c["locators"]:
                seen[(c["lane"], loc)] = seen.get((c["lane"], loc), 0) + 1
                if seen[(c["lane"], loc)] > 1:
                    assert c["split_record"], (ref.session_id, loc)
        assert set(seen) == {(r.lane, r.locator) for r in want}, ref.session_id
        # one (lane, turn) per chunk, in the reader's order
        for c in cs:
            turns = {r.turn for r in want if r.lane == c["lane"] and r.locator in c["locators"]}
            if ref.provider != "claude-code":  # Claude's chunk turns are the deep model's (below)
                assert turns == {c["turn"]}, (ref.session_id, c["chunk"])


def test_claude_turns_and_labels_are_the_deep_models(exported):
    from sessionsift.providers.claude.model.lane import LaneIndex
    from sessionsift.providers.claude.discover import Lane

    out, _, _ = exported
    got = _chunks(out)
    sid = "8414eb07-cca2-5cca-9059-e9baedac31e1"
    path = next((HOME / ".claude" / "projects").glob(f"*/{sid}.jsonl"))
    idx = LaneIndex.build(Lane(path, sid, "main", "main"))
    by_line = {e.no: e for e in idx.entries}
    cs = got[("claude-code", sid)]
    assert {c["turn"] for c in cs} == {1, 2, 3} == set(range(1, idx.turns + 1))
    for c in cs:
        for loc in c["locators"]:
            e = by_line[int(loc[1:].split("#")[0])]
            assert e.turn == c["turn"]
            assert set(e.labels) <= set(c["labels"])


def test_byte_range_points_back_to_the_lines(exported):
    out, _, _ = exported
    for (prov, sid), cs in _chunks(out).items():
        for c in cs:
            if c["byte_start"] is None:
                # rows (opencode, Crush, Kilo Code) and Gemini's legacy whole-file .json: the locators are the way back
                assert prov in ("opencode", "crush", "kilo-code") or (prov == "gemini-cli" and not c["path"].endswith(".jsonl"))
                continue
            data = Path(c["path"]).read_bytes()
            if c["path"].endswith(".zst"):
                import zstandard

                assert c["byte_range_of"] == "decompressed stream"
                data = zstandard.ZstdDecompressor().stream_reader(data, read_across_frames=True).read()
            else:
                assert c["byte_range_of"] == "file"
            assert c["byte_start"] == 0 or data[c["byte_start"] - 1:c["byte_start"]] == b"\n"
            assert data[c["byte_end"]:c["byte_end"] + 1] in (b"\n", b"")
            first = data[:c["byte_start"]].count(b"\n") + 1
            last = data[:c["byte_end"]].count(b"\n") + 1
            lines = [int(loc[1:].split("#")[0]) for loc in c["locators"]]
            assert min(lines) == first and max(lines) == last, (sid, c["chunk"])


def test_omissions_of_a_damaged_transcript(tmp_path):
    """The crash artefacts (NUL runs, a torn tail, invalid UTF-8, made from a real transcript):
    the chunks declare what the reading skipped."""
    home = tmp_path / "c"
    proj = home / "projects" / "-crash"
    proj.mkdir(parents=True)
    names = ["nul_run_inside_line", "torn_final_line", "invalid_utf8_in_string"]
    for i, n in enumerate(names):
        shutil.copy(EX / "crash" / f"{n}.jsonl", proj / f"0000000{i}-0000-4000-8000-000000000000.jsonl")
    out = tmp_path / "out"
    p, rows = _run("export", "chunks", "--claude-home", str(home), "--out", str(out), "--format", "json")
    assert p.returncode == 0, p.stderr
    got = _chunks(out)
    om = {sid: cs[0]["omissions"] for (_, sid), cs in got.items()}
    assert om["00000000-0000-4000-8000-000000000000"]["zero_filled_lines"] == 1
    assert om["00000000-0000-4000-8000-000000000000"]["malformed_lines"] == 1
    assert om["00000001-0000-4000-8000-000000000000"]["torn_tail_bytes"] == 86
    assert om["00000002-0000-4000-8000-000000000000"]["invalid_utf8_lines"] == 1
    assert all(c["exact_copy"] is False for cs in got.values() for c in cs)


def test_ledger_versions_when_the_reading_changes(tmp_path, monkeypatch):
    src = next((HOME / ".claude" / "projects").glob("-tmp-ssift-rc-todos-work"))
    home = tmp_path / "claude"
    shutil.copytree(src, home / "projects" / src.name)
    tr = next((home / "projects" / src.name).glob("*.jsonl"))
    sid = tr.stem
    out = tmp_path / "out"
    p, rows = _run("export", "chunks", "--claude-home", str(home), "--out", str(out), "--format", "json")
    first = next(r for r in rows if r["kind"] == "export")
    assert first["status"] == "written" and first["version"] == 1
    prov, ref = _pairs(roots={"claude-code": str(home)})[0]
    fp = ledger.fingerprint(prov.footprint(ref))
    assert first["fingerprint"] == fp
    kept, ev, why = ledger.is_kept("claude-code", sid, fp)
    assert kept and why == "kept_provably" and ev[0]["path"] == first["path"]
    # the same reading again: current, nothing written, no new ledger entry
    n = len(ledger.entries("claude-code", sid))
    p, rows = _run("export", "chunks", "--claude-home", str(home), "--out", str(out), "--format", "json")
    again = next(r for r in rows if r["kind"] == "export")
    assert again["status"] == "current" and again["path"] == first["path"]
    assert len(ledger.entries("claude-code", sid)) == n
    # the transcript grows (the client appended a line: its last one, written again)
    with open(tr, "ab") as f:
        f.write(tr.read_bytes().splitlines(keepends=True)[-1])
    assert not ledger.is_kept("claude-code", sid, ledger.fingerprint(prov.footprint(ref)))[0]
    p, rows = _run("export", "chunks", "--claude-home", str(home), "--out", str(out), "--format", "json")
    grown = next(r for r in rows if r["kind"] == "export")
    assert grown["status"] == "written" and grown["version"] == 2 and grown["supersedes"] == first["path"]
    assert grown["path"] != first["path"] and Path(first["path"]).is_file()
    cur = ledger.current("claude-code", sid)
    assert cur["path"] == grown["path"] and cur["extra"]["version"] == 2
    assert ledger.is_kept("claude-code", sid, ledger.fingerprint(prov.footprint(ref)))[0]
    # a reader rule changes (its source differs): same bytes, a new version
    rule = tmp_path / "rule.py"
    rule.write_text("RULE = 1\n")
    real = keep._module_files
    monkeypatch.setattr(keep, "_module_files", lambda obj: real(obj) + [str(rule)])
    from sessionsift.export import chunks as C
    from sessionsift.export.run import export_each

    def w(prov, ref, dest, reading):
        st = C.write_chunks(prov, ref, dest, max_chars=8000, reading=reading)
        return {"chunks": st.chunks}

    o1 = list(export_each([(prov, ref)], fmt="chunks", schema=C.SCHEMA_VERSION, module_file=C.__file__,
                          out_dir=out, suffix="chunks.jsonl", write=w))[0]
    assert o1.status == "written" and o1.version == 3
    keep._digest_files.cache_clear()
    rule.write_text("RULE = 2\n")
    o2 = list(export_each([(prov, ref)], fmt="chunks", schema=C.SCHEMA_VERSION, module_file=C.__file__,
                          out_dir=out, suffix="chunks.jsonl", write=w))[0]
    assert o2.status == "written" and o2.version == 4 and o2.reader_version != o1.reader_version
    assert o2.fingerprint == o1.fingerprint
    assert ledger.current("claude-code", sid)["path"] == str(o2.path)


def test_database_sessions_are_fingerprinted_by_rows(exported):
    out, rows, ledger_root = exported
    for r in rows:
        if r["kind"] == "export" and r["provider"] in ("opencode", "crush"):
            assert r["fingerprint_kind"] == "rows_v1"
            prov, ref = next(x for x in _pairs(home=str(HOME)) if x[1].session_id == r["session_id"])
            assert ledger.fingerprint_rows(prov.read(ref, ReadReport(), raw=True)) == r["fingerprint"]
            assert ledger.is_kept(r["provider"], r["session_id"], r["fingerprint"], root=ledger_root)[0]


def test_text_names_providers_by_display_name(tmp_path):
    """Each exported session's text line named the provider by its internal name (`(crush)`,
    `(codex)`), as `audit size` did (review finding 13); one session read `1 sessions`."""
    env = {**os.environ, "XDG_DATA_HOME": str(tmp_path / "data"), "HOME": str(tmp_path / "home")}
    p, rows = _run("export", "markdown", "--home", str(HOME), "--out", str(tmp_path / "o"), "--format", "json", env=env)
    display = {c["provider"]: c["display"] for c in rows[-1]["coverage"]}
    want = {r["session_id"]: display[r["provider"]] for r in rows if r["kind"] == "export"}
    assert len(set(want.values())) == 9
    p, _ = _run("export", "markdown", "--home", str(HOME), "--out", str(tmp_path / "t"), env=env)
    assert p.returncode == 0, p.stderr
    seen = {}
    for line in p.stdout.splitlines():
        sid, _, rest = line.partition(" (")
        if sid in want:
            seen[sid] = rest.split(") ", 1)[0]
    assert seen == want
    sid = "8414eb07-cca2-5cca-9059-e9baedac31e1"
    p, _ = _run("export", "chunks", sid, "--claude-home", str(EX / "claude-home"), "--out", str(tmp_path / "c"), env=env)
    assert p.returncode == 0 and "\n1 session: 1 written" in p.stdout, p.stdout


def test_documents_name_providers_by_display_name(tmp_path):
    """The Markdown and HTML documents (and their index pages) read `crush session ...`, `codex ·`:
    the internal names, in documents written for people."""
    env = {**os.environ, "XDG_DATA_HOME": str(tmp_path / "data"), "HOME": str(tmp_path / "home")}
    for fmt in ("markdown", "html"):
        p, rows = _run("export", fmt, "--home", str(HOME), "--out", str(tmp_path / fmt), "--format", "json", env=env)
        assert p.returncode == 0, p.stderr
        display = {c["provider"]: c["display"] for c in rows[-1]["coverage"]}
        docs = [r for r in rows if r["kind"] == "export"]
        # every provider the coverage found sessions of has documents, and no other
        assert {r["provider"] for r in docs} == {c["provider"] for c in rows[-1]["coverage"] if c["sessions"]}
        for r in docs:
            text = Path(r["path"]).read_text()
            want = f"{display[r['provider']]} session " + ("`" if fmt == "markdown" else "<code>")
            assert want in text, (r["provider"], r["path"])
        index = (tmp_path / fmt / ("index.md" if fmt == "markdown" else "index.html")).read_text()
        for name in ("codex", "crush", "gemini-cli", "claude-code"):
            assert f" {name} `" not in index and f'"meta">{name} ' not in index
        assert all(d in index for d in display.values())
