"""Gemini CLI coverage states and project mapping, made from the real files of examples/gemini-home
(copied to a temp dir and then damaged, hidden or re-shaped; each test says how)."""
from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.realclient.gemini import truth
from tests.realclient.gemini.fixtures import EXAMPLES


@pytest.fixture
def home(tmp_path) -> Path:
    if not (EXAMPLES / "tmp").is_dir():
        pytest.fail("examples/gemini-home is missing: run `.venv/bin/python -m tests.realclient.gemini.make_examples`")
    dst = tmp_path / ".gemini"
    shutil.copytree(EXAMPLES, dst)
    return dst


def _chat_files(home: Path) -> list[Path]:
    return sorted(p for p in (home / "tmp").rglob("*") if p.is_file() and "chats" in p.parts)


def _ref(d, short):
    return next(r for r in d.sessions if r.extra["project_short_name"] == short and r.parent_session_id is None)


def test_ok_counts_every_session(home, gemini_examples):
    d = truth.discover(home)
    ids = {s["session_id"] for run in gemini_examples for s in run.ground_truth["sessions_on_disk"]}
    assert (d.coverage.state, d.coverage.sessions, d.coverage.reason) == ("ok", len(ids), None)
    assert d.coverage.root == str(home) and d.coverage.root_source == "--gemini-home"


def test_absent_is_a_true_zero(tmp_path):
    for root, why in ((tmp_path / "nope", "does not exist"), (tmp_path, "no tmp/")):
        d = truth.discover(root)
        assert (d.coverage.state, d.coverage.sessions) == ("absent", 0) and why in d.coverage.reason
    (tmp_path / "tmp" / "proj" / "chats").mkdir(parents=True)  # the client made the dirs, wrote no chat
    d = truth.discover(tmp_path)
    assert (d.coverage.state, d.coverage.sessions) == ("absent", 0)


def test_not_a_directory_is_unreadable(tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    d = truth.discover(f)
    assert (d.coverage.state, d.coverage.sessions) == ("unreadable", None)


def _discover_without_root_override(root: Path) -> dict:
    """Run discovery in a child that has dropped root's permission override (CAP_DAC_*), so chmod counts."""
    if os.geteuid() == 0:
        if not shutil.which("capsh"):
            pytest.skip("running as root and capsh (to drop CAP_DAC_OVERRIDE) is not installed")
        code = ("import json,sys;from tests.realclient.gemini import truth;d=truth.discover(__import__('pathlib')"
                ".Path(sys.argv[1]));print(json.dumps({'c':d.coverage.to_json(),'p':[[p.path,p.why] for p in d.problems],"
                "'n':[r.session_id for r in d.sessions]}))")
        cmd = ["capsh", "--drop=cap_dac_override,cap_dac_read_search", "--", "-c",
               f"exec {sys.executable} -c \"{code}\" {root}"]
        r = subprocess.run(cmd, capture_output=True, text=True, cwd=Path(__file__).resolve().parents[1],
                           env=dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1])))
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout)
    d = truth.discover(root)
    return {"c": d.coverage.to_json(), "p": [[p.path, p.why] for p in d.problems], "n": [r.session_id for r in d.sessions]}


def test_unreadable_store_is_null_with_reason(home):
    os.chmod(home / "tmp", 0)
    try:
        out = _discover_without_root_override(home)
    finally:
        os.chmod(home / "tmp", 0o755)
    assert out["c"]["state"] == "unreadable" and out["c"]["sessions"] is None
    assert "cannot list" in out["c"]["reason"]


def test_one_unreadable_chats_dir_makes_a_lower_bound(home):
    chats = home / "tmp" / "gem-failing" / "chats"
    os.chmod(chats, 0)
    try:
        out = _discover_without_root_override(home)
    finally:
        os.chmod(chats, 0o755)
    full = truth.discover(home)
    assert out["c"]["state"] == "ok" and out["c"]["sessions"] == full.coverage.sessions - 1
    assert "lower bound" in out["c"]["reason"]
    assert [p[0] for p in out["p"]] == [str(chats)]


def test_an_unreadable_chat_file_is_still_a_session(home):
    f = _ref(truth.discover(home), "gem-shell-write").paths[0]
    os.chmod(f, 0)
    try:
        out = _discover_without_root_override(home)
    finally:
        os.chmod(f, 0o644)
    assert out["c"]["state"] == "ok" and out["c"]["sessions"] == truth.discover(home).coverage.sessions
    assert [p[0] for p in out["p"]] == [str(f)] and "unreadable" in out["p"][0][1]


def test_unknown_format_when_no_file_is_known(home):
    """Every real chat file re-shaped the way a future release might store it (gzip-compressed): no count."""
    for f in _chat_files(home):
        f.with_name(f.name + ".gz").write_bytes(gzip.compress(f.read_bytes()))
        f.unlink()
    d = truth.discover(home)
    assert (d.coverage.state, d.coverage.sessions) == ("unknown_format", None)
    assert d.problems and all("unknown format" in p.why for p in d.problems)


def test_unknown_header_shape_is_not_a_session(home):
    """A real chat file whose header was rewritten without sessionId (a hypothetical new header shape)."""
    ref = _ref(truth.discover(home), "gem-failing")
    f = ref.paths[0]
    lines = f.read_bytes().split(b"\n")
    hdr = json.loads(lines[0])
    lines[0] = json.dumps({"schema": 2, "session": hdr["sessionId"]}).encode()
    data = b"\n".join(lines).replace(b'"sessionId"', b'"session"')
    f.write_bytes(data)
    d = truth.discover(home)
    assert d.coverage.state == "ok" and ref.session_id not in {r.session_id for r in d.sessions}
    assert "lower bound" in d.coverage.reason and [p.path for p in d.problems] == [str(f)]


def test_project_from_the_ownership_marker_then_none(home):
    (home / "projects.json").unlink()
    d = truth.discover(home)
    ref = _ref(d, "gem-failing")
    assert ref.project.endswith("/gem-failing") and ref.project_source == "tmp/<short name>/.project_root"
    (home / "tmp" / "gem-failing" / ".project_root").unlink()
    ref = _ref(truth.discover(home), "gem-failing")
    assert ref.project is None and ref.project_source is None
    assert "no projects.json" in ref.extra["project_note"]


def test_project_of_a_hash_named_dir(home):
    """Only the old hash-named copy of the migrated session left: its project comes from projects.json by
    sha256 of the path (the dir name)."""
    shutil.rmtree(home / "tmp" / "gem-legacy-migrated")
    d = truth.discover(home)
    ref = next(r for r in d.sessions if r.extra.get("legacy_hash_dir"))
    assert ref.project.endswith("/gem-legacy-migrated") and "sha256" in ref.project_source
    assert ref.paths[0].suffix == ".json"
    read = truth.read_ref(ref)
    assert [r.tool_name for r in read.of("tool_call")] == ["write_file"]


def test_malformed_projects_json_is_a_problem(home):
    (home / "projects.json").write_text("{not json")
    d = truth.discover(home)
    assert d.coverage.state == "ok"
    assert [p.path for p in d.problems] == [str(home / "projects.json")]
    assert _ref(d, "gem-failing").project_source == "tmp/<short name>/.project_root"


def test_hostile_names_and_ids(home):
    """A session file whose name and session id carry terminal control characters still discovers and reads."""
    src = _ref(truth.discover(home), "gem-failing").paths[0]
    evil_dir = home / "tmp" / "evil\x1b[31m\n" / "chats"
    evil_dir.mkdir(parents=True)
    data = src.read_bytes().replace(b'"sessionId":"', b'"sessionId":"\\u001b]0;x\\u0007\\u202e', 1)
    (evil_dir / "session-2026-01-01T00-00-\x1b\r.jsonl").write_bytes(data)
    d = truth.discover(home)
    ref = next(r for r in d.sessions if r.session_id.startswith("\x1b]0;x"))
    assert ref.project is None and truth.read_ref(ref).of("prompt")


def _lines_of(home, short):
    ref = _ref(truth.discover(home), short)
    return ref, ref.paths[0].read_bytes().split(b"\n")


def test_a_damaged_last_write_falls_back_to_the_previous_one(home):
    """shell_write's first gemini message is written at L5 (with tokens) and again at L7 (with its tool
    call); L7 cut short (not JSON): the L5 version is read, L7 counted malformed, the result (L8) kept."""
    ref, lines = _lines_of(home, "gem-shell-write")
    whole = truth.read_ref(ref)
    first = json.loads(lines[6])
    assert json.loads(lines[4])["id"] == first["id"] and "toolCalls" in first and "toolCalls" not in json.loads(lines[4])
    lines[6] = lines[6][:-40]
    ref.paths[0].write_bytes(b"\n".join(lines))
    read = truth.read_ref(ref)
    assert read.report.malformed_lines == [f"{ref.paths[0]}:7"]
    msg = next(r for r in read.of("message") if r.text == "Counting first.")
    assert msg.line == 5 and msg.tokens == next(r for r in whole.of("message") if r.text == "Counting first.").tokens
    assert [r.tool_name for r in read.of("tool_call")] == ["write_file"]
    assert [r.tool_name for r in read.of("tool_result")] == ["run_shell_command", "write_file"]
    assert any("could not be read" in n for n in read.report.notes)


def test_torn_tail_and_zero_filled_lines(home):
    """The killed session's file with what a crash leaves: a NUL run in place of a line and a torn last
    line. The records read are those of the intact file; the damage is counted, not silent."""
    ref, lines = _lines_of(home, "gem-killed")
    whole = truth.read_ref(ref)
    pad = [i for i, ln in enumerate(lines) if ln.startswith(b'{"$set":{"lastUpdated"')][0]
    lines[pad] = b"\x00" * len(lines[pad])
    data = b"\n".join(lines)
    if not data.endswith(b"\n"):
        data += b"\n"
    ref.paths[0].write_bytes(data + b'{"id":"torn","timestamp":"2026-')
    read = truth.read_ref(ref)
    assert [(r.locator, r.kind, r.text) for r in read.records] == [(r.locator, r.kind, r.text) for r in whole.records]
    om = read.report.omissions()
    assert om["zero_filled_lines"] == 1 and om["torn_tail_bytes"] == len(b'{"id":"torn","timestamp":"2026-')
    assert om["malformed_lines"] == 0


def test_an_unreadable_subagent_dir_makes_a_lower_bound(home):
    """The real client's subagent log lives in chats/<parent session id>/: when that dir cannot be
    listed the subagent's session is not counted, so the count is a lower bound (it read 'ok' with
    no reason beside the problem row)."""
    full = truth.discover(home)
    sub = next(r for r in full.sessions if r.parent_session_id)
    d = sub.paths[0].parent
    os.chmod(d, 0)
    try:
        out = _discover_without_root_override(home)
    finally:
        os.chmod(d, 0o755)
    assert out["c"]["state"] == "ok" and out["c"]["sessions"] == full.coverage.sessions - 1
    assert sub.session_id not in out["n"] and "lower bound" in out["c"]["reason"]
    assert [p[0] for p in out["p"]] == [str(d)]
