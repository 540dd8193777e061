"""The opencode scenarios: each a list of prompts, each prompt a scripted conversation of model steps.

``{W}`` in a tool argument is replaced by the scenario's work dir (opencode's ``write``/``edit`` want
absolute paths). Markers: a prompt's text contains ``[<scenario> P<n>]``; a ``task`` child session's
prompt contains ``SUBAGENT-<X>`` (the mock routes on them; see mock_chat.py).

Every tool call here is in the ground truth (``tool_calls``) with its deterministic call id, the exit
code the command must give (``expect_exit``) and the file content the script implies.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .mock_chat import Conversation, Step


@dataclass
class Prompt:
    text: str
    steps: list[Step]
    how: str = "new"
    """``new`` (first ``opencode run``) or ``continue`` (``opencode run --continue``)."""
    files: list[str] = field(default_factory=list)
    """Work-dir files attached to the prompt (``opencode run -f F``: a ``file`` part of the user message)."""


@dataclass
class Scenario:
    name: str
    prompts: list[Prompt]
    subagents: dict[str, list[Step]] = field(default_factory=dict)
    """marker (``SUBAGENT-A``) -> the child session's steps."""
    title: str = "Mock title"
    setup_files: dict[str, str | bytes] = field(default_factory=dict)
    """Work-dir files made before the first prompt (bytes written as they are: an image)."""
    git: bool = False
    """Make the work dir a git repository (opencode then records a real project id, not ``global``)."""
    kill_after: tuple[int, int] | None = None
    """(prompt, step): SIGKILL the client once the mock has served that step (it stalls mid-stream)."""
    notes: list[str] = field(default_factory=list)
    expect_exit: dict[str, int] = field(default_factory=dict)
    """call key ``P1/2/0`` (conversation/step/index) -> the exit code the shell command gives."""
    extra_env: dict[str, str] = field(default_factory=dict)
    """Variables added to the client's environment (documented per scenario)."""
    serve: bool = False
    """Run ``opencode serve`` on loopback (not ``opencode run``, which denies the ``question`` tool) and
    drive it over its HTTP API: one session, the first prompt (``prompt_async``); a question the client
    asks (``GET /question``) is logged to ``questions.json`` and answered with each question's first
    option once the test releases gate ``answer``; the server is stopped once the last step is served."""
    model_limit: dict | None = None
    """The mock model's ``limit`` in opencode.json (default context 128000, output 8192)."""
    model_extra: dict = field(default_factory=dict)
    """More keys of the mock model's entry in opencode.json (e.g. ``attachment``, ``modalities``)."""

    def marker(self, i: int) -> str:
        return f"[{self.name} P{i + 1}]"

    def conversations(self) -> list[Conversation]:
        convs = [Conversation(self.marker(i), p.steps, f"P{i + 1}") for i, p in enumerate(self.prompts)]
        convs += [Conversation(m, steps, m) for m, steps in self.subagents.items()]
        return convs


def bash(command: str, description: str = "Run a command") -> tuple[str, dict]:
    return ("bash", {"command": command, "description": description})


def write(path: str, content: str) -> tuple[str, dict]:
    return ("write", {"filePath": "{W}/" + path, "content": content})


def edit(path: str, old: str, new: str) -> tuple[str, dict]:
    return ("edit", {"filePath": "{W}/" + path, "oldString": old, "newString": new})


HELLO = 'print("hello from opencode")\n'
NOTES = "# Notes\n\nfirst line\n"

ALL: dict[str, Scenario] = {}


def _add(s: Scenario) -> Scenario:
    ALL[s.name] = s
    return s


_add(Scenario(
    name="shell_write",
    title="Shell and write",
    git=True,
    prompts=[Prompt("[shell_write P1] Create hello.py, then list the directory and show the file.", [
        Step(reasoning="I will write the file first, then look at it.", calls=[write("hello.py", HELLO)]),
        Step(text="Written. Now listing.", calls=[bash("ls -1 && cat hello.py", "List and show")]),
        Step(text="hello.py is in place and prints a greeting."),
    ])],
    notes=["one turn: reasoning, a write, a bash call that lists and cats (exit 0), a closing text"],
))

_add(Scenario(
    name="continued",
    title="Notes across two runs",
    prompts=[
        Prompt("[continued P1] Start a notes file.", [
            Step(calls=[write("notes.md", NOTES)]),
            Step(text="notes.md started."),
        ]),
        Prompt("[continued P2] Add a second line to the notes and count its lines.", [
            Step(calls=[edit("notes.md", "first line\n", "first line\nsecond line\n")]),
            Step(calls=[bash("wc -l < notes.md", "Count lines")]),
            Step(text="notes.md now has two lines of notes."),
        ], how="continue"),
    ],
    notes=["prompt 2 is `opencode run --continue`: the same session continues"],
))

_add(Scenario(
    name="failing",
    title="A failing command",
    prompts=[Prompt("[failing P1] Check for a missing directory.", [
        Step(calls=[bash("ls /nonexistent-ssift-dir; echo 'giving up' >&2; exit 3", "Look for the dir")]),
        Step(text="The directory does not exist (exit 3)."),
    ])],
    expect_exit={"P1/0/0": 3},
    notes=["the bash call exits 3: opencode records metadata.exit = 3 with status completed"],
))

_add(Scenario(
    name="subagent",
    title="Delegated task",
    prompts=[Prompt("[subagent P1] Delegate writing sub.txt to a subagent.", [
        Step(calls=[("task", {"description": "Write sub.txt",
                              "prompt": "SUBAGENT-A: write sub.txt with one line and report back.",
                              "subagent_type": "general"})]),
        Step(text="The subagent wrote sub.txt."),
    ])],
    subagents={"SUBAGENT-A": [
        Step(calls=[write("sub.txt", "written by the subagent\n")]),
        Step(text="sub.txt written."),
    ]},
    notes=["the `task` tool runs a child session (session.parent_id = the parent session id)"],
))

_add(Scenario(
    name="killed",
    title="Killed mid-turn",
    prompts=[Prompt("[killed P1] Write a file, then think for a long time.", [
        Step(calls=[write("before-kill.txt", "this landed before the kill\n")]),
        Step(text="Thinking about the next step", stall=60.0),
    ])],
    kill_after=(0, 1),
    notes=["the client is SIGKILLed while the mock holds step 2's stream open after its first chunks:"
           " the last assistant message has no time.completed and no finish"],
))

_add(Scenario(
    name="compacted",
    title="Compaction",
    prompts=[Prompt("[compacted P1] Write a file and keep going.", [
        Step(calls=[write("big.txt", "big\n")],
             usage={"prompt_tokens": 7900, "completion_tokens": 40, "total_tokens": 7940}),
        Step(text="Still going after the summary."),
    ])],
    model_limit={"context": 8000, "output": 1000},
    notes=["the first step reports 7900 prompt tokens against an 8000-token context: opencode compacts"
           " (a user message holding only a compaction part, the compaction agent's summary as an assistant"
           " message with summary: true, a synthetic 'Continue...' user text); after it the history no longer"
           " holds the prompt's marker, so the mock answers the continuation 'Done.' (unscripted)"],
))

# Used by the live test (not in the committed sample): slow steps keep the client mid-turn so a
# reader can open the database while the client holds it open and writes to it.
LIVE = Scenario(
    name="live",
    title="Slow turn",
    prompts=[Prompt("[live P1] Take your time over three small steps.", [
        Step(calls=[bash("echo step-one", "Step one")], delay=1.5),
        Step(calls=[bash("echo step-two", "Step two")], delay=1.5),
        Step(calls=[write("live.txt", "live\n")], delay=1.5),
        Step(text="All three steps done.", delay=1.5),
    ])],
    notes=["each step's response is held 1.5 s before its first chunk"],
)
ALL[LIVE.name] = LIVE

SAMPLE = ("shell_write", "continued", "failing", "subagent", "killed", "compacted")
"""The scenarios of the committed sample (examples/opencode-home) and of the session fixture."""
