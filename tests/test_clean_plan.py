"""The dry run says exactly what --apply will do, in the words and counts of `clean scan`: every
candidate of the scan is accounted for once, each with the action --apply then takes. Corpus: a
copy of every real-client sample (examples/: Claude Code, Codex CLI, Gemini CLI -- whose main
session holds its subagent's file -- opencode and Crush, whose sessions are database rows)."""
from __future__ import annotations

import json
import re

from tests.clean_util import cli, corpus


def rows(out: str) -> list[dict]:
    return [json.loads(l) for l in out.splitlines() if l.strip()]


def _line(out: str, start: str) -> str:
    return next(l for l in out.splitlines() if l.startswith(start))


def test_the_dry_run_lists_what_apply_does_with_the_scans_counts_and_words(tmp_path):
    home = corpus(tmp_path / "h")
    common = ["--home", str(home), "--older-than", "1m", "--waive-kept", "--data-dir", str(tmp_path / "d")]
    scan = cli("clean", "scan", *common, agents=False)
    assert scan.returncode == 0, scan.stderr
    summ = re.search(r"^(\d+) candidates \(.*?\) \| (\d+) candidates eligible \| (\d+) candidates blocked "
                     r"\(by (age \d+, live \d+, not kept \d+, delete unsupported (\d+))\)", scan.stdout, re.M)
    assert summ, scan.stdout[-1500:]
    n, eligible, blocked, by, unsupported = summ.groups()
    assert (n, eligible, blocked, unsupported) == ("41", "26", "15", "15")

    dry = cli("clean", "capture", *common, agents=False)
    dj = rows(cli("clean", "capture", *common, "--format", "json", agents=False).stdout)
    line = _line(dry.stdout, "dry run: ")
    # the scan's words and counts, then what --apply does with each part
    assert line == (f"dry run: of {n} candidates, {eligible} candidates eligible: --apply would remove 25 "
                    f"(1 goes with the session that contains it); {blocked} candidates blocked (by {by}): "
                    f"--apply would capture the {unsupported} blocked by delete unsupported, removing nothing, "
                    "and leave 0 as they are; pass --apply to act"), line
    would = {r["session_id"]: r["status"] for r in dj if r["kind"] == "action"}
    assert sorted(set(would.values())) == ["would-capture", "would-remove"]
    assert dj[-1]["would"] == {"captured": 15, "removed": 25}

    app = rows(cli("clean", "capture", *common, "--apply", "--format", "json", agents=False).stdout)
    did = {r["session_id"]: r["status"] for r in app if r["kind"] == "action"}
    assert {k: "would-" + {"removed": "remove", "captured": "capture"}[v] for k, v in did.items()} == would
    assert app[-1]["results"] == dj[-1]["would"]
    skipped = {r["session_id"] for r in dj if r["kind"] == "skipped"}
    assert skipped == {r["session_id"] for r in app if r["kind"] == "skipped"} and len(skipped) == 1
