"""Usage is a lower bound where the client deleted history, on what the REAL Claude Code client
wrote (tests/realclient/scenarios_history.py, offline): session A typed in the TUI (two prompts,
both in ``history.jsonl``), its transcript aged 10 days, then session B with ``cleanupPeriodDays:
1``: the client's own sweep deletes A's transcript. ``history.jsonl`` keeps A's prompts, so the
day and project they were typed in are known, A's usage is not. Expectations come from the raw
files (history.jsonl parsed here), never from the library. Skips naming the missing
prerequisite; FAILS under CI=true."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest

from tests.realclient import scenarios_history as SH
from tests.realclient.common.host import prereq


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("history-cleanup")
    gt = prereq(SH.run_history_scenario, root)
    gt["root"] = root
    return gt


def _cli(*args: str) -> tuple[int, list[dict]]:
    p = subprocess.run([sys.executable, "-m", "sessionsift", *args, "--format", "json"], capture_output=True,
                       text=True, timeout=300)
    return p.returncode, [json.loads(x) for x in p.stdout.splitlines() if x.strip()]


def _history(cfg: Path) -> list[dict]:
    return [json.loads(x) for x in (cfg / "history.jsonl").read_text().splitlines() if x.strip()]


def test_the_client_deleted_the_transcript_and_kept_its_prompts(run):
    cfg = Path(run["config_dir"])
    a = run["session_id"]
    assert run["print_runs"] == [{"killed_after_script": False, "prompt": 3, "rc": 0}]
    assert a not in run["session_ids_on_disk"] and len(run["session_ids_on_disk"]) == 1
    hist = _history(cfg)
    assert [h["sessionId"] for h in hist] == [a, a]
    assert [h["display"] for h in hist] == [run["prompts"][0]["text"], run["prompts"][1]["text"]]


def test_usage_marks_the_day_and_project_of_the_deleted_session_a_lower_bound(run):
    cfg = Path(run["config_dir"])
    hist = _history(cfg)
    day = datetime.fromtimestamp(hist[0]["timestamp"] / 1000, timezone.utc).strftime("%Y-%m-%d")
    rc, rows = _cli("usage", "daily", "--by", "project", "--timezone", "UTC", "--claude-home", str(cfg))
    assert rc == 0
    periods = [r for r in rows if r["kind"] == "period"]
    (row,) = [r for r in periods if r["period"] == day and r["group"] == hist[0]["project"]]
    assert row["sessions_deleted_by_client"] == 1 and row["tokens_are_lower_bound"] is True
    assert row["cost_complete"] is False and row["cost_is_lower_bound"] is True
    # the responses left on disk are still counted: B's two
    assert row["messages"] == 2
    s = rows[-1]
    assert s["kind"] == "summary" and s["sessions_deleted_by_client"] == 1 and s["tokens_are_lower_bound"] is True
    assert any("deleted by the client" in n for n in s["notes"])


def test_usage_of_part_of_the_home_does_not_count_deleted_sessions(run):
    """Session B named alone: every other session would look deleted; none is counted and the note says why."""
    cfg = Path(run["config_dir"])
    (b,) = run["session_ids_on_disk"]
    rc, rows = _cli("usage", "daily", b, "--claude-home", str(cfg))
    assert rc == 0
    s = rows[-1]
    assert s["sessions_deleted_by_client"] == 0
    assert "sessions the client deleted (history.jsonl) are not counted: the answer covers part of the Claude " \
           "Code home" in s["notes"]


def test_list_shows_the_deleted_session_by_its_prompts(run):
    cfg = Path(run["config_dir"])
    hist = _history(cfg)
    rc, rows = _cli("list", "--claude-home", str(cfg))
    assert rc == 0
    (d,) = [r for r in rows if r["kind"] == "deleted_session"]
    assert d["session_id"] == run["session_id"] and d["deleted_by_client"] is True
    assert d["prompts"] == 2 and d["first_prompt"] == hist[0]["display"] and d["project"] == hist[0]["project"]
    assert [r["session_id"] for r in rows if r["kind"] == "session"] == run["session_ids_on_disk"]
    assert rows[-1]["sessions_deleted_by_client"] == 1
    p = subprocess.run([sys.executable, "-m", "sessionsift", "list", "--claude-home", str(cfg)], capture_output=True,
                       text=True, timeout=300)
    assert "deleted by the client (their prompts only, from history.jsonl): 1 session" in p.stdout
