"""The GitHub Copilot CLI scenarios: each a list of prompts, each prompt a scripted conversation of model
steps (tests/realclient/copilot/mock.py serves them).

``{W}`` in a tool argument is replaced by the scenario's work dir (Copilot's ``create``/``edit``/``view``
want absolute paths). Markers: a prompt's text contains ``[<scenario> P<n>]``; a ``task`` subagent's
prompt contains ``SUBAGENT-<X>``.

Every tool call here is in the ground truth (``tool_calls``) with its deterministic call id, the exit
code a ``bash`` command must give (``expect_exit``) and the file content the script implies.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .mock import Conversation, Step


@dataclass
class Prompt:
    text: str
    steps: list[Step]
    how: str = "new"
    """``new`` (``copilot -p``), ``continue`` (``copilot -p … --continue``) or ``resume``
    (``copilot -p … --resume <the session id>``)."""
    images: list[str] = field(default_factory=list)
    """ACP only: work-dir image files sent with the prompt as ACP ``image`` content blocks (base64 ``data``,
    ``mimeType`` from the name), after its text."""


@dataclass
class Scenario:
    name: str
    prompts: list[Prompt]
    subagents: dict[str, list[Step]] = field(default_factory=dict)
    """marker (``SUBAGENT-A``) -> the subagent's steps."""
    setup_files: dict[str, str | bytes] = field(default_factory=dict)
    kill_at: tuple[int, str, int, float] | None = None
    """(prompt index, conversation, step, seconds): SIGKILL the client's process group that long after
    the mock served that step (its tool call is then running)."""
    notes: list[str] = field(default_factory=list)
    expect_exit: dict[str, int] = field(default_factory=dict)
    """call key ``P1/4/0`` (conversation/step/index) -> the exit code the shell command gives (default 0)."""
    extra_env: dict[str, str] = field(default_factory=dict)
    """Variables added to the client's environment (documented per scenario)."""
    summary: str = "<summary>SUMMARY: the files were written and the commands ran.</summary>"
    """What the mock answers Copilot's compaction call with."""
    acp: bool = False
    """Run ``copilot --acp`` (the Agent Client Protocol over stdio, no ``--allow-all-tools``) with the
    harness as its ACP client: every tool approval the client asks (``session/request_permission``) is
    logged to ``acp-permissions.jsonl`` and granted once the test releases gate ``approve``."""
    snapshot_at: tuple[int, str, int, float] | None = None
    """(prompt index, conversation, step, seconds): copy the client's home that long after the mock served
    that step, while the client runs (its live files: ``inuse.<pid>.lock``)."""

    def marker(self, i: int) -> str:
        return f"[{self.name} P{i + 1}]"

    def conversations(self) -> list[Conversation]:
        convs = [Conversation(self.marker(i), p.steps, f"P{i + 1}") for i, p in enumerate(self.prompts)]
        convs += [Conversation(m, steps, m) for m, steps in self.subagents.items()]
        return convs


def bash(command: str, description: str = "Run a command") -> tuple[str, dict]:
    return ("bash", {"command": command, "description": description})


def create(path: str, content: str) -> tuple[str, dict]:
    return ("create", {"path": "{W}/" + path, "file_text": content})


def edit(path: str, old: str, new: str) -> tuple[str, dict]:
    return ("edit", {"path": "{W}/" + path, "old_str": old, "new_str": new})


def view(path: str) -> tuple[str, dict]:
    return ("view", {"path": "{W}/" + path})


HELLO = "print('hello from copilot')\n"
NOTES = "# Notes\n\nfirst line\n"
BIG = ("python3 -c \"[print('line %d of a long output with several words in it' % i) for i in range(250)]\"")

ALL: dict[str, Scenario] = {}


def _add(s: Scenario) -> Scenario:
    ALL[s.name] = s
    return s


_add(Scenario(
    name="files_shell",
    setup_files={"notes.md": NOTES},
    prompts=[
        Prompt("[files_shell P1] Create hello.py, extend the notes, run both and check a missing dir.", [
            Step(reasoning="I will write the file, edit the notes, then run commands.",
                 calls=[create("hello.py", HELLO)]),
            Step(calls=[edit("notes.md", "first line\n", "first line\nsecond line\n")]),
            Step(calls=[view("notes.md")]),
            Step(text="Now running them.", calls=[bash("python3 hello.py && wc -l < notes.md", "Run and count")]),
            Step(calls=[bash("ls /nonexistent-ssift-dir; echo 'giving up' >&2; exit 3", "Look for the dir")]),
            Step(text="hello.py runs; the notes have two lines; the directory does not exist (exit 3)."),
        ]),
        Prompt("[files_shell P2] Show hello.py again and leave a note from the shell.", [
            Step(calls=[bash("cat hello.py && printf 'made by the shell\\n' > shell.txt", "Show and write")]),
            Step(text="Shown; shell.txt written."),
        ], how="continue"),
        Prompt("[files_shell P3] Make the greeting shorter.", [
            Step(calls=[edit("hello.py", "hello from copilot", "hi")]),
            Step(text="The greeting is shorter."),
        ], how="resume"),
    ],
    expect_exit={"P1/4/0": 3},
    notes=["P1: create, edit of a file that existed before, view, a bash call that exits 0 and one that exits 3",
           "P2 is `copilot -p … --continue`, P3 `copilot -p … --resume <id>`: both append to the same "
           "session-state/<id>/events.jsonl after a session.resume event"],
))

_add(Scenario(
    name="subagent",
    prompts=[Prompt("[subagent P1] Delegate writing sub.txt to a subagent.", [
        Step(calls=[("task", {"name": "writer", "description": "Write sub file",
                              "prompt": "SUBAGENT-A: write sub.txt with one line, show it and report back.",
                              "agent_type": "general-purpose", "mode": "sync"})]),
        Step(text="The subagent wrote sub.txt."),
    ])],
    subagents={"SUBAGENT-A": [
        Step(calls=[create("sub.txt", "written by the subagent\n")]),
        Step(calls=[bash("cat sub.txt", "Show it")]),
        Step(text="sub.txt written."),
    ]},
    expect_exit={"SUBAGENT-A/1/0": 0},
    notes=["the `task` tool (agent_type general-purpose, mode sync) runs a subagent inside the same session: its "
           "events are in the same events.jsonl, each with `agentId`, between subagent.started and "
           "subagent.completed; its usage records carry `parentToolCallId` and their own accounting session"],
))

_add(Scenario(
    name="killed",
    prompts=[Prompt("[killed P1] Write a file, then wait for a slow command.", [
        Step(calls=[create("before-kill.txt", "this landed before the kill\n")]),
        Step(calls=[bash("echo started; sleep 60; echo never", "Wait a minute")]),
        Step(text="never reached"),
    ])],
    kill_at=(0, "P1", 1, 3.0),
    snapshot_at=(0, "P1", 1, 1.5),
    notes=["the client's process group is SIGKILLed while the `sleep 60` bash call runs: the call has a "
           "tool.execution_start and no tool.execution_complete, there is no session.shutdown, and the "
           "session dir keeps the dead process's inuse.<pid>.lock"],
))

_add(Scenario(
    name="compacted",
    prompts=[Prompt("[compacted P1] Print a long listing, then a short one.", [
        Step(calls=[bash(BIG, "Long listing")]),
        Step(calls=[bash("echo after the long listing", "Short one")], delay=4.0),
        Step(text="Both listings printed."),
    ])],
    extra_env={"COPILOT_PROVIDER_MAX_PROMPT_TOKENS": "16000"},
    summary="<summary>SUMMARY: a long listing was printed.</summary>",
    notes=["COPILOT_PROVIDER_MAX_PROMPT_TOKENS=16000: after the long listing the client's own estimate of the "
           "context passes its background threshold and it compacts (session.compaction_start/_complete, a "
           "checkpoints/NNN-*.md file); the mock answers the compaction call with `summary`; step 2 is held 4 s so "
           "the compaction lands inside the turn"],
))

SAMPLE = ("files_shell", "subagent", "killed", "compacted")
"""The scenarios of the committed sample (examples/copilot-home) and of the session fixture."""
