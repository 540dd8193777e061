"""`plan` and `image` for another agent than Claude Code, on data the REAL client wrote: Codex CLI
0.171.0 (tests/realclient/codex/scenarios_plan_image.py: three ``update_plan`` calls, a prompt with
``--image=red.png``, a ``view_image`` of blue.png). Before: both commands refused a Codex session
("`plan` reads Claude Code's own surfaces", exit 2).

Skips with the missing prerequisite (root, unshare, npm) but FAILS under CI=true."""
from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SCENARIO = "tests.realclient.codex.scenarios_plan_image:plan_image"


def cli(*args: str):
    return subprocess.run([sys.executable, "-m", "sessionsift", *args], capture_output=True, text=True,
                          timeout=300, cwd=REPO)


def jrows(p) -> list[dict]:
    rows = [json.loads(x) for x in p.stdout.splitlines()]
    assert rows and rows[0]["kind"] == "header" and rows[-1]["kind"] == "summary", p.stderr
    return rows


@pytest.fixture(scope="module")
def codex(tmp_path_factory):
    from tests.realclient.codex import client as codex_client
    from tests.realclient.codex import runner as codex_runner
    from tests.realclient.common import host

    host.require(codex_client, codex_client.PINNED_VERSION, "Codex CLI real-client")
    return codex_runner.run_scenario(SCENARIO, tmp_path_factory.mktemp("plan-image-rc"))


def test_codex_plan_is_the_last_update_plan_checklist(codex):
    from tests.realclient.codex.scenarios_plan_image import STEPS

    x = ("--codex-home", codex["codex_home"])
    p = cli("plan", *x, "--format", "json")
    rows = jrows(p)
    plans = [r for r in rows if r["kind"] == "plan"]
    assert p.returncode == 0, p.stderr
    [pl] = plans
    calls = [c for c in codex["calls"] if c["name"] == "update_plan"]
    assert len(calls) == 3
    last = calls[-1]["arguments"]
    assert pl["provider"] == "codex" and pl["plan_kind"] == "checklist" and pl["source"] == "update_plan"
    assert pl["steps"] == last["plan"] and [s["step"] for s in pl["steps"]] == STEPS
    assert pl["explanation"] == last["explanation"] == "Done."
    assert pl["updates"] == 3 and pl["failed_updates"] == 0
    assert pl["session_id"] == codex["thread_ids_reported"][0]
    assert rows[-1]["bound"] == 1 and rows[-1]["lacks"] is None
    # the refetch command shows the binding update_plan call
    import shlex

    argv = shlex.split(pl["refetch"])
    assert argv[0] == "sessionsift"
    show = cli(*argv[1:], "--format", "json")
    recs = [json.loads(x) for x in show.stdout.splitlines() if json.loads(x)["kind"] == "record"]
    assert show.returncode == 0 and recs and recs[0]["tool_name"] == "update_plan", show.stderr


def test_codex_images_are_the_attached_and_the_viewed_files_bytes(codex, tmp_path):
    from tests.realclient.common.images import BLUE, RED

    x = ("--codex-home", codex["codex_home"])
    out = tmp_path / "imgs"
    p = cli("image", *x, "--out", str(out), "--format", "json")
    rows = jrows(p)
    ims = [r for r in rows if r["kind"] == "image"]
    assert p.returncode == 0, p.stderr
    by = {r["carrier"]: r for r in ims}
    assert len(ims) == 2 and set(by) == {"block", "tool_result"}
    att, view = by["block"], by["tool_result"]
    assert att["sha256"] == hashlib.sha256(RED).hexdigest() and att["size"] == len(RED)
    assert att["handle"] == 1 and att["path"] == "red.png" and att["media_type"] == "image/png"
    viewed = next(c for c in codex["calls"] if c["name"] == "view_image")
    assert view["sha256"] == hashlib.sha256(BLUE).hexdigest() and view["tool_use_id"] == viewed["call_id"]
    assert Path(att["written"]).read_bytes() == RED and Path(view["written"]).read_bytes() == BLUE
    assert rows[-1]["images"] == 2 and rows[-1]["written"] == 2
    # one image by its locator, and by its [Image #N] handle
    p = cli("image", *x, "--id", view["locator"], "--format", "json")
    assert p.returncode == 0 and [r["sha256"] for r in jrows(p) if r["kind"] == "image"] == [view["sha256"]]
    p = cli("image", *x, "--id", "1", "--format", "json")
    assert p.returncode == 0 and [r["sha256"] for r in jrows(p) if r["kind"] == "image"] == [att["sha256"]]
