"""Cases a reviewer found by running the real clients with scripts shaped differently from the
library (tests/realclient/*/scenarios_review.py), each checked against what the script implies.

- Gemini CLI cuts a long tool output for the model (first 8,000 + last 32,000 characters) and keeps
  the whole of it as the call's resultDisplay: a search for text in the cut middle answered
  "0 hits" with nothing left out; the shell's proven exit 0 was lost to the cut's preamble.
- opencode cuts a long bash output (its tail only) and saves the whole of it under
  `<data dir>/tool-output/` (metadata.outputPath): the same bare "0 hits"; in a copied data dir the
  recorded absolute path no longer exists.
- Claude Code answers an Edit whose old_string is absent with an error result, and `files` counted
  that call as an edit (`a.py edit=2`, one of them `status error`) without saying so.
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def cli(*args: str):
    return subprocess.run([sys.executable, "-m", "sessionsift", *args], capture_output=True, text=True,
                          timeout=300, cwd=REPO)


def jrows(p) -> list[dict]:
    rows = [json.loads(x) for x in p.stdout.splitlines()]
    assert rows and rows[0]["kind"] == "header" and rows[-1]["kind"] == "summary", p.stderr
    return rows


@pytest.fixture(scope="module")
def gemini_review(tmp_path_factory):
    from tests.realclient.gemini.fixtures import run_corpus

    return run_corpus(tmp_path_factory.mktemp("gemini-review"),
                      names=["tests.realclient.gemini.scenarios_review:big_output"])


def test_gemini_output_cut_for_the_model_is_searched_whole_and_said_left_out(gemini_review):
    run = gemini_review["big_output"]
    g = ("--gemini-home", str(run.gemini_dir))
    saved = list(run.gemini_dir.glob("tmp/*/tool-outputs/session-*/*.txt"))
    assert saved and "\n2500\n" in saved[0].read_text()  # on disk, whole
    rows = jrows(cli("search", "-F", "2500", *g, "--format", "json"))
    assert not [r for r in rows if r["kind"] == "hit"]
    sh = rows[-1]["shared"]
    assert sh["not_searched_matches"].get("meta") == 1, sh  # said: one more where it was not searched
    rows = jrows(cli("search", "-F", "2500", "-t", "meta", *g, "--format", "json"))
    hits = [r for r in rows if r["kind"] == "hit"]
    assert len(hits) == 1 and "\n2500\n" in hits[0]["text"] and hits[0]["tool_name"] == "run_shell_command"
    res = [r for r in jrows(cli("search", "", "-t", "tool_result", *g, "--format", "json")) if r["kind"] == "hit"]
    want = run.ground_truth["tool_calls"]
    assert len(res) == len([c for c in want if c.get("name") == "run_shell_command"]) == 2
    assert [r["exit_code"] for r in res] == [0, 0]  # both proven 0, the cut one too


@pytest.fixture(scope="module")
def opencode_review(tmp_path_factory):
    from tests.realclient.opencode.fixtures import run_opencode_corpus

    return run_opencode_corpus(tmp_path_factory.mktemp("opencode-review"),
                               names=["tests.realclient.opencode.scenarios_review:big_output"])


@pytest.mark.parametrize("where", ["in place", "copied"])
def test_opencode_output_saved_whole_is_searched_and_said_left_out(opencode_review, tmp_path, where):
    run = opencode_review["big_output"]
    data = run.data_dir
    if where == "copied":  # the recorded outputPath is absolute: a copy finds it under its own tool-output/
        data = tmp_path / "opencode"
        shutil.copytree(run.data_dir, data)
    saved = list(data.glob("tool-output/*"))
    assert saved and saved[0].read_text().startswith("1\n") and "\n1000\n" in saved[0].read_text()
    o = ("--opencode-home", str(data))
    res = [r for r in jrows(cli("search", "", "-t", "tool_result", *o, "--format", "json")) if r["kind"] == "hit"]
    assert len(res) == 1 and "\n1000\n" not in res[0]["text"] and res[0]["exit_code"] == 0  # the model read the tail
    rows = jrows(cli("search", "-F", "1000", *o, "--format", "json"))
    assert not [r for r in rows if r["kind"] == "hit"]
    assert rows[-1]["shared"]["not_searched_matches"].get("meta") == 1, rows[-1]["shared"]
    hits = [r for r in jrows(cli("search", "-F", "1000", "-t", "meta", *o, "--format", "json")) if r["kind"] == "hit"]
    assert len(hits) == 1 and hits[0]["text"] == saved[0].read_text() and hits[0]["tool_name"] == "bash"
    shown = [r for r in jrows(cli("show", hits[0]["session_id"], "--locator", hits[0]["locator"], *o,
                                  "--format", "json")) if r["kind"] == "record"]
    assert [r["locator"] for r in shown] == [hits[0]["locator"]]


def test_opencode_saved_output_of_a_copy_is_the_copys_and_an_unreadable_one_is_a_problem(opencode_review, tmp_path):
    """A copied data dir: its own tool-output/ file is read (not the original's at the recorded
    absolute path, which still exists here); when that file cannot be read the answer says so
    (a problem, exit 3) instead of finding what the original holds or nothing at all."""
    import os

    run = opencode_review["big_output"]
    data = tmp_path / "opencode"
    shutil.copytree(run.data_dir, data)
    saved = next(data.glob("tool-output/*"))
    saved.write_text("only in the copy\n")
    o = ("--opencode-home", str(data))
    hits = [r for r in jrows(cli("search", "-F", "only in the copy", "-t", "meta", *o, "--format", "json"))
            if r["kind"] == "hit"]
    assert len(hits) == 1
    os.chmod(saved, 0)
    try:
        code = ("import subprocess,sys;r=subprocess.run([sys.executable,'-m','sessionsift','search','-F','1000',"
                f"'--opencode-home',{str(data)!r},'--format','json'],capture_output=True,text=True);"
                "print(r.returncode);print(r.stdout.splitlines()[-1])")
        argv = [sys.executable, "-c", code]
        if os.geteuid() == 0:
            if not shutil.which("capsh"):
                pytest.skip("running as root without capsh: mode 000 cannot be enforced")
            argv = ["capsh", "--drop=cap_dac_override,cap_dac_read_search", "--", "-c", 'exec "$0" -c "$1"',
                    sys.executable, code]
        r = subprocess.run(argv, capture_output=True, text=True, cwd=REPO, timeout=120,
                           env=dict(os.environ, PYTHONPATH=str(REPO / "src")))
    finally:
        os.chmod(saved, 0o644)
    rc, last = r.stdout.splitlines()[:2]
    summary = json.loads(last)
    assert rc == "3", r.stdout + r.stderr
    assert any(p["path"] == str(saved) for p in summary["shared"]["problems"]), summary["shared"]


@pytest.fixture(scope="module")
def codex_review(tmp_path_factory):
    from tests.realclient.codex.fixtures import run_corpus

    return run_corpus(tmp_path_factory.mktemp("codex-review"),
                      names=["tests.realclient.codex.scenarios_review:long_haul",
                             "tests.realclient.codex.scenarios_review:forked"])


def test_codex_file_moved_by_a_patch_is_rebuilt_from_its_source(codex_review):
    """Codex's `*** Move to` (b.py created whole, then moved to c.py with a one-line change):
    `recover c.py` answered "none holding its whole content" (exit 7) although b.py's content and
    the move's diff are both recorded; `recover b.py` named the create, not the move, as where it
    went away."""
    import hashlib

    run = codex_review["long_haul"]
    gt = run.ground_truth
    c = ("--codex-home", str(run.codex_home))
    work = Path(gt["cwd"])
    p = cli("recover", "--file", str(work / "c.py"), *c)
    assert p.returncode == 0, p.stderr
    assert hashlib.sha256(p.stdout.encode()).hexdigest() == gt["disk_files"][str(work / "c.py")]["sha256"]
    # the model's own `cat c.py` (P3) printed it whole: the latest complete view
    rows = jrows(cli("recover", "--file", str(work / "c.py"), "--coverage", *c, "--format", "json"))
    steps = [r for r in rows if r["kind"] == "step"]
    # P3's patch of c.py (`-C = 99`) was rejected by the client: listed, never applied
    assert [(r["step_kind"], r["used"], r["action"]) for r in steps] == [("diff", False, "move"),
                                                                           ("rejected", False, "update"),
                                                                           ("complete_view", True, "read")]
    assert rows[-1]["status"] == "complete_view" and rows[-1]["exit_status"] == 0
    move = steps[0]["locator"]
    # up to just before that cat: b.py's create and the move's diff
    from datetime import datetime, timedelta

    cat = next(r for r in jrows(cli("search", "-F", "cat c.py", "-t", "tool_call", *c, "--format", "json"))
               if r["kind"] == "hit")
    at = (datetime.fromisoformat(cat["timestamp"]["utc"].replace("Z", "+00:00")) - timedelta(milliseconds=1)).isoformat()
    rows = jrows(cli("recover", "--file", str(work / "c.py"), "--coverage", "--at", at, *c, "--format", "json"))
    steps = [r for r in rows if r["kind"] == "step"]
    assert [(r["step_kind"], r["used"]) for r in steps if r["step_kind"] != "rejected"] == [("complete_view", True),
                                                                                            ("diff", True)]
    steps = [r for r in steps if r["step_kind"] != "rejected"]
    assert rows[-1]["status"] == "rebuilt" and rows[-1]["exit_status"] == 0 and steps[1]["locator"] == move
    p = cli("recover", "--file", str(work / "b.py"), *c)
    assert p.returncode == 8 and f"moved to {work / 'c.py'} at {move}" in p.stderr, p.stderr


def test_codex_output_cut_on_disk_is_said_in_a_zero_hit_search(codex_review):
    """Codex keeps the head and tail of a long tool output and writes `…N tokens truncated…` in
    between: `seq 1 60000`'s 30000 is on disk nowhere. `search -F 30000` answered "0 hits ... 1
    session ruled out by its bytes" and never mentioned the cut (review finding 6)."""
    run = codex_review["long_haul"]
    home = run.codex_home
    files = [p for p in home.rglob("*") if p.is_file() and p.suffix in (".jsonl", ".zst")]
    blob = b"".join(p.read_bytes() for p in files)
    assert b"tokens truncated\xe2\x80\xa6" in blob and b"30000" not in blob  # the premise, as the client wrote it
    c = ("--codex-home", str(home))
    p = cli("search", "-F", "30000", *c, "--format", "json")
    assert p.returncode == 1, p.stderr
    sh = jrows(p)[-1]["shared"]
    assert sh["truncated_records"] == 1 and sh["sessions_prefiltered"] == 0, sh  # one big output in the script
    t = cli("search", "-F", "30000", *c)
    assert ("; 1 record cut on disk by its client (Codex CLI 1): the cut text is not on disk at all, "
            "no search can find it)") in t.stdout, t.stdout
    # the record itself says so: the seq call's output
    rows = jrows(cli("search", "-F", "Total output lines: 60000", "-t", "tool_result", *c, "--format", "json"))
    hits = [r for r in rows if r["kind"] == "hit"]
    seq = [x["call_id"] for x in run.ground_truth["calls"] if (x.get("arguments") or {}).get("cmd") == "seq 1 60000"]
    assert len(hits) == 1 and hits[0]["truncated"] is True and [hits[0]["call_id"]] == seq, hits
    others = jrows(cli("search", "", "-t", "tool_result", *c, "--format", "json"))
    assert sum(r["truncated"] for r in others if r["kind"] == "hit") == 1
    # a corpus whose outputs were not cut says 0 (counted), and one with no such reader says null
    none = jrows(cli("search", "-F", "30000", "--codex-home", str(REPO / "examples" / "codex-home"), "--format", "json"))
    assert none[-1]["shared"]["truncated_records"] == 0
    gem = jrows(cli("search", "-F", "30000", "--gemini-home", str(REPO / "examples" / "gemini-home"),
                    "--format", "json"))
    assert gem[-1]["shared"]["sessions"] > 0 and gem[-1]["shared"]["truncated_records"] is None


@pytest.fixture(scope="module")
def claude_review(tmp_path_factory):
    from tests.realclient import runner
    from tests.realclient.common.host import prereq

    return prereq(runner.run_scenario, "review_long", tmp_path_factory.mktemp("claude-review"),
                  module="tests.realclient.scenarios_review")


def test_claude_failed_edit_is_counted_apart_not_as_an_edit(claude_review):
    """review_long: a.py is written, edited (A = 1 -> A = 10), then an Edit of "NOT THERE" fails
    (the client's `<tool_use_error>String to replace not found`): one edit, one failed call."""
    home = claude_review["config_dir"]
    a = f"{claude_review['cwd']}/a.py"
    p = cli("files", "--claude-home", home, "--format", "json")
    rows = jrows(p)
    row = next(r for r in rows if r["kind"] == "file" and r["file"] == a)
    assert row["ops"] == {"create": 1, "edit": 1} and row["failed"] == {"edit": 1}, row
    assert len(row["touches"]) == 3  # the failed call is still listed, addressable
    assert rows[-1]["failed"] == {"edit": 1} and rows[-1]["ops"]["edit"] == 2  # a.py's and shared.txt's
    t = [r for r in jrows(cli("files", "--claude-home", home, "--by", "timeline", "--format", "json"))
         if r["kind"] == "touch" and r["file"] == a and r["op"] == "edit"]
    assert [x["status"] for x in t] == ["ok", "error"]
    p = cli("files", "--claude-home", home)
    line = next(x for x in p.stdout.splitlines() if x.startswith(a + "  "))
    assert line.startswith(f"{a}  create=1, edit=1 (+1 failed)  [main]"), line
    assert "(1 failed: changed nothing)" in p.stdout
    d = next(r for r in jrows(cli("files", "--claude-home", home, "--by", "dir", "--format", "json"))
             if r["kind"] == "dir" and r["dir"] == claude_review["cwd"])
    assert d["failed"] == {"edit": 1} and d["ops"]["edit"] == 2


def test_codex_fork_fills_forked_from_and_forks_in_list(codex_review):
    """`codex exec fork <id>` (the real client) records the parent in the fork's session_meta
    (`forked_from_id`): `list` rows of Codex lacked the documented `forked_from`/`forks` (review
    finding 4); other providers' clients record no lineage: null, not []."""
    run = codex_review["forked"]
    parent, fork = run.ground_truth["thread_ids_reported"]
    rows = jrows(cli("list", "--codex-home", str(run.codex_home), "--format", "json"))
    by = {r["session_id"]: r for r in rows if r["kind"] == "session"}
    assert set(by) == {parent, fork}
    f = by[fork]["forked_from"]
    assert f["session_id"] == parent and f["path"] == by[parent]["path"] and f["ordinal_exclusive"] > 0, f
    assert f["line"] is None and f["uuid"] is None and f["copied_records"] == 0  # 0.171.0 copies no record
    assert by[parent]["forked_from"] is None and by[parent]["forks"] == [fork] and by[fork]["forks"] == []
    t = cli("list", "--codex-home", str(run.codex_home)).stdout
    assert f"  forked from {parent} (before its record ordinal {f['ordinal_exclusive']})" in t and f"  forks: {fork}" in t
    gem = jrows(cli("list", "--gemini-home", str(REPO / "examples" / "gemini-home"), "--format", "json"))
    gs = [r for r in gem if r["kind"] == "session"]
    assert gs and {(r["forked_from"], r["forks"]) for r in gs} == {(None, None)}
