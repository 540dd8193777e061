"""`usage blocks --live` on a session being written by the REAL Claude Code client: the mock
delays each of the four responses by 3 s, so the transcript grows while the live view runs; every
refresh must come from a file event (the view refreshes on change, not on a loop), its figures
only grow, and the last one equals what a one-shot `usage blocks` reports once the client is done."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import threading
import sys
import time
from pathlib import Path

import pytest

from tests.realclient import scenarios_usage as SU
from tests.realclient.common.netns import stop_group as _stop
from tests.realclient.fixtures import require_realclient

pytestmark = pytest.mark.realclient
REPO = Path(__file__).resolve().parent.parent


def _paths(root: Path) -> tuple[Path, Path]:
    from tests.realclient.runner import encode_project_dir
    from tests.realclient.scenarios import session_uuid

    cfg = root / "usage_live" / "config"
    work = root / "usage_live" / "work"
    return cfg, cfg / "projects" / encode_project_dir(str(work)) / f"{session_uuid('usage_live')}.jsonl"


def test_live_blocks_follow_a_transcript_the_real_client_is_writing(tmp_path):
    require_realclient()
    from tests.realclient.runner import start_scenario

    root = tmp_path / "rc"
    runner = start_scenario("usage_live", root, module=SU.MODULE)
    live = None
    try:
        cfg, transcript = _paths(root)
        from tests.realclient.common.wait import until

        def written() -> bool:
            assert runner.poll() is None or transcript.exists(), "the runner ended before writing"
            return transcript.exists() and transcript.stat().st_size > 0
        until(written, 120, "the client's transcript")
        env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
        live = subprocess.Popen([sys.executable, "-m", "sessionsift", "usage", "blocks", "--live", "--live-for", "120",
                                 "--claude-home", str(cfg), "--format", "json"], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=env, start_new_session=True)
        lines: queue.Queue = queue.Queue()
        threading.Thread(target=lambda: [lines.put(x) for x in live.stdout], daemon=True).start()
        rows = []
        assert runner.wait(timeout=120) == 0
        p = subprocess.run([sys.executable, "-m", "sessionsift", "usage", "blocks", "--claude-home", str(cfg), "--format",
                            "json"], capture_output=True, text=True, env=env)
        final = [json.loads(x) for x in p.stdout.splitlines()]
        windows = [r for r in final if r["kind"] == "window"]
        assert len(windows) == 1
        t_end = time.monotonic() + 45  # a change event, or at worst the 30 s heartbeat
        while time.monotonic() < t_end:
            try:
                rows.append(json.loads(lines.get(timeout=1)))
            except queue.Empty:
                continue
            r = rows[-1]
            if r["kind"] == "refresh" and r["totals"]["messages"] == windows[0]["messages"]:
                break
    finally:
        if live is not None:
            _stop(live)
        _stop(runner)
    header = rows[0]
    assert header["kind"] == "header" and header["live"] is True and header["watcher"] == "watchfiles"
    refreshes = [r for r in rows if r["kind"] == "refresh"]
    msgs = [r["totals"]["messages"] for r in refreshes]
    assert refreshes[0]["reason"] == "start" and all(r["reason"] in ("change", "heartbeat") for r in refreshes[1:])
    assert msgs == sorted(msgs) and msgs[-1] > msgs[0], msgs  # grew while it watched
    assert sum(1 for r in refreshes if r["reason"] == "change") >= 2
    # the last refresh agrees with a one-shot report of the finished transcript
    assert windows[0]["active"] is True and windows[0]["burn_rate"]["tokens_per_minute"] > 0
    last = refreshes[-1]["windows"][0]
    assert (last["messages"], last["total_tokens"], last["cost_usd"]) == \
        (windows[0]["messages"], windows[0]["total_tokens"], windows[0]["cost_usd"])
    assert windows[0]["messages"] >= 4  # the four scripted responses


def test_a_message_streamed_with_a_pause_is_written_with_its_final_usage(tmp_path):
    """Which copy of a message's usage wins, asked of the real client: the mock pauses the stream 4 s
    after the first of three content blocks (message_start said output_tokens 1; message_delta
    brings the final count). The client writes all three block records with the FINAL usage,
    byte-identical (it buffers the message), so copies only differ where a client writes early or
    a replay zeroes them; the per-field maximum is right in every case."""
    require_realclient()
    from tests.realclient.runner import run_scenario

    root = tmp_path / "rc"
    gt = run_scenario("usage_stream", root, module=SU.MODULE)
    cfg = Path(gt["config_dir"])
    t = cfg / gt["project_dir"] / f"{gt['session_id']}.jsonl"
    recs = [json.loads(x) for x in t.read_bytes().splitlines() if x.strip()]
    by_id: dict[str, list[dict]] = {}
    for r in recs:
        if r.get("type") == "assistant":
            by_id.setdefault(r["message"]["id"], []).append(r["message"])
    multi = [ms for ms in by_id.values() if len(ms) == 3]
    assert len(multi) == 1, {k: len(v) for k, v in by_id.items()}
    usages = [json.dumps(m["usage"], sort_keys=True) for m in multi[0]]
    assert len(set(usages)) == 1 and multi[0][0]["usage"]["output_tokens"] > 1
    p = subprocess.run([sys.executable, "-m", "sessionsift", "usage", "session", "--claude-home", str(cfg), "--format",
                        "json"], capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO / "src")})
    row = [json.loads(x) for x in p.stdout.splitlines() if '"kind":"session"' in x][0]
    assert row["messages"] == len(by_id) and row["records_merged"] == sum(len(v) for v in by_id.values())
    assert row["output_tokens"] == sum(ms[0]["usage"]["output_tokens"] for ms in by_id.values())
