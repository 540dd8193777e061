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


# -- pi 0.73.1 (tests/realclient/pi/scenarios.py `images`: `pi @red.png -p ...`, a read of blue.png) ------

@pytest.fixture(scope="module")
def pi(tmp_path_factory):
    from tests.realclient.pi import fixtures as pi_fixtures
    from tests.realclient.pi import runner as pi_runner

    pi_fixtures.require_pi()
    return pi_runner.run_scenario("images", tmp_path_factory.mktemp("pi-image-rc"), pi_fixtures.clientmod.PINNED_VERSION)


def test_pi_images_are_the_attached_and_the_read_files_bytes(pi, tmp_path):
    from tests.realclient.common.images import BLUE, RED

    x = ("--pi-home", pi["agent_dir"])
    out = tmp_path / "imgs"
    p = cli("image", *x, "--out", str(out), "--format", "json")
    rows = jrows(p)
    ims = [r for r in rows if r["kind"] == "image"]
    assert p.returncode == 0, p.stderr
    by = {r["carrier"]: r for r in ims}
    assert len(ims) == 2 and set(by) == {"block", "tool_result"}
    att, view = by["block"], by["tool_result"]
    [sid] = [s["id"] for s in pi["sessions"]]
    assert att["provider"] == view["provider"] == "pi" and att["session_id"] == view["session_id"] == sid
    # the bytes pi wrote are the files' own (base64 in the session file; small: not resized)
    assert att["sha256"] == hashlib.sha256(RED).hexdigest() and att["size"] == len(RED)
    assert att["media_type"] == view["media_type"] == "image/png" and att["tool_use_id"] is None
    [read] = [c for c in pi["tool_calls"] if c["name"] == "read"]
    assert view["sha256"] == hashlib.sha256(BLUE).hexdigest() and view["tool_use_id"] == read["id"]
    assert Path(att["written"]).read_bytes() == RED and Path(view["written"]).read_bytes() == BLUE
    assert rows[-1]["images"] == 2 and rows[-1]["written"] == 2


def test_pi_plan_names_why_there_is_none(pi):
    p = cli("plan", "--pi-home", pi["agent_dir"], "--format", "json")
    rows = jrows(p)
    assert p.returncode == 1, p.stderr
    assert not [r for r in rows if r["kind"] == "plan"]
    assert "No plan mode" in rows[-1]["lacks"]["pi"]


# -- Qwen Code 0.24.4 (tests/realclient/qwen/scenarios.py `plan_images`: three todo_write calls, a prompt with
# an @red.png reference, a read_file of blue.png; the mock keeps every request body: SSIFT_MOCK_DUMP) ------

@pytest.fixture(scope="module")
def qwen(tmp_path_factory):
    import os

    from tests.realclient.common import host
    from tests.realclient.qwen import client as qwen_client
    from tests.realclient.qwen import runner as qwen_runner

    host.require(qwen_client, qwen_client.PINNED_VERSION, "Qwen Code real-client")
    root = tmp_path_factory.mktemp("qwen-plan-image-rc")
    old = os.environ.get("SSIFT_MOCK_DUMP")
    os.environ["SSIFT_MOCK_DUMP"] = "1"
    try:
        truth = qwen_runner.run_scenario("plan_images", root)
    finally:
        if old is None:
            os.environ.pop("SSIFT_MOCK_DUMP")
        else:
            os.environ["SSIFT_MOCK_DUMP"] = old
    return truth, root / "plan_images"


def _jpeg_size(b: bytes) -> tuple[int, int]:
    """(width, height) from a JPEG's SOF segment."""
    i = 2
    while i < len(b):
        assert b[i] == 0xFF, "not a JPEG segment"
        m, n = b[i + 1], int.from_bytes(b[i + 2:i + 4], "big")
        if m in (0xC0, 0xC1, 0xC2):
            return int.from_bytes(b[i + 7:i + 9], "big"), int.from_bytes(b[i + 5:i + 7], "big")
        i += 2 + n
    raise AssertionError("no SOF segment")


def test_qwen_plan_is_the_last_todo_write_checklist(qwen):
    from tests.realclient.qwen.scenarios import TODO_STEPS

    truth, _ = qwen
    x = ("--qwen-home", truth["qwen_dir"])
    p = cli("plan", *x, "--format", "json")
    rows = jrows(p)
    assert p.returncode == 0, p.stderr
    [pl] = [r for r in rows if r["kind"] == "plan"]
    calls = [c for c in truth["tool_calls"] if c["name"] == "todo_write"]
    assert len(calls) == 3
    assert pl["provider"] == "qwen-code" and pl["plan_kind"] == "checklist" and pl["source"] == "todo_write"
    assert pl["steps"] == [{"step": t["content"], "status": t["status"]} for t in calls[-1]["input"]["todos"]]
    assert [s["step"] for s in pl["steps"]] == TODO_STEPS and {s["status"] for s in pl["steps"]} == {"completed"}
    assert pl["updates"] == 3 and pl["failed_updates"] == 0
    assert pl["session_id"] == truth["sessions"][0]["id"] and rows[-1]["bound"] == 1


def test_qwen_images_are_the_bytes_the_client_sent(qwen, tmp_path):
    import base64
    import glob

    truth, s_dir = qwen
    x = ("--qwen-home", truth["qwen_dir"])
    p = cli("image", *x, "--out", str(tmp_path / "imgs"), "--format", "json")
    rows = jrows(p)
    assert p.returncode == 0, p.stderr
    ims = [r for r in rows if r["kind"] == "image"]
    by = {r["carrier"]: r for r in ims}
    assert len(ims) == 2 and set(by) == {"block", "tool_result"}
    att, view = by["block"], by["tool_result"]
    [read] = [c for c in truth["tool_calls"] if c["name"] == "read_file"]
    assert view["tool_use_id"] == read["id"] and att["tool_use_id"] is None
    # Qwen re-encodes each image as JPEG before sending it: the recorded bytes are the ones the model got
    sent = set()
    for f in glob.glob(str(s_dir / "mock-bodies" / "*.json")):
        for m in json.loads(Path(f).read_text())["messages"]:
            for part in m.get("content") if isinstance(m.get("content"), list) else []:
                if part.get("type") == "image_url":
                    sent.add(hashlib.sha256(base64.b64decode(part["image_url"]["url"].split(",", 1)[1])).hexdigest())
    assert {att["sha256"], view["sha256"]} == sent and len(sent) == 2
    a, v = Path(att["written"]).read_bytes(), Path(view["written"]).read_bytes()
    assert att["media_type"] == view["media_type"] == "image/jpeg"
    assert _jpeg_size(a) == (4, 3) and _jpeg_size(v) == (2, 2)  # red.png is 4x3, blue.png 2x2
    assert rows[-1]["images"] == 2


# -- Gemini CLI 0.61.0 (tests/realclient/gemini/scenarios_plan_image.py `plan_images`: four write_todos calls, the
# second refused by the client; a prompt with @red.png, a read_file of blue.png). Before: both commands answered
# "its reader reads no plan / inline image" (exit 1) ------

@pytest.fixture(scope="module")
def gemini(tmp_path_factory):
    from tests.realclient.gemini import client as gemini_client
    from tests.realclient.gemini import runner as gemini_runner
    from tests.realclient.common import host

    host.require(gemini_client, gemini_client.PINNED_VERSION, "Gemini CLI real-client")
    return gemini_runner.run_scenario("tests.realclient.gemini.scenarios_plan_image:plan_images",
                                      tmp_path_factory.mktemp("gemini-plan-image-rc"))


def test_gemini_plan_is_the_last_write_todos_checklist_the_client_took(gemini):
    from tests.realclient.gemini.scenarios_plan_image import STEPS

    p = cli("plan", "--gemini-home", gemini["gemini_dir"], "--format", "json")
    rows = jrows(p)
    assert p.returncode == 0, p.stderr
    [pl] = [r for r in rows if r["kind"] == "plan"]
    calls = [c for c in gemini["tool_calls"] if c["name"] == "write_todos"]
    assert len(calls) == 4 and all(c["served"] for c in calls)
    assert pl["provider"] == "gemini-cli" and pl["plan_kind"] == "checklist" and pl["source"] == "write_todos"
    assert pl["steps"] == [{"step": t["description"], "status": t["status"]} for t in calls[-1]["args"]["todos"]]
    assert [s["step"] for s in pl["steps"]] == STEPS and {s["status"] for s in pl["steps"]} == {"completed"}
    # the second call (two steps in progress) was refused by the client's validation: not an update
    assert pl["updates"] == 3 and pl["failed_updates"] == 1
    assert pl["session_id"] == gemini["runs"][0]["session_id"] and rows[-1]["bound"] == 1 and rows[-1]["lacks"] is None


def test_gemini_images_are_the_attached_and_the_read_files_bytes(gemini, tmp_path):
    from tests.realclient.common.images import BLUE, RED

    x = ("--gemini-home", gemini["gemini_dir"])
    p = cli("image", *x, "--out", str(tmp_path / "imgs"), "--format", "json")
    rows = jrows(p)
    assert p.returncode == 0, p.stderr
    ims = [r for r in rows if r["kind"] == "image"]
    by = {r["carrier"]: r for r in ims}
    assert len(ims) == 2 and set(by) == {"block", "tool_result"}
    att, view = by["block"], by["tool_result"]
    assert att["provider"] == view["provider"] == "gemini-cli"
    assert att["session_id"] == view["session_id"] == gemini["runs"][0]["session_id"]
    # Gemini CLI sends a small PNG as it is: the recorded bytes are the files' own
    assert att["sha256"] == hashlib.sha256(RED).hexdigest() and att["size"] == len(RED)
    assert view["sha256"] == hashlib.sha256(BLUE).hexdigest() and att["media_type"] == view["media_type"] == "image/png"
    assert att["tool_use_id"] is None and view["tool_use_id"].startswith("read_file__read_file_")
    assert Path(att["written"]).read_bytes() == RED and Path(view["written"]).read_bytes() == BLUE
    assert rows[-1]["images"] == 2 and rows[-1]["written"] == 2 and rows[-1]["lacks"] is None
    p = cli("image", *x, "--id", view["locator"], "--format", "json")
    assert p.returncode == 0 and [r["sha256"] for r in jrows(p) if r["kind"] == "image"] == [view["sha256"]]


# -- opencode 1.18.33 and Kilo Code 7.7.7 (tests/realclient/opencode/scenarios_plan_image.py `plan_images`: three
# todowrite calls, `run -f red.png`, a read of blue.png; Kilo Code runs the same script with its own binary).
# Before: both commands answered "its reader reads no plan / inline image" (exit 1) ------

OC_SCENARIO = "tests.realclient.opencode.scenarios_plan_image:plan_images"


@pytest.fixture(scope="module", params=["opencode", "kilo-code"])
def octruth(request, tmp_path_factory):
    from tests.realclient.common import host

    if request.param == "opencode":
        from tests.realclient.opencode import client as clientmod
        from tests.realclient.opencode import runner
    else:
        from tests.realclient.kilo import client as clientmod  # type: ignore[no-redef]
        from tests.realclient.kilo import runner  # type: ignore[no-redef]
    host.require(clientmod, clientmod.PINNED_VERSION, f"{request.param} real-client")
    truth = runner.run_scenario(OC_SCENARIO, tmp_path_factory.mktemp(f"{request.param}-plan-image-rc"))
    flag = "--opencode-home" if request.param == "opencode" else "--kilo-home"
    return request.param, flag, truth


def test_opencode_and_kilo_plan_is_the_last_todowrite_checklist(octruth):
    from tests.realclient.opencode.scenarios_plan_image import STEPS

    prov, flag, truth = octruth
    p = cli("plan", flag, truth["data_dir"], "--format", "json")
    rows = jrows(p)
    assert p.returncode == 0, p.stderr
    [pl] = [r for r in rows if r["kind"] == "plan"]
    calls = [c for c in truth["tool_calls"] if c["name"] == "todowrite"]
    assert len(calls) == 3
    assert pl["provider"] == prov and pl["plan_kind"] == "checklist" and pl["source"] == "todowrite"
    assert pl["steps"] == [{"step": t["content"], "status": t["status"]} for t in calls[-1]["input"]["todos"]]
    assert [s["step"] for s in pl["steps"]] == STEPS and {s["status"] for s in pl["steps"]} == {"completed"}
    assert pl["updates"] == 3 and pl["failed_updates"] == 0 and pl["notes"] == []  # the todo table agrees
    assert pl["session_id"] == truth["session_ids_from_client_events"][0] and rows[-1]["bound"] == 1


def test_opencode_and_kilo_images_are_the_attached_and_the_read_files_bytes(octruth, tmp_path):
    from tests.realclient.common.images import BLUE, RED

    prov, flag, truth = octruth
    x = (flag, truth["data_dir"])
    p = cli("image", *x, "--out", str(tmp_path / "imgs"), "--format", "json")
    rows = jrows(p)
    assert p.returncode == 0, p.stderr
    ims = [r for r in rows if r["kind"] == "image"]
    by = {r["carrier"]: r for r in ims}
    assert len(ims) == 2 and set(by) == {"block", "tool_result"}
    att, view = by["block"], by["tool_result"]
    assert att["provider"] == view["provider"] == prov
    # `run -f red.png`: a file part named red.png, the file's own bytes as a data: URL
    assert att["path"] == "red.png" and att["sha256"] == hashlib.sha256(RED).hexdigest() and att["size"] == len(RED)
    [read] = [c for c in truth["tool_calls"] if c["name"] == "read"]
    assert view["sha256"] == hashlib.sha256(BLUE).hexdigest() and view["tool_use_id"] == read["id"]
    assert att["media_type"] == view["media_type"] == "image/png" and att["tool_use_id"] is None
    assert Path(att["written"]).read_bytes() == RED and Path(view["written"]).read_bytes() == BLUE
    assert rows[-1]["images"] == 2 and rows[-1]["written"] == 2 and rows[-1]["lacks"] is None
    p = cli("image", *x, "--id", view["locator"], "--format", "json")
    assert p.returncode == 0 and [r["sha256"] for r in jrows(p) if r["kind"] == "image"] == [view["sha256"]]


def test_opencode_plan_falls_back_on_the_todo_table_and_says_when_it_differs(octruth, tmp_path):
    """Mutations of the real client's database (hand-made from its rows, said here): the todowrite parts
    deleted (a session whose calls are gone: the todo table is the plan), then a todo row changed (the
    table no longer agrees with the last call: a note)."""
    import sqlite3

    prov, flag, truth = octruth
    src = Path(truth["data_dir"])
    db = next(f for f in src.glob("*.db"))
    d1 = tmp_path / "nocalls"
    d1.mkdir()
    con = sqlite3.connect(d1 / db.name)
    with sqlite3.connect(db) as orig:  # the store is in WAL mode: a backup, not a file copy
        orig.backup(con)
    n = con.execute("DELETE FROM part WHERE json_extract(data, '$.tool') = 'todowrite'").rowcount
    con.commit()
    con.close()
    assert n == 3
    rows = jrows(cli("plan", flag, str(d1), "--format", "json"))
    [pl] = [r for r in rows if r["kind"] == "plan"]
    assert pl["plan_kind"] == "checklist" and pl["source"] == "todo store" and pl["updates"] == 0
    assert [s["status"] for s in pl["steps"]] == ["completed"] * 3 and "todo table" in pl["notes"][0]
    d2 = tmp_path / "differs"
    d2.mkdir()
    con = sqlite3.connect(d2 / db.name)
    with sqlite3.connect(db) as orig:  # the store is in WAL mode: a backup, not a file copy
        orig.backup(con)
    con.execute("UPDATE todo SET status = 'pending' WHERE position = 2")
    con.commit()
    con.close()
    [pl] = [r for r in jrows(cli("plan", flag, str(d2), "--format", "json")) if r["kind"] == "plan"]
    assert pl["source"] == "todowrite" and pl["steps"][2]["status"] == "completed"
    assert pl["notes"] == [f"the store's list ({d2 / db.name} (todo table)) differs from the last todowrite call"]


# -- GitHub Copilot CLI 1.0.102 (tests/realclient/copilot/scenarios_plan_image.py: `plan_images` keeps the todo list
# with three sql calls on the session's session.db and views blue.png; `attach_image` sends red.png over ACP as an
# image content block). Before: both commands answered "its reader reads no plan / inline image" (exit 1) ------

@pytest.fixture(scope="module")
def copilot(tmp_path_factory):
    from tests.realclient.common import host
    from tests.realclient.copilot import client as copilot_client
    from tests.realclient.copilot import runner as copilot_runner

    host.require(copilot_client, copilot_client.PINNED_VERSION, "GitHub Copilot CLI real-client")
    root = tmp_path_factory.mktemp("copilot-plan-image-rc")
    return {n: copilot_runner.run_scenario(f"tests.realclient.copilot.scenarios_plan_image:{n}", root)
            for n in ("plan_images", "attach_image")}


def test_copilot_plan_is_the_session_db_todo_list_its_sql_calls_kept(copilot):
    from tests.realclient.copilot.scenarios_plan_image import STEPS

    truth = copilot["plan_images"]
    p = cli("plan", "--copilot-home", truth["copilot_home"], "--format", "json")
    rows = jrows(p)
    assert p.returncode == 0, p.stderr
    [pl] = [r for r in rows if r["kind"] == "plan"]
    sqls = [c for c in truth["tool_calls"] if c["name"] == "sql"]
    assert len(sqls) == 3
    assert pl["provider"] == "copilot-cli" and pl["plan_kind"] == "checklist" and pl["source"] == "session.db todos"
    # the table the client created and the model's INSERT/UPDATEs left: every step done
    assert pl["steps"] == [{"step": s, "status": "done"} for s in STEPS]
    assert pl["updates"] == 3 and pl["failed_updates"] == 0
    assert pl["session_id"] == truth["session_ids_on_disk"][0] and rows[-1]["bound"] == 1
    import shlex

    show = cli(*shlex.split(pl["refetch"])[1:], "--format", "json")
    recs = [json.loads(x) for x in show.stdout.splitlines() if json.loads(x)["kind"] == "record"]
    assert show.returncode == 0 and recs[0]["tool_name"] == "sql" and recs[0]["call_id"] == sqls[-1]["id"], show.stderr


def test_copilot_images_are_the_viewed_and_the_attached_files_bytes(copilot, tmp_path):
    from tests.realclient.common.images import BLUE, RED

    truth = copilot["plan_images"]
    p = cli("image", "--copilot-home", truth["copilot_home"], "--out", str(tmp_path / "a"), "--format", "json")
    rows = jrows(p)
    assert p.returncode == 0, p.stderr
    [view] = [r for r in rows if r["kind"] == "image"]
    [call] = [c for c in truth["tool_calls"] if c["name"] == "view"]
    assert view["carrier"] == "tool_result" and view["tool_use_id"] == call["id"]
    assert view["sha256"] == hashlib.sha256(BLUE).hexdigest() and view["media_type"] == "image/png"
    assert Path(view["written"]).read_bytes() == BLUE
    # -p reads no @file: the prompt's @red.png stays text, no image
    assert rows[-1]["images"] == 1
    truth = copilot["attach_image"]
    p = cli("image", "--copilot-home", truth["copilot_home"], "--out", str(tmp_path / "b"), "--format", "json")
    rows = jrows(p)
    assert p.returncode == 0, p.stderr
    [att] = [r for r in rows if r["kind"] == "image"]
    assert att["carrier"] == "block" and att["tool_use_id"] is None and att["path"].endswith(".png")
    assert att["sha256"] == hashlib.sha256(RED).hexdigest() and Path(att["written"]).read_bytes() == RED
    p = cli("image", "--copilot-home", truth["copilot_home"], "--id", att["locator"], "--format", "json")
    assert p.returncode == 0 and [r["sha256"] for r in jrows(p) if r["kind"] == "image"] == [att["sha256"]]


def test_copilot_plan_says_why_a_session_has_none_and_names_a_plan_file(copilot, tmp_path):
    """`attach_image` ran no sql tool (no session.db): the row says so. Then a plan.md is put into a copy of
    that session's directory (HAND-MADE: plan mode's file, at the path the client's code names,
    `session-state/<id>/plan.md`; not produced by a run here): the row names it."""
    import shutil

    truth = copilot["attach_image"]
    p = cli("plan", "--copilot-home", truth["copilot_home"], "--format", "json")
    rows = jrows(p)
    assert p.returncode == 0, p.stderr
    [pl] = [r for r in rows if r["kind"] == "plan"]
    assert pl["plan_kind"] is None and pl["updates"] == 0 and rows[-1]["bound"] == 0
    assert pl["notes"] == ["no todo list recorded in this session: no session.db in the session directory "
                           "(the sql tool was never used)"]
    home = tmp_path / "copilot"
    shutil.copytree(truth["copilot_home"], home)
    sdir = home / "session-state" / truth["session_ids_on_disk"][0]
    (sdir / "plan.md").write_text("# Plan\n\n1. look\n")
    [pl] = [r for r in jrows(cli("plan", "--copilot-home", str(home), "--format", "json")) if r["kind"] == "plan"]
    assert pl["notes"][-1] == f"plan mode's plan file: {sdir / 'plan.md'} (16 bytes, free text: not read)"


@pytest.fixture(scope="module")
def gemini_plan_mode(tmp_path_factory):
    from tests.realclient.common import host
    from tests.realclient.gemini import client as gemini_client
    from tests.realclient.gemini import runner as gemini_runner

    host.require(gemini_client, gemini_client.PINNED_VERSION, "Gemini CLI real-client")
    return gemini_runner.run_scenario("tests.realclient.gemini.scenarios_plan_image:plan_mode",
                                      tmp_path_factory.mktemp("gemini-plan-mode-rc"))


def test_gemini_plan_mode_binds_the_plan_file_exit_plan_mode_names(gemini_plan_mode):
    """Gemini CLI 0.61.0 headless: enter_plan_mode, write_file into the session's plans dir, exit_plan_mode
    (approved: --yolo). Before: exit 1, 'its reader reads no plan'."""
    from tests.realclient.gemini.scenarios_plan_image import PLAN_TEXT

    truth = gemini_plan_mode
    p = cli("plan", "--gemini-home", truth["gemini_dir"], "--format", "json")
    rows = jrows(p)
    assert p.returncode == 0, p.stderr
    [pl] = [r for r in rows if r["kind"] == "plan"]
    sid = truth["runs"][0]["session_id"]
    want = str(Path(truth["gemini_dir"]) / "tmp" / "gem-plan-mode" / sid / "plans" / "fast-mode.md")
    assert pl["plan_kind"] == "file" and pl["source"] == "exit_plan_mode" and pl["plan_path"] == want
    assert pl["plan_exists"] is True and Path(want).read_text() == PLAN_TEXT
    assert pl["steps"] is None and pl["notes"] == [] and rows[-1]["bound"] == 1
    import shlex

    show = cli(*shlex.split(pl["refetch"])[1:], "--format", "json")
    recs = [json.loads(x) for x in show.stdout.splitlines() if json.loads(x)["kind"] == "record"]
    assert show.returncode == 0 and recs[0]["tool_name"] == "exit_plan_mode", show.stderr
