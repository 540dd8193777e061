"""Issue 11 on transcripts written by the REAL Claude Code client (tests/realclient/scenarios_census.py
and the harness's own scenarios), run once per test session, in parallel, offline.

Searches, censuses and verdicts say what they did not look at and count what a user means: gated kinds
in the search summary, tool calls, human prompts, collapsed harness payloads, subagent descriptions and
workflow joins, todo state, API-error endings, and the small things.

Skips with the exact missing prerequisite (not root / no unshare / no npm ...), FAILS under CI=true.
"""
from __future__ import annotations

import io
import json
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from sessionsift.cli import main
from tests.realclient.common.host import prereq
from tests.realclient import client as claude_client
from tests.realclient import scenarios_census as SC

SCENARIOS = ("census_queue", "census_recall", "census_ptl", "census_workflow", "census_cmdonly", "subagents", "todos",
             "bash_background")


@pytest.fixture(scope="session")
def rc(tmp_path_factory) -> dict[str, dict]:
    """scenario name -> ground truth (config_dir, session_id, ...), every scenario run once."""
    root = tmp_path_factory.mktemp("census-rc")
    return prereq(SC.run_all, root, SCENARIOS)


def run(args: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err), pytest.raises(SystemExit) as ex:
        main(args)
    return int(ex.value.code or 0), out.getvalue(), err.getvalue()


def cli(gt: dict, *args: str, target: bool = True) -> tuple[int, str, str]:
    return run([*args, *([gt["session_id"]] if target else []), "--claude-home", gt["config_dir"]])


def jcli(gt: dict, *args: str, target: bool = True) -> tuple[int, list[dict]]:
    code, out, _ = cli(gt, *args, "--format", "json", target=target)
    return code, [json.loads(x) for x in out.splitlines() if x.strip()]


def left_out(rows: list[dict]) -> dict[str, int | None]:
    return {x["kind"]: x["further_hits"] for x in rows[-1]["left_out"]}


# --- gated kinds ------------------------------------------------------------------------------


def test_queued_prompt_zero_hits_names_the_kinds_that_hold_it(rc):
    gt = rc["census_queue"]
    code, rows = jcli(gt, "search", SC.QUEUED_TEXT, "-F")
    assert code == 1 and rows[-1]["hits"] == 0
    lo = left_out(rows)
    # the enqueue line (user.queued) and its delivered twin (a queued_command attachment)
    assert lo["user.queued"] == 1 and lo["harness.meta.attachment"] == 1
    assert lo["hook-context"] == 0 and lo["persisted-output"] == 0
    flags = {x["kind"]: x["flag"] for x in rows[-1]["left_out"]}
    assert flags["user.queued"] == "-t user.queued" and flags["harness.meta.attachment"] == "--attachments"
    code, out, _ = cli(gt, "search", SC.QUEUED_TEXT, "-F")
    last = out.strip().splitlines()[-2]  # [-1] is the coverage line
    assert "user.queued 1 more (-t user.queued)" in last and "attachments 1 more (--attachments)" in last
    # the flags the summary names do find them
    for flag in (["-t", "user.queued"], ["--attachments"]):
        code, rows = jcli(gt, "search", SC.QUEUED_TEXT, "-F", *flag)
        assert code == 0 and rows[-1]["hits"] == 1, flag


def test_hook_context_is_named_with_its_flag(rc):
    gt = rc["census_queue"]
    needle = SC.HOOK_TEXT.split(":")[0]
    code, rows = jcli(gt, "search", needle, "-F")
    assert code == 1 and left_out(rows)["hook-context"] == 1
    code, rows = jcli(gt, "search", needle, "-F", "--additional-context")
    hits = [r for r in rows if r["kind"] == "hit"]
    assert code == 0 and [h["attachment"] for h in hits] == ["hook_additional_context"]
    assert "hook-context" not in left_out(rows)


def test_persisted_output_is_named_with_its_flag(rc):
    gt = rc["census_queue"]
    tr = Path(gt["config_dir"]) / gt["project_dir"] / gt["session_id"] / "tool-results"
    assert any(SC.PERSISTED_TAIL in f.read_text() for f in tr.iterdir())  # the client persisted it
    code, rows = jcli(gt, "search", SC.PERSISTED_TAIL, "-F")
    assert code == 1 and left_out(rows)["persisted-output"] == 1
    code, rows = jcli(gt, "search", SC.PERSISTED_TAIL, "-F", "--resolve-persisted")
    assert code == 0 and rows[-1]["hits"] == 1 and "persisted-output" not in left_out(rows)


def test_left_out_counts_are_null_without_a_literal(rc):
    gt = rc["census_queue"]
    code, rows = jcli(gt, "search", "")
    lo = left_out(rows)
    assert lo["user.queued"] is None and lo["hook-context"] is None
    code, rows = jcli(gt, "search", SC.QUEUED_TEXT, "-F", "-m", "1")
    assert left_out(rows)["user.queued"] is None  # -m stops the scan early: not counted


# --- tool calls -------------------------------------------------------------------------------


def _scripted_calls(gt: dict) -> dict[str, int]:
    out: dict[str, int] = {}
    for tu in gt["tool_uses"]:
        if tu["served"]:
            out[tu["name"]] = out.get(tu["name"], 0) + 1
    return out


def test_every_tool_use_is_a_tool_call(rc):
    gt = rc["subagents"]  # main: Agent x2 + Bash; SUBAGENT-A: Read, Write; SUBAGENT-B: Bash
    want = _scripted_calls(gt)
    assert want == {"Agent": 2, "Bash": 2, "Read": 1, "Write": 1}
    for sel in ([], ["-t", "agent.tool.use"]):
        code, rows = jcli(gt, "search", "", "--count-by", "tool", *sel)
        counts = {r["key"]: r["count"] for r in rows if r["kind"] == "count"}
        assert counts == want, sel
        assert {r["of"] for r in rows if r["kind"] == "count"} == {"calls"}
    code, rows = jcli(gt, "search", "", "-t", "agent.tool.use", "-c")
    assert rows[-1]["hits"] == sum(want.values())  # 2.1.258 writes one record per tool_use block
    code, rows = jcli(gt, "search", "", "-t", "agent.communication.sent", "--count-by", "tool")
    assert {r["key"]: r["count"] for r in rows if r["kind"] == "count"} == {"Agent": 2}
    code, rows = jcli(gt, "search", "", "-t", "agent.tool.result", "--count-by", "tool")
    assert {r["key"]: r["count"] for r in rows if r["kind"] == "count"} == want
    assert {r["of"] for r in rows if r["kind"] == "count"} == {"results"}
    code, rows = jcli(rc["census_workflow"], "search", "", "-t", "agent.tool.use", "--count-by", "tool")
    assert {r["key"]: r["count"] for r in rows if r["kind"] == "count"} == {"Workflow": 1, "Bash": 2}


def test_stats_counts_calls_and_errors_per_tool(rc):
    for name, errors in (("subagents", {}), ("census_workflow", {"Bash": 1}), ("census_queue", {})):
        gt = rc[name]
        code, rows = jcli(gt, "stats")
        sm = rows[-1]
        assert sm["tool_calls"] == _scripted_calls(gt), name
        assert sm["tool_errors"] == errors, name
    code, out, _ = cli(rc["census_workflow"], "stats", "--verbose")
    assert "tool calls: Bash 2 calls (1 error), Workflow 1 call; 3 calls, 1 error" in out


def test_stats_tool_calls_are_deduplicated_like_tokens(rc, tmp_path):
    """A replayed copy of a record repeats its tool_use ids and must not count twice. Hand-made: the
    scenarios here never make the client write a same-file replay (REC-020/034 copies after a
    compaction), so the transcript's own tool lines are appended again, byte for byte."""
    gt = rc["census_workflow"]
    src = Path(gt["config_dir"]) / gt["project_dir"] / f"{gt['session_id']}.jsonl"
    dst = tmp_path / "projects" / "-replayed"
    dst.mkdir(parents=True)
    lines = src.read_bytes().splitlines(keepends=True)
    again = [l for l in lines if b'"tool_use"' in l or b'"tool_result"' in l]
    assert len(again) == 6
    (dst / src.name).write_bytes(b"".join(lines + again))
    code, out, _ = run(["stats", "--claude-home", str(tmp_path), "--format", "json"])
    sm = json.loads(out.splitlines()[-1])
    assert sm["tool_calls"] == {"Workflow": 1, "Bash": 2} and sm["tool_errors"] == {"Bash": 1}
    lane = json.loads(out.splitlines()[1])
    assert lane["replayed_lines"] == 6


# --- prompts ----------------------------------------------------------------------------------


def test_human_prompts_account_for_every_prompt_typed(rc):
    cases = {
        # P1, P2 typed normally; Q1 typed while P1's turn was busy (queued, delivered mid-turn)
        "census_queue": {"typed": 3, "sent": 2, "queued": 1, "rewound": 0, "unsent": 0},
        # P1, P3, P5 on the chain; P2 recalled with Escape before any answer; P4 answered, then rewound
        "census_recall": {"typed": 5, "sent": 3, "queued": 0, "rewound": 1, "unsent": 1},
        "subagents": {"typed": 1, "sent": 1, "queued": 0, "rewound": 0, "unsent": 0},
    }
    for name, want in cases.items():
        gt = rc[name]
        code, rows = jcli(gt, "stats")
        assert rows[-1]["human_prompts"] == want, name
        # user.message alone undercounts what the person did
        assert rows[-1]["labels"].get("user.message", 0) < want["typed"] or name == "subagents"
    code, out, _ = cli(rc["census_recall"], "stats", "--verbose")
    assert "human prompts: 5 typed: 3 sent, 0 queued, 1 rewound, 1 unsent" in out
    # a subagent lane's prompt is its seed, not a human prompt
    code, rows = jcli(rc["subagents"], "stats")
    seeds = [r["prompts"] for r in rows if r["kind"] == "lane" and r["is_subagent"]]
    assert seeds == [{"sent": 1, "queued": 0, "rewound": 0, "unsent": 0}] * 2


# --- views people read ------------------------------------------------------------------------

REPO = Path(__file__).resolve().parents[1]
NEWEST = REPO / "examples" / "newest-client" / "2.1.332" / "claude-home"  # written by the real 2.1.332


def test_show_collapses_large_harness_payloads():
    sid = "8414eb07-cca2-5cca-9059-e9baedac31e1"  # files_basic on 2.1.332: prompt_snapshot, skill_listing, ...
    code, out, _ = run(["show", sid, "--turn", "1", "--claude-home", str(NEWEST)])
    code_full, full, _ = run(["show", sid, "--turn", "1", "--full", "--claude-home", str(NEWEST)])
    assert code == code_full == 0
    assert len(full) > 60_000 and len(out) < len(full) / 5  # the turn is mostly harness payload
    lines = [l for l in out.splitlines() if l.startswith("  [") and "collapsed; whole: " in l]
    kinds = {l.split()[0].lstrip("[") for l in lines}
    assert {"prompt_snapshot", "skill_listing", "agent_listing_delta"} <= kinds
    for l in lines:  # the refetch command shows the record whole
        cmd = l.split("whole: ", 1)[1].rstrip("]").split()
        assert cmd[:2] == ["sessionsift", "show"] and cmd[-1] == "--full"
        c, one, _ = run(cmd[1:])
        assert c == 0 and len(one) > 1024 and "collapsed; whole:" not in one
    # JSON keeps every record whole and says which the text view collapsed
    code, jout, _ = run(["show", sid, "--turn", "1", "--format", "json", "--claude-home", str(NEWEST)])
    rows = [json.loads(x) for x in jout.splitlines()]
    recs = [r for r in rows if r["kind"] == "record"]
    snap = [r for r in recs if r["attachment"] == "prompt_snapshot"]
    assert snap and all(r["collapsed"]["kind"] == "prompt_snapshot" and r["record"]["attachment"] for r in snap)
    assert rows[-1]["collapsed"] == len(lines)
    assert all(r["collapsed"] is None for r in recs if r["labels"][:1] == ["user.message"])


def test_show_collapses_the_pinned_clients_listings_but_not_hook_context_or_queued_prompts(rc):
    gt = rc["census_queue"]
    code, out, _ = cli(gt, "show", "--line", "1..20")
    assert "[skill_listing payload, " in out and "[agent_listing_delta payload, " in out
    assert SC.HOOK_TEXT in out and SC.QUEUED_TEXT in out


def test_agents_show_description_type_and_spawn_order(rc):
    gt = rc["subagents"]
    code, rows = jcli(gt, "agents")
    agents = [r for r in rows if r["kind"] == "agent"]
    assert [a["description"] for a in agents] == [s["description"] for s in gt["subagents"]]  # spawn order
    assert [a["agent_type"] for a in agents] == ["general-purpose"] * 2
    code, out, _ = cli(gt, "agents")
    assert out.index("Summarise input file  [general-purpose]") < out.index("Count lines in background  [general-purpose]")


def test_workflow_agents_are_joined_through_the_run_id(rc):
    gt = rc["census_workflow"]
    code, rows = jcli(gt, "agents")
    agents = [r for r in rows if r["kind"] == "agent"]
    assert len(agents) == 2 and all(a["workflow_run"] for a in agents)
    assert {a["join"] for a in agents} == {"Workflow run id"}
    assert {a["spawn"]["tool_name"] for a in agents} == {"Workflow"}
    assert [a["description"] for a in agents] == ["fact-a", "fact-b"]  # the script's order and labels
    assert [a["returned"] for a in agents] == ["Fact A: the queue drains at night.", "Fact B: the cache is warm by 9."]
    assert {a["agent_type"] for a in agents} == {"workflow-subagent"}
    code, out, _ = cli(gt, "agents")
    assert "unjoined" not in out and "fact-a  [workflow-subagent]" in out


# --- verdicts ---------------------------------------------------------------------------------


def _session_row(rows: list[dict]) -> dict:
    return next(r for r in rows if r["kind"] == "session")


def test_status_reports_the_todo_list_the_transcript_keeps(rc):
    gt = rc["census_queue"]  # last TodoWrite: completed / in_progress / pending
    code, rows = jcli(gt, "status")
    td = _session_row(rows)["todos"]
    assert code == 0 and td["completed"] == 1 and td["total"] == 3 and td["failed_calls"] == 0
    assert [(t["status"], t["content"]) for t in td["open"]] == [("in_progress", "Tag the release"),
                                                               ("pending", "Announce the release")]
    assert _session_row(rows)["tasks"] is None  # no task directory: the list is only in the transcript
    code, out, _ = cli(gt, "status", "--verbose")
    assert "open todos (TodoWrite, transcript L" in out and "[pending] Announce the release" in out
    gt = rc["todos"]  # two TodoWrite calls, the last leaves "Write the tests" in progress
    code, rows = jcli(gt, "status")
    td = _session_row(rows)["todos"]
    assert td["calls"] == 2 and td["completed"] == 1 and [t["content"] for t in td["open"]] == ["Write the tests"]


def test_a_turn_that_ended_on_an_api_error_says_so(rc):
    gt = rc["census_ptl"]
    code, rows = jcli(gt, "status")
    row = _session_row(rows)
    assert row["verdict"] == "idle-eot"
    err = row["last_turn_api_error"]
    assert err["status"] == 400 and err["text"] == "Prompt is too long" and err["error"] == "invalid_request"
    assert "ended on an API error" in row["reason"] and "Prompt is too long" in row["reason"]
    code, rows = jcli(rc["subagents"], "status")
    assert _session_row(rows)["last_turn_api_error"] is None


def test_wait_stop_returns_when_the_owner_of_an_open_launch_is_gone(rc):
    gt = rc["bash_background"]  # `sleep 600` launched in the background; the client exited, the runner ended it
    code, rows = jcli(gt, "status")
    row = _session_row(rows)
    assert row["verdict"] == "idle-background-open" and row["owner_ended"] is True
    code, rows = jcli(gt, "wait", "--until", "stop", "--timeout", "30")
    assert code == 0 and rows[-1]["satisfied"] is True and rows[-1]["waited_secs"] < 30
    code, out, _ = cli(gt, "wait", "--until", "stop", "--timeout", "30")
    assert "no owner process on record" in out


# --- small things -----------------------------------------------------------------------------

EXAMPLES = REPO / "examples" / "claude-home"  # written by the real 2.1.258 (tests/realclient)


def test_a_too_short_session_prefix_says_so(rc):
    gt = rc["census_ptl"]
    for short in (gt["session_id"][:1], gt["session_id"][:3]):
        code, _out, err = run(["show", short, "--turn", "1", "--claude-home", gt["config_dir"]])
        assert code == 2 and "too short" in err and "at least 4 characters" in err, short
    code, out, _ = run(["show", gt["session_id"][:4], "--turn", "1", "--claude-home", gt["config_dir"]])
    assert code == 0 and "[census_ptl P1]" in out


def test_list_agrees_in_number_and_labels_the_branch(rc):
    gt = rc["census_ptl"]
    code, out, _ = cli(gt, "list")
    assert "1 session; Claude Code: 1 in 1 project dir under " in out
    assert "coverage: Claude Code 1 session " in out
    code, rows = jcli(gt, "list")
    branch = next(r for r in rows if r["kind"] == "session")["git_branch"]
    assert branch and f"[Claude Code {claude_client.PINNED_VERSION}, git branch {branch}]" in out
    code, out, _ = cli(gt, "stats", "--verbose")
    assert "1 transcript read (1 session)" in out


def test_image_rows_carry_session_and_transcript():
    sid = "8414eb07-cca2-5cca-9059-e9baedac31e1"  # files_basic: a Read of a PNG
    code, out, _ = run(["image", "--claude-home", str(EXAMPLES)])
    lines = out.splitlines()
    i = next(k for k, l in enumerate(lines) if ":L" in l and "image/png" in l)
    assert lines[i].startswith(sid + "  main:L")
    assert lines[i + 1].strip() == f"transcript: {EXAMPLES / 'projects' / '-tmp-ssift-rc-files-basic-work' / (sid + '.jsonl')}"


def test_verbatim_points_at_a_command_that_works(rc):
    import re
    import shlex

    for name in ("census_cmdonly", "census_ptl"):
        gt = rc[name]
        code, out, _ = cli(gt, "verbatim")
        m = re.search(r"`sessionsift (show [^`]*)`", out)
        assert m, (name, out)
        cmd = shlex.split(m.group(1).replace("--turn N", "--turn 1"))
        c, shown, err = run(cmd)
        assert c == 0 and shown.startswith("L"), (name, cmd, err)
    code, out, _ = cli(rc["census_cmdonly"], "verbatim")
    assert "No turn could be counted" in out and "--line 1.." in out


# --- the index answers the same (issue 16) ----------------------------------------------------


def test_index_census_equals_the_scan_with_real_drafts(rc):
    """census_recall holds a real draft (recalled, edited, re-sent: user.unsent) and a rewound
    prompt: every census answered from the index (tests/test_index_search.py) equals the scan's."""
    from sessionsift.providers.claude.cache import search as IS
    from tests.test_index_search import COUNTED_PATTERNS, _compare, _index_all, queries

    drafts = 0
    for name in ("census_recall", "census_queue", "subagents"):
        home = Path(rc[name]["config_dir"])
        _index_all(home)
        from sessionsift.providers.claude.discover import resolve_targets
        from sessionsift.providers.claude.search import lanes as A

        for lane in A.lanes_of(resolve_targets([], home), True):
            v, why = IS.view(lane, False)
            assert v is not None, (lane.path, why)
            drafts += len(v.drafts)
        seen = _compare(home, queries(home)[::2] + COUNTED_PATTERNS)
        assert seen["index"] > 0, name
    assert drafts > 0
