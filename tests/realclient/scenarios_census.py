"""Real-client scenarios for censuses and verdicts that must say what they did not look at (issue 11).

What they produce with the pinned client, offline:

- `census_queue` (interactive): a SessionStart hook that injects context (hook_additional_context),
  a prompt typed while a turn is busy (queued: queue-operation enqueue + a queued_command
  attachment), a Bash output large enough for the client to persist it to `tool-results/`, and a
  TodoWrite list left with items open.
- `census_recall` (interactive): five prompts typed, one recalled with Escape before any answer (a
  draft), one answered and then rewound past (Esc Esc, "Restore conversation"), each replaced.
- `census_ptl` (print): a failing Bash call, then the next model call answers HTTP 400 "prompt is too
  long", so the session ends on the client's API-error message.
- `census_workflow` (print): a `Workflow` call whose script runs two agents; their lanes land under
  `subagents/workflows/wf_<run>/` and the tool result names the run (`Run ID: wf_...`); a failing Bash.
- `census_cmdonly` (interactive): only the local command `/context` - a session with no countable turn.

Scenarios register into the harness's registry; the harness's runner imports this module inside
`unshare -n` and calls its `inside()`, which runs the harness's Inner with two additions: settings
merged into the scenario's own `settings.json` (hooks) and keys typed into the TUI while a given turn
is being served (a prompt queued behind a busy turn, an Escape). `TuiKeys`, a `Prompt.before` action,
drives the TUI between prompts (the rewind picker), waiting for what the pane shows.
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
from .mock_api import Conversation, Turn, api_error, text, tool
from .scenarios import Prompt, Scenario, W, register

MODULE = "tests.realclient.scenarios_census"


@dataclass
class CensusScenario(Scenario):
    settings: dict = field(default_factory=dict)
    """Merged into the scenario's $CLAUDE_CONFIG_DIR/settings.json (e.g. hooks)."""
    keys_while: dict = field(default_factory=dict)
    """(conversation name, turn#) -> [(seconds after the turn is served, [tmux send-keys args])]."""


CAPTURE = "__capture__"
"""A keys_while step `[CAPTURE, label]` saves the pane to <scenario>/pane-<label>.txt instead."""

class TuiKeys:
    """A `Prompt.before` action that drives the TUI instead of the shell: `steps` are
    (what to wait for: pane text, a predicate on the pane, or None; [tmux send-keys args] or None;
    seconds to pause after). Runs in the inner process, where the tmux socket of
    `Inner.run_interactive` is `ssift-<scenario>-<pid>`."""

    path = ""  # the ground truth reads .path of every `before` action (shell edits); none here

    def __init__(self, scenario: str, steps: list):
        self.scenario, self.steps, self.done = scenario, steps, False

    def command(self, work) -> list[str]:
        """Drive the TUI once (the ground truth calls this again only to record the action)."""
        if self.done:
            return ["true"]
        self.done = True
        tm = ["tmux", "-L", f"ssift-{self.scenario}-{os.getpid()}"]
        for needle, keys, pause in self.steps:
            if needle is not None:
                ok = needle if callable(needle) else (lambda pane, n=needle: n in pane)
                t0 = time.time()
                while not ok(subprocess.run(tm + ["capture-pane", "-p", "-t", "main"], capture_output=True,
                                            text=True).stdout):
                    if time.time() - t0 > 30:
                        raise RuntimeError(f"{self.scenario}: the TUI never showed {needle!r}")
                    time.sleep(0.2)
            if keys:
                subprocess.run(tm + ["send-keys", "-t", "main"] + keys, check=True)
            time.sleep(pause)
        return ["true"]

    def apply(self, content: str) -> str:
        return content


def _idle_after(text_: str):
    """The TUI shows `text_` and nothing is running (a turn's last words)."""
    return lambda pane: text_ in pane and "esc to interrupt" not in pane


HOOK_TEXT = "HOOKCTX-census: the deploy window is Tuesday 14:00 UTC"
QUEUED_TEXT = "also add a changelog entry"
PERSISTED_TAIL = "PERSISTED-TAIL-census-4242"
# the tail marker is computed by the shell, so it is in the output only, never in the command
BIG_OUTPUT_CMD = "seq -f 'row %g of the long report' 1 3000; echo PERSISTED-TAIL-census-$((4000+242))"


def _hook_command(text_: str) -> str:
    payload = json.dumps({"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": text_}})
    return "printf '%s\\n' '" + payload + "'"


# typing into a busy TUI hides its busy hint, so the runner may see it idle while the queued prompt's
# turn still runs: the next prompt waits for that turn's last words
_AFTER_Q1 = TuiKeys("census_queue", [(_idle_after("Added CHANGELOG.md."), None, 0.5)])

CENSUS_QUEUE = register(CensusScenario(
    name="census_queue",
    mode="interactive",
    notes="SessionStart hook context; a prompt typed (and queued) while a Bash turn is held busy; a Bash output "
          "the client persists to tool-results/; a TodoWrite list left with open items. 2.1.258 offers "
          "TodoWrite only with the Task tools off (CLAUDE_CODE_ENABLE_TASKS=false) AND, on its default model, "
          "CLAUDE_CODE_ENABLE_TODO_TOOLS=1 (its changelog: the todo tools are gone on newer models unless set).",
    extra_env={"CLAUDE_CODE_ENABLE_TASKS": "false", "CLAUDE_CODE_ENABLE_TODO_TOOLS": "1"},
    settings={"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": _hook_command(HOOK_TEXT)}]}]}},
    prompts=[
        Prompt("Run the slow check.", turns=[
            Turn([tool("Bash", command="sleep 2; echo checked", description="Slow check")], delay=2.5),
        ]),
        Prompt("Show the long report and plan the release.", before=[_AFTER_Q1], turns=[
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
    notes="One Bash call, then the next model call is answered HTTP 400 invalid_request_error 'prompt is too long'; "
          "the client ends the turn on its API-error message (and exits non-zero). With one more tool round trip "
          "before the error, 2.1.258 compacts reactively and retries instead (seen: the turn then ends 'OK.').",
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
    notes="A Workflow call running two agents in sequence (lanes under subagents/workflows/wf_<run>/), a Bash "
          "call that fails (an is_error result), then a Bash wait so the workflow finishes before the prompt ends.",
    prompts=[Prompt("Use a workflow to fan out two helpers.", turns=[
        Turn([tool("Workflow", script=WORKFLOW_SCRIPT)]),
        Turn([tool("Bash", command="ls /no/such/dir-census", description="List a missing dir")]),  # fails: is_error
        Turn([tool("Bash", command="sleep 4; echo waited", description="Wait for the workflow")]),
        Turn([text("Both helpers reported.")]),
    ])],
    subagents=[
        Conversation("WORKFLOW-A", name="wf-a", turns=[Turn([text("Fact A: the queue drains at night.")])]),
        Conversation("WORKFLOW-B", name="wf-b", turns=[Turn([text("Fact B: the cache is warm by 9.")])]),
    ],
))

def rewind_last(prompt: str, answer: str) -> list:
    """TuiKeys steps of a rewind (Esc Esc, as a user does) to before the last prompt: the picker lists the
    prompts, Up selects the last one, Enter; the confirmation's first option is "Restore conversation";
    the input then holds the rewound prompt (its answer gone from the pane), which is cleared."""
    def restored(pane: str) -> bool:
        return "Confirm you want to restore" not in pane and answer not in pane and prompt in pane
    return [(None, ["Escape"], 0.3), (None, ["Escape"], 0.2),
            ("Restore the code and/or conversation", ["Up"], 0.5), (None, ["Enter"], 0.2),
            ("Confirm you want to restore", ["Enter"], 0.2), (restored, ["C-u"], 0.3),
            (lambda pane: prompt not in pane, None, 0.2)]


def _recalled(pane: str) -> bool:
    """P2 is back in the input box (recalled): shown, nothing running, its answer never shown."""
    return ("[census_recall P2] Second question, draft." in pane and "esc to interrupt" not in pane
            and "Never delivered." not in pane)


CENSUS_RECALL = register(CensusScenario(
    name="census_recall",
    mode="interactive",
    notes="Five prompts typed: P1 answered; P2 sent, then recalled with Escape while its answer is held (a draft, "
          "never answered), cleared and replaced by P3; P4 answered, then rewound past (Esc Esc, restore the "
          "conversation to before it) and replaced by P5. On disk: P2/P3 and P4/P5 share a parentUuid each.",
    prompts=[
        Prompt("First question.", turns=[Turn([text("First answer.")])]),
        Prompt("Second question, draft.", turns=[Turn([text("Never delivered.")], delay=5.0)]),
        Prompt("Second question, edited.", before=[TuiKeys("census_recall", [
            (_recalled, ["C-u"], 0.3), (lambda pane: "[census_recall P2]" not in pane, None, 0.2)])],
               turns=[Turn([text("Second answer.")])]),
        Prompt("Third question.", turns=[Turn([text("Third answer.")])]),
        Prompt("Third question, again.", before=[TuiKeys("census_recall", rewind_last(
            "[census_recall P4] Third question.", "Third answer."))],
               turns=[Turn([text("Fifth answer.")])]),
    ],
    keys_while={("P2", 0): [(1.0, ["Escape"])]},  # recall P2 while its answer is held
    final_settle=0.5,
))
CENSUS_CMDONLY = register(CensusScenario(
    name="census_cmdonly",
    mode="interactive",
    notes="A session whose only input is the local command /context: system local_command records and the "
          "command's isMeta output, no model call, no prompt - no turn can be counted in it.",
    prompts=[Prompt("/context", slash=True, settle=2.0)],  # waits for any request (the client's own probes)
    final_settle=1.0,
))

ALL = {s.name: s for s in (CENSUS_QUEUE, CENSUS_RECALL, CENSUS_PTL, CENSUS_WORKFLOW, CENSUS_CMDONLY)}


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
                if keys[:1] == [CAPTURE]:  # save what the pane shows (to script the next keys)
                    pane = subprocess.run(tm + ["capture-pane", "-p", "-t", "main"], capture_output=True, text=True)
                    (self.s_dir / f"pane-{keys[1]}.txt").write_text(pane.stdout)
                    continue
                subprocess.run(tm + ["send-keys", "-t", "main"] + keys, capture_output=True)
        threading.Thread(target=go, daemon=True).start()


def inside(name: str, root: Path, exe: str) -> None:
    runner.inside(name, root, exe, inner_cls=CensusInner)


# ============================================================================ outer


def run_census_scenario(name: str, root: Path, timeout: float = 300) -> dict:
    """Run `name` (this module's or the harness's) inside `unshare -n`; return its ground truth."""
    return runner.run_scenario(name, root, timeout=timeout, module=MODULE)


def run_all(root: Path, names, jobs: int = 4) -> dict[str, dict]:
    """Run several scenarios in parallel (each in its own namespace); name -> ground truth."""
    with ThreadPoolExecutor(max_workers=jobs) as ex:
        return dict(zip(names, ex.map(lambda n: run_census_scenario(n, root), names)))


if __name__ == "__main__":
    sys.exit(runner.main(module=MODULE))

