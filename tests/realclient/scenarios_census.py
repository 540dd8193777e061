"""Real-client scenarios for censuses and verdicts that must say what they did not look at (issue 11).

What they produce with the pinned client, offline:

- `census_queue` (interactive): a SessionStart hook that injects context (hook_additional_context),
  a prompt typed while a turn is busy (queued: queue-operation enqueue + a queued_command
  attachment), a Bash output large enough for the client to persist it to `tool-results/`, and a
  TodoWrite list left with items open.
- `census_ptl` (print): the second model call answers HTTP 400 "prompt is too long", so the session
  ends on the client's API-error message.
- `census_workflow` (print): a `Workflow` call whose script runs two agents; their lanes land under
  `subagents/workflows/wf_<run>/` and the tool result names the run (`Run ID: wf_...`).

Scenarios register into the harness's registry; the harness's runner imports this module inside
`unshare -n` and calls its `inside()`, which runs the harness's Inner with two additions: settings
merged into the scenario's own `settings.json` (hooks) and keys typed into the TUI while a given turn
is being served (a prompt queued behind a busy turn).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from . import client as clientmod
from . import runner
from .mock_api import Conversation, MockAnthropic, Turn, api_error, text, tool
from .scenarios import Prompt, Scenario, W, register

MODULE = "tests.realclient.scenarios_census"
DEFAULT_ROOT = Path("/tmp/ssift-rc-census")


@dataclass
class CensusScenario(Scenario):
    settings: dict = field(default_factory=dict)
    """Merged into the scenario's $CLAUDE_CONFIG_DIR/settings.json (e.g. hooks)."""
    keys_while: dict = field(default_factory=dict)
    """(conversation name, turn#) -> [(seconds after the turn is served, [tmux send-keys args])]."""


HOOK_TEXT = "HOOKCTX-census: the deploy window is Tuesday 14:00 UTC"
QUEUED_TEXT = "also add a changelog entry"
PERSISTED_TAIL = "PERSISTED-TAIL-census-4242"
# the tail marker is computed by the shell, so it is in the output only, never in the command
BIG_OUTPUT_CMD = "seq -f 'row %g of the long report' 1 3000; echo PERSISTED-TAIL-census-$((4000+242))"


def _hook_command(text_: str) -> str:
    payload = json.dumps({"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": text_}})
    return "printf '%s\\n' '" + payload + "'"


CENSUS_QUEUE = register(CensusScenario(
    name="census_queue",
    mode="interactive",
    notes="SessionStart hook context; a prompt typed (and queued) while a Bash turn is held busy; a Bash output "
          "the client persists to tool-results/; a TodoWrite list left with open items (TodoWrite is registered "
          "only with CLAUDE_CODE_ENABLE_TASKS=false, as in the harness's `todos`).",
    extra_env={"CLAUDE_CODE_ENABLE_TASKS": "false"},
    settings={"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": _hook_command(HOOK_TEXT)}]}]}},
    prompts=[
        Prompt("Run the slow check.", turns=[
            Turn([tool("Bash", command="sleep 2; echo checked", description="Slow check")], delay=2.5),
        ]),
        Prompt("Show the long report and plan the release.", turns=[
            Turn([tool("Bash", command=BIG_OUTPUT_CMD, description="Long report")]),
            Turn([tool("TodoWrite", todos=[
                {"content": "Write the changelog", "status": "completed", "activeForm": "Writing the changelog"},
                {"content": "Tag the release", "status": "in_progress", "activeForm": "Tagging the release"},
                {"content": "Announce the release", "status": "pending", "activeForm": "Announcing the release"}])]),
            Turn([text("The report is long; the release is planned.")]),
        ]),
    ],
    subagents=[Conversation("[census_queue Q1]", name="Q1", turns=[
        Turn([tool("Write", file_path=f"{W}/CHANGELOG.md", content="# Changelog\n\n- the slow check\n")]),
        Turn([text("Added CHANGELOG.md.")]),
    ])],
    # while P1's only turn is held, the operator types the next prompt (the client queues it)
    keys_while={("P1", 0): [(0.8, ["-l", f"[census_queue Q1] {QUEUED_TEXT}"]), (1.2, ["Enter"])]},
    final_settle=1.0,
))

PTL_MESSAGE = "prompt is too long: 212345 tokens > 200000 maximum"

CENSUS_PTL = register(CensusScenario(
    name="census_ptl",
    mode="print",
    notes="The second model call of the only prompt is answered HTTP 400 invalid_request_error 'prompt is too "
          "long'; the client ends the turn on its API-error message (and exits non-zero).",
    prompts=[Prompt("Read everything and summarise it.", may_fail=True, turns=[
        Turn([tool("Bash", command="echo lots of context", description="Gather context")]),
        Turn([], error=api_error(400, "invalid_request_error", PTL_MESSAGE)),
    ])],
))

WORKFLOW_SCRIPT = (
    "export const meta = { name: 'census-pair', description: 'Two helpers report one fact each' }\n"
    "const a = await agent('WORKFLOW-A: report the first fact', { label: 'fact-a' })\n"
    "const b = await agent('WORKFLOW-B: report the second fact', { label: 'fact-b' })\n"
    "return { a, b }\n")

CENSUS_WORKFLOW = register(CensusScenario(
    name="census_workflow",
    mode="print",
    notes="A Workflow call running two agents in sequence (lanes under subagents/workflows/wf_<run>/), then a "
          "Bash wait so the workflow finishes before the prompt ends.",
    prompts=[Prompt("Use a workflow to fan out two helpers.", turns=[
        Turn([tool("Workflow", script=WORKFLOW_SCRIPT)]),
        Turn([tool("Bash", command="sleep 4; echo waited", description="Wait for the workflow")]),
        Turn([text("Both helpers reported.")]),
    ])],
    subagents=[
        Conversation("WORKFLOW-A", name="wf-a", turns=[Turn([text("Fact A: the queue drains at night.")])]),
        Conversation("WORKFLOW-B", name="wf-b", turns=[Turn([text("Fact B: the cache is warm by 9.")])]),
    ],
))

ALL = {s.name: s for s in (CENSUS_QUEUE, CENSUS_PTL, CENSUS_WORKFLOW)}


# ============================================================================ inner


class CensusInner(runner.Inner):
    def prepare(self) -> None:
        super().prepare()
        sc = self.sc
        if isinstance(sc, CensusScenario) and sc.settings:
            p = self.s_dir / "config" / "settings.json"
            cur = json.loads(p.read_text()) if p.exists() else {}
            p.write_text(json.dumps(cur | sc.settings, indent=2))
        if isinstance(sc, CensusScenario):
            convs = {c.name: c for c in self.script.conversations}
            for (conv, ti), steps in sc.keys_while.items():
                turn = convs[conv].turns[ti]
                prev = turn.on_serve
                turn.on_serve = (lambda prev=prev, steps=steps: (prev() if prev else None, self._keys_later(steps)))

    def _keys_later(self, steps) -> None:
        tm = ["tmux", "-L", f"ssift-{self.sc.name}-{os.getpid()}"]  # the socket run_interactive uses

        def go():
            t0 = time.time()
            for at, keys in steps:
                time.sleep(max(0.0, at - (time.time() - t0)))
                subprocess.run(tm + ["send-keys", "-t", "main"] + keys, capture_output=True)
        threading.Thread(target=go, daemon=True).start()


def inside(name: str, root: Path, exe: str) -> None:
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    inner = CensusInner(runner.ALL[name], root, exe)
    inner.prepare()
    t0 = time.time()
    dump = str(inner.s_dir / "mock-bodies") if os.environ.get("SSIFT_MOCK_DUMP") else None
    with MockAnthropic(inner.script, str(inner.s_dir / "mock-requests.jsonl"), dump_dir=dump) as mock:
        if inner.sc.mode == "print":
            inner.run_print(mock)
        else:
            inner.run_interactive(mock)
        time.sleep(0.3)
        gt = inner.ground_truth(mock, time.time() - t0)
    gt["leftover_processes_killed"] = runner.kill_leftovers(inner.s_dir)
    (inner.s_dir / "ground-truth.json").write_text(json.dumps(gt, indent=2, sort_keys=True) + "\n")


# ============================================================================ outer


def run_census_scenario(name: str, root: Path, timeout: float = 300) -> dict:
    """Run `name` (this module's or the harness's) inside `unshare -n`; return its ground truth."""
    return runner.run_scenario(name, root, timeout=timeout, module=MODULE)


def run_all(root: Path, names, jobs: int = 4) -> dict[str, dict]:
    """Run several scenarios in parallel (each in its own namespace); name -> ground truth."""
    with ThreadPoolExecutor(max_workers=jobs) as ex:
        return dict(zip(names, ex.map(lambda n: run_census_scenario(n, root), names)))


if __name__ == "__main__":
    sys.exit(runner.main(module=MODULE, root=DEFAULT_ROOT))
