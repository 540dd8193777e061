"""`files` and `recover` on the reads and the failed changes of other providers, on data the real
clients wrote (tests/realclient/gemini/scenarios_fresh.py and opencode/scenarios_fresh.py,
``fresh_reads``; Codex CLI's rejected patch and its `cat` are in examples/codex-home).

Before: `files` listed no read of Gemini CLI's ``read_file``, opencode's ``read`` or Codex CLI's
``cat F`` (Claude Code's Read and Bash reads are listed), and no failed change (a ``replace``
whose old_string is not in the file, an ``edit`` of a missing file, a rejected ``apply_patch``):
``failed`` was ``{}`` and a file only failed calls named was not there at all; `recover` answered
"no record of this file". A Gemini ``read_file`` output without the client's truncation header
is the whole file (its source: lines split on ``\\r?\\n`` and joined with ``\\n``): `recover` uses
it as a complete view (before: no_record, exit 1). opencode's ``read`` drops the final newline
(a file ``first\\nlast`` prints as a file ``first\\nlast\\n`` does): its output is a complete
view only where a later diff of the file proves the last line's ending.
Runs two real clients in parallel (~25 s).
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
EX = REPO / "examples"
GEMINI = "tests.realclient.gemini.scenarios_fresh:fresh_reads"
OPENCODE = "tests.realclient.opencode.scenarios_fresh:fresh_reads"


def cli(*args: str):
    return subprocess.run([sys.executable, "-m", "sessionsift", *args], capture_output=True, text=True,
                          timeout=300, cwd=REPO)


def jrows(p) -> list[dict]:
    rows = [json.loads(x) for x in p.stdout.splitlines()]
    assert rows and rows[0]["kind"] == "header" and rows[-1]["kind"] == "summary", p.stderr
    return rows


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    from tests.realclient.common import host
    from tests.realclient.gemini import client as gemini_client, runner as gemini_runner
    from tests.realclient.opencode import client as opencode_client, runner as opencode_runner

    host.require(gemini_client, gemini_client.PINNED_VERSION, "Gemini CLI real-client")
    host.require(opencode_client, opencode_client.PINNED_VERSION, "opencode real-client")
    root = tmp_path_factory.mktemp("reads-rc")
    jobs = {"gemini": lambda: gemini_runner.run_scenario(GEMINI, root / "gemini"),
            "opencode": lambda: opencode_runner.run_scenario(OPENCODE, root / "opencode")}
    got = host.run_parallel(lambda k: jobs[k](), list(jobs), 2)
    return dict(zip(jobs, got))


def _gem(gt) -> tuple[str, ...]:
    return ("--gemini-home", gt["gemini_dir"], "--provider", "gemini-cli")


def _oc(gt) -> tuple[str, ...]:
    return ("--opencode-home", gt["data_dir"], "--provider", "opencode")


def _by_file(args) -> dict[str, dict]:
    rows = jrows(cli("files", *args, "--format", "json"))
    return {r["file"]: r for r in rows if r["kind"] == "file"} | {"": rows[-1]}


def test_gemini_files_lists_reads_and_failed_replaces(runs):
    gt = runs["gemini"]
    w = gt["cwd"]
    got = _by_file(_gem(gt))
    # the script: 3 read_file calls, a replace that cannot match part.txt, a replace of a missing file
    assert {k: (v["ops"], v["failed"]) for k, v in got.items() if k} == {
        f"{w}/keep.txt": ({"read": 1}, {}),
        f"{w}/big.txt": ({"read": 1}, {}),
        f"{w}/part.txt": ({"read": 1}, {"update": 1}),
        f"{w}/missing.txt": ({}, {"update": 1}),
    }
    sh = got[""]["shared"]
    assert sh["reads"] == 3 and sh["failed"] == {"update": 2} and sh["changes"] == 0
    fails = [t for t in got[f"{w}/missing.txt"]["touches"]]
    assert [(t["tool"], t["failed"], t["action"]) for t in fails] == [("replace", True, "update")]
    text = cli("files", *_gem(gt)).stdout
    assert f"{w}/part.txt  read=1, update=0 (+1 failed)" in text, text
    assert "3 reads, 2 failed calls (changed nothing)" in text, text


def test_gemini_recover_uses_a_whole_read_file_and_only_that(runs):
    gt = runs["gemini"]
    w = gt["cwd"]
    from tests.realclient.gemini.scenarios_fresh import KEEP

    p = cli("recover", *_gem(gt), "--file", f"{w}/keep.txt", "--format", "json")
    sm = jrows(p)[-1]
    assert p.returncode == 0 and sm["status"] == "complete_view", p.stdout
    assert sm["content"] == KEEP == Path(f"{w}/keep.txt").read_text()
    assert sm["source"]["action"] == "read" and "no truncation header" in sm["source"]["evidence"]
    # 2,000 of 2,500 lines, and lines 2-3: the client's truncation header says so -- no view
    for name in ("big.txt", "part.txt"):
        p = cli("recover", *_gem(gt), "--file", f"{w}/{name}", "--format", "json")
        sm = jrows(p)[-1]
        assert p.returncode == 7 and sm["status"] == "no_complete_view" and sm["content"] is None, (name, p.stdout)
        assert sm["reads"] == 1 and "none printing it whole" in sm["message"]
    # a file only a failed call named: said so, as Claude Code's recover says it
    p = cli("recover", *_gem(gt), "--file", f"{w}/missing.txt", "--format", "json")
    rows = jrows(p)
    sm = rows[-1]
    assert p.returncode == 1 and sm["status"] == "no_record" and sm["failed_calls"] == 1
    assert "1 call named it and failed" in sm["message"] and "replace" in sm["message"]
    assert [r["step_kind"] for r in rows if r["kind"] == "step"] == ["rejected"]


def test_opencode_files_lists_reads_and_failed_edits(runs):
    gt = runs["opencode"]
    w = gt["cwd"]
    got = _by_file(_oc(gt))
    assert {k: (v["ops"], v["failed"]) for k, v in got.items() if k} == {
        f"{w}/keep.txt": ({"read": 1}, {}),
        f"{w}/noeol.txt": ({"read": 1}, {}),
        f"{w}/part.txt": ({"read": 1}, {"update": 1}),
        f"{w}/edited.txt": ({"read": 1, "update": 1}, {}),
        f"{w}/edited_noeol.txt": ({"read": 1, "update": 1}, {}),
        f"{w}/missing.txt": ({}, {"update": 1}),
    }
    sh = got[""]["shared"]
    assert sh["reads"] == 5 and sh["failed"] == {"update": 2} and sh["changes"] == 2


def test_opencode_recover_uses_a_read_only_with_its_final_newline_proven(runs):
    gt = runs["opencode"]
    w = gt["cwd"]
    # keep.txt (ends with a newline) and noeol.txt (does not) print the same way: neither is a view
    for name in ("keep.txt", "noeol.txt"):
        p = cli("recover", *_oc(gt), "--file", f"{w}/{name}", "--format", "json")
        sm = jrows(p)[-1]
        assert p.returncode == 7 and sm["status"] == "no_complete_view" and sm["content"] is None, (name, p.stdout)
        assert "not whether the last ends with a newline" in sm["message"]
    # read, then an edit of the last line: its diff shows the line's ending (jsdiff's "\ No newline")
    for name in ("edited.txt", "edited_noeol.txt"):
        p = cli("recover", *_oc(gt), "--file", f"{w}/{name}", "--format", "json")
        rows = jrows(p)
        sm = rows[-1]
        assert p.returncode == 0 and sm["status"] == "rebuilt", (name, p.stdout)
        assert sm["content"] == Path(f"{w}/{name}").read_text() == gt["expected_files"][name]["content"]
        assert sm["source"]["action"] == "read" and "final newline" in sm["source"]["evidence"]
    assert gt["expected_files"]["edited_noeol.txt"]["content"].endswith("LAST")
    # lines 2-3 (offset/limit) and a failed edit: no view, the failure said
    p = cli("recover", *_oc(gt), "--file", f"{w}/part.txt", "--format", "json")
    sm = jrows(p)[-1]
    assert p.returncode == 7 and sm["reads"] == 1 and sm["failed_calls"] == 1
    p = cli("recover", *_oc(gt), "--file", f"{w}/missing.txt", "--format", "json")
    sm = jrows(p)[-1]
    assert p.returncode == 1 and sm["failed_calls"] == 1 and "1 call named it and failed" in sm["message"]


def test_codex_files_lists_the_rejected_patch_and_the_cat():
    """examples/codex-home (real Codex CLI 0.171.0): failing_command's patch the client rejected
    ("apply_patch verification failed"), resumed's `cat notes.md`."""
    gt = json.loads((EX / "codex-ground-truth" / "failing_command.json").read_text())
    got = _by_file(("--codex-home", str(EX / "codex-home"), "--provider", "codex"))
    rejected = [c for c in gt["calls"] if c.get("expect_rejected")]
    assert len(rejected) == 1 and "config.ini" in rejected[0]["input"]
    assert (got[f"{gt['cwd']}/config.ini"]["ops"], got[f"{gt['cwd']}/config.ini"]["failed"]) == ({}, {"update": 1})
    res = json.loads((EX / "codex-ground-truth" / "resumed.json").read_text())
    cats = [c for c in res["calls"] if c["name"] == "exec_command" and c["arguments"]["cmd"].startswith("cat ")]
    assert cats
    assert got[f"{res['cwd']}/notes.md"]["ops"].get("shell:read") == len(cats)
    p = cli("recover", "--codex-home", str(EX / "codex-home"), "--provider", "codex", "--file",
            f"{gt['cwd']}/config.ini", "--format", "json")
    sm = jrows(p)[-1]
    assert p.returncode == 1 and sm["failed_calls"] == 1 and "apply_patch" in sm["message"]
