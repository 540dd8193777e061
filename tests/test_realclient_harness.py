"""Tests of the real-client harness itself (tests/realclient): the mock API, the mutations, the committed
sample corpus, and a live run of the fast scenarios with the real Claude Code client."""
from __future__ import annotations

import json
import urllib.request
import zlib
from pathlib import Path

import pytest

from tests.realclient import client as clientmod
from tests.realclient import census as censusmod
from tests.realclient.mock_api import (
    COMPACT_MARKER, Conversation, MockAnthropic, Script, Turn, materialise, parse_sse, stream_message, text,
    thinking, tool,
)
from tests.realclient.mutations import MUTATIONS, NUL_RUN
from tests.realclient.runner import FAKE_KEY, encode_project_dir
from tests.realclient.scenarios import ALL, session_uuid, tiny_png

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples"
HOME = EXAMPLES / "claude-home"


def _records(path: Path) -> list[dict]:
    return [json.loads(l) for l in path.read_bytes().splitlines() if l.strip()]


def _tool_uses(recs: list[dict]) -> list[dict]:
    out = []
    for r in recs:
        if r.get("type") == "assistant":
            for b in r["message"].get("content") or []:
                if b.get("type") == "tool_use":
                    out.append(b)
    return out


# ----------------------------------------------------------------------------------------------- mock SSE

def test_sse_stream_is_well_formed():
    turn = Turn([thinking("pondering the request at some length"), text("x" * 95),
                 tool("Write", file_path="/w/a.txt", content="hello\n" * 20)])
    blocks = materialise(turn, "ns", "k#0")
    events = parse_sse(b"".join(stream_message(blocks, "claude-mock", "msg_01x", turn.stop_reason, {"messages": []})))
    kinds = [e for e, _ in events]
    assert kinds[0] == "message_start" and kinds[-2:] == ["message_delta", "message_stop"]
    assert all(d["type"] == e for e, d in events)  # event name == data.type
    # every block: start, >=1 delta, stop, in index order
    starts = [d for e, d in events if e == "content_block_start"]
    stops = [d["index"] for e, d in events if e == "content_block_stop"]
    assert [s["index"] for s in starts] == stops == [0, 1, 2]
    deltas = {i: [d["delta"] for e, d in events if e == "content_block_delta" and d["index"] == i] for i in stops}
    assert "".join(d["thinking"] for d in deltas[0] if d["type"] == "thinking_delta") == blocks[0]["thinking"]
    assert [d["type"] for d in deltas[0]][-1] == "signature_delta" and deltas[0][-1]["signature"]
    assert "".join(d["text"] for d in deltas[1]) == "x" * 95
    assert starts[2]["content_block"]["name"] == "Write" and starts[2]["content_block"]["id"].startswith("toolu_01")
    assert json.loads("".join(d["partial_json"] for d in deltas[2])) == blocks[2]["input"]
    md = dict(events)["message_delta"]
    assert md["delta"]["stop_reason"] == "tool_use" and md["usage"]["output_tokens"] > 0


def test_tool_ids_are_deterministic():
    t = Turn([tool("Read", file_path="/x")])
    assert materialise(t, "s", "k#0")[0]["id"] == materialise(t, "s", "k#0")[0]["id"]
    assert materialise(t, "s", "k#0")[0]["id"] != materialise(t, "s", "k#1")[0]["id"]


def _post(url: str, body: dict) -> tuple[int, bytes, str]:
    req = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                 headers={"content-type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as r:
        return r.status, r.read(), r.headers.get("content-type", "")


def test_mock_server_routes_and_logs(tmp_path):
    script = Script([Conversation("[S P1]", [Turn([tool("Bash", command="ls")]), Turn([text("done")])]),
                     Conversation("SUBAGENT-A", [Turn([text("sub reply")])])], summary="SUMMARY-X")
    log = tmp_path / "req.jsonl"
    tools = [{"name": "Bash", "input_schema": {}}]
    with MockAnthropic(script, str(log)) as m:
        u = m.base_url + "/v1/messages?beta=true"
        # 1st main turn, streaming
        st, body, ct = _post(u, {"model": "m", "stream": True, "tools": tools,
                                 "messages": [{"role": "user", "content": "[S P1] go"}]})
        ev = parse_sse(body)
        assert ct.startswith("text/event-stream") and ev[-1][0] == "message_stop"
        assert [d for e, d in ev if e == "content_block_start"][0]["content_block"]["name"] == "Bash"
        # 2nd main turn, non-streaming: one assistant message after the marker -> turn 1
        st, body, ct = _post(u, {"model": "m", "tools": tools, "messages": [
            {"role": "user", "content": [{"type": "text", "text": "[S P1] go"}]},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "Bash", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "x"}]}]})
        msg = json.loads(body)
        assert msg["content"] == [{"type": "text", "text": "done"}] and msg["stop_reason"] == "end_turn"
        # subagent routed by its marker
        msg = json.loads(_post(u, {"model": "m", "tools": tools, "messages": [
            {"role": "user", "content": "SUBAGENT-A: do it"}]})[1])
        assert msg["content"][0]["text"] == "sub reply"
        # compaction request
        msg = json.loads(_post(u, {"model": "m", "messages": [
            {"role": "user", "content": "[S P1] go"}, {"role": "assistant", "content": "ok"},
            {"role": "user", "content": COMPACT_MARKER + ", please"}]})[1])
        assert "SUMMARY-X" in msg["content"][0]["text"]
        # side call without tools (title generation etc.) -> short default
        msg = json.loads(_post(u, {"model": "haiku", "messages": [{"role": "user", "content": "title?"}]})[1])
        assert msg["stop_reason"] == "end_turn" and msg["content"][0]["type"] == "text"
        # count_tokens
        assert json.loads(_post(m.base_url + "/v1/messages/count_tokens", {"messages": []})[1])["input_tokens"] >= 1
    routes = [json.loads(l)["route"] for l in log.read_text().splitlines()]
    assert routes[:5] == ["script:[S P1]#0", "script:[S P1]#1", "script:SUBAGENT-A#0", "compact", "default"]
    assert routes[5] == "count_tokens"


# ----------------------------------------------------------------------------------------------- helpers

def test_tiny_png_is_a_valid_png():
    png = tiny_png(4, 4)
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and png[12:16] == b"IHDR"
    idat_len = int.from_bytes(png[33:37], "big")
    raw = zlib.decompress(png[41:41 + idat_len])
    assert len(raw) == 4 * (1 + 4 * 3)


def test_encode_project_dir_and_session_ids():
    assert encode_project_dir("/tmp/ssift-rc/files_basic/work") == "-tmp-ssift-rc-files-basic-work"
    assert session_uuid("a") == session_uuid("a") != session_uuid("b")


def test_prerequisite_messages_name_the_missing_tool(monkeypatch):
    monkeypatch.setattr(clientmod.shutil, "which", lambda name: None if name == "unshare" else "/usr/bin/" + name)
    monkeypatch.setattr(clientmod.os, "geteuid", lambda: 0)
    assert clientmod.check_host() == ["`unshare` not found on PATH"]
    monkeypatch.setattr(clientmod.os, "geteuid", lambda: 1000)
    assert any(p.startswith("not root") for p in clientmod.check_host())


def test_client_cache_is_outside_the_clone():
    assert not str(clientmod.cache_dir()).startswith(str(REPO))
    assert clientmod.executable().name == "claude"


# ----------------------------------------------------------------------------------------------- mutations

SAMPLE = (b'{"type":"user","uuid":"u1","timestamp":"2026-01-01T00:00:00Z","message":{"content":"hello"}}\n'
          + b'{"type":"assistant","uuid":"a1","timestamp":"2026-01-01T00:00:01Z","message":{"content":"'
          + b"x" * 100 + b'"}}\n'
          + b'{"type":"system","uuid":"s1","timestamp":"2026-01-01T00:00:02Z","subtype":"turn_duration"}\n'
          + b'{"type":"last-prompt","lastPrompt":"hello","sessionId":"s"}\n')


def _parse_lines(b: bytes):
    ok, bad = [], []
    for i, l in enumerate(b.split(b"\n")):
        if not l:
            continue
        try:
            ok.append(json.loads(l.decode("utf-8")))
        except Exception:
            bad.append(i)
    return ok, bad


@pytest.mark.parametrize("src", ["sample", "real"])
def test_mutations_do_what_they_claim(src):
    data = SAMPLE if src == "sample" else (HOME / next(iter(
        json.loads((EXAMPLES / "crash" / "manifest.json").read_text())["source"].split("claude-home/")[1:]))).read_bytes()
    n_lines = len(data.splitlines())

    out, info = MUTATIONS["nul_run_inside_line"](data)
    assert out[info["nul_offset"]:info["nul_offset"] + info["nul_length"]] == b"\0" * info["nul_length"]
    assert info["nul_length"] > 0 and len(out) == len(data) and out.endswith(b"\n")
    assert _parse_lines(out)[1] == [info["line_index"]]

    out, info = MUTATIONS["nul_run_at_end"](data)
    assert out.startswith(data) and out.endswith(b"\0" * NUL_RUN) and out[:info["intact_bytes"]] == data

    out, info = MUTATIONS["nul_run_then_record"](data)
    line = out.split(b"\n")[info["line_index"]]
    assert line.startswith(b"\0" * NUL_RUN)
    assert json.loads(line.lstrip(b"\0")) == json.loads(data.splitlines()[-1])
    assert json.loads(out[info["record_offset"]:].split(b"\n")[0]) == json.loads(info["record"])

    out, info = MUTATIONS["torn_final_line"](data)
    assert not out.endswith(b"\n") and len(out) < len(data)
    ok, bad = _parse_lines(out)
    assert len(ok) == n_lines - 1 and bad == [n_lines - 1]

    out, info = MUTATIONS["invalid_utf8_in_string"](data)
    with pytest.raises(UnicodeDecodeError):
        out.decode("utf-8")
    assert out[info["bad_offset"]:info["bad_offset"] + 3] == bytes.fromhex(info["bad_bytes"])
    ok, bad = _parse_lines(out)
    assert bad == [info["line_index"]] and len(ok) == n_lines - 1
    # the damaged line is still JSON-shaped once the bad bytes are replaced
    fixed = out.split(b"\n")[info["line_index"]].decode("utf-8", "replace")
    assert json.loads(fixed)["type"]


@pytest.mark.parametrize("name", ["destroyed_tool_result", "destroyed_prompt", "destroyed_assistant"])
def test_zero_fill_mutations_destroy_one_record_of_their_kind(name):
    data = (EXAMPLES / json.loads((EXAMPLES / "crash" / "manifest.json").read_text())["source"]).read_bytes()
    out, info = MUTATIONS[name](data)
    a, b = data.split(b"\n"), out.split(b"\n")
    assert len(a) == len(b) and len(out) == len(data)
    diff = [i for i, (x, y) in enumerate(zip(a, b)) if x != y]
    assert diff == [info["line_index"]] and set(b[diff[0]]) == {0}
    gone = json.loads(a[diff[0]])
    assert gone["type"] == info["type"] and gone["uuid"] == info["uuid"]
    assert info["children"] and all(json.loads(a[c - 1])["parentUuid"] == gone["uuid"] for c in info["children"])


def test_committed_crash_files_match_manifest():
    man = json.loads((EXAMPLES / "crash" / "manifest.json").read_text())
    src = (EXAMPLES / man["source"]).read_bytes()
    assert len(src) == man["source_bytes"]
    assert set(man["mutations"]) == set(MUTATIONS)
    for name, m in man["mutations"].items():
        assert (EXAMPLES / m["file"]).read_bytes() == MUTATIONS[name](src)[0], name
        assert m["doc"].startswith("Imitates")


# ----------------------------------------------------------------------------------------------- committed corpus

def _check_run(run, *, check_disk: bool) -> None:
    gt = run.ground_truth
    assert run.transcript.is_file(), run.transcript
    recs = _records(run.transcript)
    assert {r.get("sessionId") for r in recs if r.get("sessionId")} == {gt["session_id"]}
    seen = {(b["id"], b["name"]) for b in _tool_uses(recs)}
    for sub in run.subagent_transcripts:
        seen |= {(b["id"], b["name"]) for b in _tool_uses(_records(sub))}
    scripted = {(t["id"], t["name"]) for t in gt["tool_uses"] if t["served"]}
    assert scripted and scripted <= seen, scripted - seen
    # every prompt the runner typed is in the transcript
    users = [r["message"]["content"] for r in recs if r.get("type") == "user"
             and isinstance(r["message"].get("content"), str)]
    for p in gt["prompts"]:
        assert any(p["text"] in u for u in users), p["text"]
    written = {t["input"]["file_path"] for t in gt["tool_uses"] if t["name"] in ("Write", "Edit")
               and "{" not in t["input"]["file_path"]}
    assert written <= set(gt["expected_files"]), written - set(gt["expected_files"])
    for path, exp in gt["expected_files"].items():
        assert gt["disk_files"].get(path) == exp, path
        if check_disk:
            import hashlib
            assert hashlib.sha256(Path(path).read_bytes()).hexdigest() == exp["sha256"], path
    for sa in gt["subagents"]:
        metas = [json.loads(m.read_text()) for m in (run.transcript.parent / gt["session_id"] / "subagents")
                 .glob("*.meta.json")]
        assert sa["tool_use_id"] in {m["toolUseId"] for m in metas}
    for bg in gt["background_tasks"]:
        assert bg["output_file_exists"] == bg["expected_completed"], bg


def test_committed_corpus_matches_ground_truth(realclient_examples):
    assert set(realclient_examples.runs) == set(ALL) & set(realclient_examples.runs)
    assert {"files_basic", "bash_background", "subagents", "interactive", "plan_mode", "monitor",
            "tasks"} <= set(realclient_examples.runs)
    assert realclient_examples.client_version == clientmod.PIN  # the committed corpus: the pin's
    for run in realclient_examples:
        _check_run(run, check_disk=False)


def test_committed_corpus_has_the_interesting_shapes():
    c = json.loads((EXAMPLES / "census.json").read_text())["overall"]
    for t in ("file-history-snapshot", "queue-operation", "attachment", "last-prompt"):
        assert c["types"].get(t, 0) > 0, t
    assert c["subtypes"].get("system/turn_duration", 0) > 0 and c["subtypes"].get("system/compact_boundary") == 1
    assert {"plan_mode", "plan_mode_exit", "queued_command", "edited_text_file"} <= set(c["attachments"])
    assert {"Write", "Edit", "Read", "Bash", "Agent", "Monitor", "ExitPlanMode", "TaskCreate", "TodoWrite",
            "AskUserQuestion"} <= set(c["tool_uses"])
    assert c["content_blocks"].get("assistant:thinking", 0) > 0


def test_committed_census_is_current():
    assert json.loads((EXAMPLES / "census.json").read_text()) == json.loads(
        json.dumps(censusmod.census(HOME), sort_keys=True))


def test_committed_corpus_holds_no_secrets():
    for f in EXAMPLES.rglob("*"):
        if f.is_file():
            b = f.read_bytes()
            assert b"sk-ant-" not in b and FAKE_KEY.encode() not in b, f
            assert f.suffix != ".key", f
    assert not (HOME / ".claude.json").exists() and not (HOME / "settings.json").exists()


def test_committed_plan_mode_answers_and_plan_file():
    gt = json.loads((EXAMPLES / "ground-truth" / "plan_mode.json").read_text())
    recs = _records(HOME / gt["project_dir"] / f"{gt['session_id']}.jsonl")
    answers = [r["toolUseResult"]["answers"] for r in recs if r.get("type") == "user"
               and isinstance(r.get("toolUseResult"), dict) and "answers" in r["toolUseResult"]]
    assert answers == [{"Which greeting style should greet() use?": "Casual"}]
    assert [d["needle"] for d in gt["dialogs_answered"]][:1] == ["Which greeting style should greet() use?"]
    plan_writes = [t for t in _tool_uses(recs) if t["name"] == "Write" and "/plans/" in t["input"]["file_path"]]
    assert len(plan_writes) == 1
    plan = HOME / "plans" / Path(plan_writes[0]["input"]["file_path"]).name
    assert plan.read_text() == plan_writes[0]["input"]["content"]


def test_committed_live_snapshot_is_a_busy_registry_row():
    rows = [json.loads(p.read_text()) for p in (EXAMPLES / "live-snapshots").rglob("sessions/*.json")]
    gt = json.loads((EXAMPLES / "ground-truth" / "interactive.json").read_text())
    assert any(r["sessionId"] == gt["session_id"] and r["status"] == "busy" and r["kind"] == "interactive"
               for r in rows), rows


# ----------------------------------------------------------------------------------------------- live (real client)

@pytest.mark.realclient
def test_live_corpus_matches_ground_truth(realclient_corpus):
    assert realclient_corpus.client_version == clientmod.PINNED_VERSION
    for run in realclient_corpus:
        _check_run(run, check_disk=True)


@pytest.mark.realclient
def test_live_interactive_only_records(realclient_corpus):
    run = realclient_corpus["interactive"]
    recs = _records(run.transcript)
    types = {r["type"] for r in recs}
    subtypes = {r.get("subtype") for r in recs if r["type"] == "system"}
    assert {"file-history-snapshot", "file-history-delta"} <= types
    assert {"turn_duration", "compact_boundary"} <= subtypes
    # the shell edit between prompts of a file the session wrote -> edited_text_file with the new text
    edited = [r["attachment"] for r in recs if r["type"] == "attachment"
              and r["attachment"]["type"] == "edited_text_file"]
    assert [e["filename"] for e in edited] == [str(run.cwd / "app.py")] and "APP_MODE" in edited[0]["snippet"]
    assert (run.config_dir / "file-history" / run.session_id).is_dir()
    snaps = list((run.config_dir.parent / "snapshots").rglob("sessions/*.json"))
    assert snaps and json.loads(snaps[0].read_text())["status"] == "busy"
    # print-mode sessions write queue-operation records instead
    assert "queue-operation" in {r["type"] for r in _records(realclient_corpus["files_basic"].transcript)}


@pytest.mark.realclient
def test_live_background_and_agents(realclient_corpus):
    bg = realclient_corpus["bash_background"].ground_truth["background_tasks"]
    assert [b["expected_completed"] for b in bg] == [True, False]
    assert [b["output_file_exists"] for b in bg] == [True, False]
    sub = realclient_corpus["subagents"]
    assert len(sub.subagent_transcripts) == 2
    metas = {json.loads(p.read_text())["description"] for p in sub.subagent_transcripts[0].parent.glob("*.meta.json")}
    assert metas == {s["description"] for s in sub.ground_truth["subagents"]}


# ----------------------------------------------------------------------------------------------- launcher

def test_inner_entry_dispatches_to_the_named_module(tmp_path, monkeypatch):
    """`runner --inside NAME --module M` imports M and runs M.inside when M has one (verbatim), else the
    harness's own inside() with M's scenarios registered (files, audit, live)."""
    import sys
    import types

    from tests.realclient import runner

    calls = []
    fake = types.ModuleType("ssift_fake_scenarios")
    fake.inside = lambda name, root, exe: calls.append(("module", name, root, exe))
    monkeypatch.setitem(sys.modules, "ssift_fake_scenarios", fake)
    monkeypatch.setattr(runner, "inside", lambda name, root, exe: calls.append(("harness", name, root, exe)))
    assert runner.main(["--inside", "x", "--module", "ssift_fake_scenarios", "--root", str(tmp_path),
                        "--exe", "/e"]) == 0
    assert runner.main(["--inside", "y", "--root", str(tmp_path), "--exe", "/e"]) == 0
    assert calls == [("module", "x", tmp_path, "/e"), ("harness", "y", tmp_path, "/e")]


@pytest.mark.parametrize("module, names, own_inside", [
    ("tests.realclient.scenarios_files", ["files_shell"], False),
    ("tests.realclient.scenarios_audit", ["audit_reinjection"], False),
    ("tests.realclient.scenarios_live", ["live_hold", "live_wait", "live_bg_done"], False),
    ("tests.realclient.scenarios_verbatim", ["verbatim_twice"], True),
])
def test_scenario_modules_launch_through_the_runner(module, names, own_inside):
    """Every scenario module is runnable by runner.run_scenario(module=...): its scenarios are either in the
    harness registry once imported, or the module brings its own inside() and scenario table."""
    import importlib

    from tests.realclient import runner
    from tests.realclient.common import netns

    mod = importlib.import_module(module)
    assert mod.MODULE == module
    assert hasattr(mod, "inside") == own_inside
    table = mod.ALL if own_inside else ALL
    assert all(n in table for n in names)
    src = Path(mod.__file__).read_text()
    assert "\"unshare\"" not in src and "argparse" not in src  # the launcher and its CLI live in runner.py only
    # (runner.launch builds the command with the harnesses' shared launcher, common/netns.py)
    assert "netns.inner_command(" in Path(runner.__file__).read_text()
    assert "\"unshare\"" in Path(netns.__file__).read_text()


def test_two_runs_never_share_a_root(tmp_path):
    """Two runs at once, with the real client: two one-off runner calls get fresh roots of their own,
    and two make_examples runs both work at the canonical root the committed corpus was made under
    (/tmp/ssift-rc: its project dir names and ground truth are keyed on the path), each privately
    mounted, so neither removes nor reads the other's files (before: both used /tmp/ssift-rc/<name>)."""
    import subprocess
    import sys
    from concurrent.futures import ThreadPoolExecutor

    from tests.realclient.fixtures import require_realclient

    require_realclient()

    def runner(i: int):
        return subprocess.run([sys.executable, "-m", "tests.realclient.runner", "files_basic"], cwd=REPO,
                              capture_output=True, text=True, timeout=300)

    def make(i: int):
        return subprocess.run([sys.executable, "-m", "tests.realclient.make_examples", "--only", "files_basic",
                               "--out", str(tmp_path / f"ex{i}")], cwd=REPO, capture_output=True, text=True,
                              timeout=400)

    with ThreadPoolExecutor(4) as ex:
        rs = list(ex.map(runner, (1, 2)))
        ms = list(ex.map(make, (1, 2)))
    roots = []
    for r in rs:
        assert r.returncode == 0, r.stderr[-2000:]
        root = next(ln.split(": ", 1)[1] for ln in r.stdout.splitlines() if ln.startswith("root: "))
        gt = json.loads((Path(root) / "files_basic" / "ground-truth.json").read_text())
        assert gt["cwd"] == f"{root}/files_basic/work" and all(t["served"] for t in gt["tool_uses"])
        roots.append(root)
    assert roots[0] != roots[1] and not any(r.startswith("/tmp/ssift-rc/") for r in roots)
    for i, m in enumerate(ms, 1):
        assert m.returncode == 0, m.stderr[-2000:]
        gt = json.loads((tmp_path / f"ex{i}" / "ground-truth" / "files_basic.json").read_text())
        assert gt["cwd"] == "/tmp/ssift-rc/files_basic/work" and all(t["served"] for t in gt["tool_uses"])
        assert gt["session_ids_on_disk"] == [session_uuid("files_basic")]
        assert gt["disk_files"] and {p: v for p, v in gt["disk_files"].items() if p in gt["expected_files"]} == \
            gt["expected_files"]
