"""A second new-user pass over data the real clients wrote from scripts shaped unlike the library's
(tests/realclient/scenarios_fresh.py, tests/realclient/codex/scenarios_fresh.py), each answer
compared with what the script implies and with the files on disk.

- Codex CLI: the shell appended to test_calc.py after the patch that created it (`echo ... >>
  test_calc.py`). `recover` answered "complete view", exit 0, with the bytes before the append:
  a shell call after the last recorded content was never looked at for other providers. Now a
  named shell write stops the rebuild (stale, exit 6, the command in a `shell_risk` row) and an
  interpreter run after it (`python3 test_calc.py`) puts the content at risk (exit 5).
- Codex CLI: `files` listed only the patches: the agent's `sed -i calc.py` and `>> test_calc.py`
  were missing; they are `shell:<op>` rows now.
- Codex CLI: calc.py existed before the session and was only patched (diffs); the model printed it
  whole with `cat calc.py` and `sed -n '1,200p' calc.py`. `recover` answered no_complete_view
  (exit 7): a whole-file shell read is now a complete view (Provider.shell_stdout).
- Claude Code: a subagent's Write of report.md was refused by the client and the parent's later
  Edit failed (the file never existed): `recover` said "no record of this file" although both
  calls name it; it now says they named it and failed.
Runs two real clients in parallel (~12 s).
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
CODEX = "tests.realclient.codex.scenarios_fresh:fresh_patches"


def cli(*args: str):
    return subprocess.run([sys.executable, "-m", "sessionsift", *args], capture_output=True, text=True,
                          timeout=300, cwd=REPO)


def jrows(p) -> list[dict]:
    rows = [json.loads(x) for x in p.stdout.splitlines()]
    assert rows and rows[0]["kind"] == "header" and rows[-1]["kind"] == "summary", p.stderr
    return rows


@pytest.fixture(scope="module")
def fresh(tmp_path_factory):
    from tests.realclient import client as claude_client
    from tests.realclient import runner as claude_runner
    from tests.realclient.codex import client as codex_client
    from tests.realclient.codex import runner as codex_runner
    from tests.realclient.common import host

    host.require(codex_client, codex_client.PINNED_VERSION, "Codex CLI real-client")
    host.require(claude_client, claude_client.PINNED_VERSION, "Claude Code real-client")
    root = tmp_path_factory.mktemp("fresh-rc")
    jobs = {
        "codex": lambda: codex_runner.run_scenario(CODEX, root / "codex"),
        "claude": lambda: claude_runner.run_scenario("fresh_long", root / "claude",
                                                     module="tests.realclient.scenarios_fresh"),
    }
    got = host.run_parallel(lambda k: jobs[k](), list(jobs), 2)
    return dict(zip(jobs, got))


def test_codex_shell_write_after_the_last_patch_stops_the_rebuild(fresh):
    gt = fresh["codex"]
    x = ("--codex-home", gt["codex_home"])
    path = f"{gt['cwd']}/test_calc.py"
    disk = Path(path).read_text()
    from tests.realclient.codex.scenarios_fresh import TEST

    assert disk == TEST + 'print("end")\n'  # the shell's append is on disk, in no FileChange
    append = next(c for c in gt["calls"] if c["name"] == "exec_command" and ">> test_calc.py" in c["arguments"]["cmd"])
    p = cli("recover", *x, "--file", path, "--format", "json")
    rows = jrows(p)
    sm = rows[-1]
    assert p.returncode == 6 and sm["status"] == "stale" and sm["complete"] is False, p.stderr
    assert sm["content"] == TEST and sm["content"] != disk  # what the patch wrote, said not to be the file
    risks = [r for r in rows if r["kind"] == "shell_risk"]
    writes = [r for r in risks if r["effect"] == "write"]
    assert [r["command"] for r in writes] == [append["arguments"]["cmd"]]
    assert sm["stopped_at"]["locator"] == writes[0]["locator"]
    # the interpreter runs between the patch and the append are named as possible writers
    runs = {c["arguments"]["cmd"] for c in gt["calls"] if c["name"] == "exec_command"
            and c["arguments"]["cmd"].startswith("python3")}
    assert {r["command"] for r in risks if r["effect"] == "possible"} == runs


def _just_before(x: tuple, needle: str) -> str:
    """The instant 1 ms before the shell call whose command holds `needle` (for --at)."""
    from datetime import datetime, timedelta

    p = cli("search", "-F", needle, "-t", "tool_call", *x, "--format", "json")
    hit = next(r for r in jrows(p) if r["kind"] == "hit")
    t = datetime.fromisoformat(hit["timestamp"]["utc"].replace("Z", "+00:00"))
    return (t - timedelta(milliseconds=1)).isoformat()


def test_codex_interpreter_after_a_complete_rebuild_puts_it_at_risk(fresh):
    """The same test_calc.py up to the instant before the append: complete, but `python3` ran after."""
    gt = fresh["codex"]
    x = ("--codex-home", gt["codex_home"])
    path = f"{gt['cwd']}/test_calc.py"
    p = cli("recover", *x, "--file", path, "--at", _just_before(x, ">> test_calc.py"), "--format", "json")
    rows = jrows(p)
    sm = rows[-1]
    from tests.realclient.codex.scenarios_fresh import TEST

    assert p.returncode == 5 and sm["status"] == "complete_view" and sm["at_risk"] is True, p.stderr
    assert sm["content"] == TEST
    assert {r["effect"] for r in rows if r["kind"] == "shell_risk"} == {"possible"}


def test_codex_pre_existing_file_rebuilt_from_what_the_shell_printed(fresh):
    """calc.py existed before the session and was only ever patched (diffs): the whole file is in
    the outputs of `cat calc.py` and `sed -n '1,200p' calc.py` (fewer lines than asked). Before,
    recover answered no_complete_view (exit 7) at every instant."""
    from tests.realclient.codex.scenarios_fresh import CALC3

    gt = fresh["codex"]
    x = ("--codex-home", gt["codex_home"])
    path = f"{gt['cwd']}/calc.py"
    p = cli("recover", *x, "--file", path, "--format", "json")
    sm = jrows(p)[-1]
    assert p.returncode == 0 and sm["status"] == "complete_view", p.stderr
    assert sm["content"] == Path(path).read_text()  # the last view, after the sed and the last patch
    view = next(c for c in gt["calls"] if c.get("arguments", {}).get("cmd") == "sed -n '1,200p' calc.py")
    assert sm["source"]["locator"] == jrows(cli("search", "-F", "sed -n '1,200p'", "-t", "tool_call", *x,
                                                "--format", "json"))[1]["locator"] and view["served"]
    # before the agent's own sed -i: the first view (`cat`) and the three patches after it
    p = cli("recover", *x, "--file", path, "--at", _just_before(x, "sed -i"), "--format", "json")
    rows = jrows(p)
    sm = rows[-1]
    assert p.returncode == 5 and sm["status"] == "rebuilt" and sm["diffs_applied"] == 3, p.stderr
    assert sm["content"] == CALC3 and sm["at_risk"] is True
    steps = [r for r in rows if r["kind"] == "step"]
    assert steps[0]["action"] == "read" and steps[0]["step_kind"] == "complete_view" and steps[0]["used"]
    # after the sed -i and the patch, before the second view: stopped at the sed (its result unrecorded)
    p = cli("recover", *x, "--file", path, "--at", _just_before(x, "sed -n"), "--format", "json")
    sm = jrows(p)[-1]
    assert p.returncode == 6 and sm["status"] == "stale" and sm["content"] == CALC3
    assert "sed" in sm["stopped_at"]["why"]
    # notes.txt existed before too, patched without ever being printed: said so, not guessed
    p = cli("recover", *x, "--file", f"{gt['cwd']}/notes.txt", "--format", "json")
    assert p.returncode == 7 and jrows(p)[-1]["status"] == "no_complete_view"


def test_codex_files_lists_what_the_shell_wrote_beside_the_patches(fresh):
    gt = fresh["codex"]
    rows = jrows(cli("files", "--codex-home", gt["codex_home"], "--format", "json"))
    got = {r["file"]: r["ops"] for r in rows if r["kind"] == "file"}
    want: dict[str, dict[str, int]] = {}
    for c in gt["calls"]:
        for ch in c.get("expect_changes") or []:
            ops = want.setdefault(ch["path"], {})
            ops[ch["action"]] = ops.get(ch["action"], 0) + 1
    # the script's two shell writes: `sed -i ... calc.py` and `echo ... >> test_calc.py`
    want[f"{gt['cwd']}/calc.py"]["shell:edit-in-place"] = 1
    want[f"{gt['cwd']}/test_calc.py"]["shell:append"] = 1
    # and its two reads, `cat calc.py` and `sed -n '1,200p' calc.py`, as Claude Code's Bash reads are listed
    want[f"{gt['cwd']}/calc.py"]["shell:read"] = 2
    assert got == want
    sh = rows[-1]["shared"]
    assert sh["changes"] == sum(len(c.get("expect_changes") or []) for c in gt["calls"]) and sh["shell_touches"] == 4
    # python3 test_calc.py, python3 -c ...: may write files they do not name, counted
    assert sh["shell_unnamed_writers"] == sum(1 for c in gt["calls"] if c["name"] == "exec_command"
                                              and c["arguments"]["cmd"].startswith("python3"))


def test_codex_counts_equal_the_script(fresh):
    gt = fresh["codex"]
    rows = jrows(cli("stats", "--codex-home", gt["codex_home"], "--format", "json"))
    s = next(r for r in rows if r["kind"] == "session")
    want_calls: dict[str, int] = {}
    for c in gt["calls"]:
        want_calls[c["name"]] = want_calls.get(c["name"], 0) + 1
    assert s["tool_calls"] == want_calls
    assert s["tool_errors"] == {"exec_command": sum(1 for c in gt["calls"] if c.get("expect_exit") not in (0, None))}
    u = [r["usage"] for r in gt["responses"]]
    tok = s["tokens_by_model"]["gpt-5.5"]
    assert tok["input"] == sum(x["input_tokens"] - x["input_tokens_details"]["cached_tokens"] for x in u)
    assert tok["cache_read"] == sum(x["input_tokens_details"]["cached_tokens"] for x in u)
    assert tok["output"] == sum(x["output_tokens"] for x in u) and tok["total"] == sum(x["total_tokens"] for x in u)


def test_claude_failed_calls_on_a_file_are_named_not_no_record(fresh):
    gt = fresh["claude"]
    c = ("--claude-home", gt["config_dir"])
    path = f"{gt['cwd']}/report.md"
    assert not Path(path).exists()  # the client refused the subagent's Write; the parent's Edit failed
    names = [t["name"] for t in gt["tool_uses"] if t["input"].get("file_path") == path]
    assert sorted(names) == ["Edit", "Write"]
    p = cli("recover", *c, "--file", path, "--format", "json")
    rows = jrows(p)
    sm = rows[-1]
    assert p.returncode == 1 and sm["status"] == "no_record" and sm["failed_calls"] == 2, p.stderr
    assert "2 calls named it and failed" in sm["message"] and "no record" not in sm["message"]
    assert sorted(r["what"] for r in rows if r["kind"] == "step" and r["step_kind"] == "noop") == ["rejected"] * 2
    # a file no call named still says so
    p = cli("recover", *c, "--file", f"{gt['cwd']}/never-named.txt", "--format", "json")
    assert p.returncode == 1 and jrows(p)[-1]["message"].startswith("no record of this file")


def test_claude_rebuilds_across_a_subagent_edit_and_the_agents_own_sed(fresh, tmp_path):
    gt = fresh["claude"]
    c = ("--claude-home", gt["config_dir"])
    util = f"{gt['cwd']}/util.py"
    out = tmp_path / "util.out"
    p = cli("recover", *c, "--file", util, "--out", str(out))
    # exact bytes (Write, the subagent's Edit, the parent's Edit, `sed -i`, an Edit after it); a
    # later `python3 app.py` may have written it: at risk, said
    assert p.returncode == 5 and out.read_bytes() == Path(util).read_bytes(), p.stderr
    p = cli("recover", *c, "--file", f"{gt['cwd']}/tests/test_util.py", "--format", "json")
    assert p.returncode == 8 and jrows(p)[-1]["status"] == "deleted"  # `rm` by the agent's Bash
