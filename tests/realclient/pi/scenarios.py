"""The pi scenarios: each a list of prompts, each prompt a scripted conversation of model steps.

``{W}`` in a tool argument is replaced by the scenario's work dir. Markers: a prompt's text contains
``[<scenario> P<n>]`` (the mock routes on it; tests/realclient/common/chat.py). pi's tools (0.73.1):
``bash`` (``command``, ``timeout``), ``write`` (``path``, ``content``), ``edit`` (``path``,
``edits: [{oldText, newText}]``), ``read`` (``path``, ``offset``, ``limit``), relative paths resolved
against the cwd. Every tool call here is in the ground truth (``tool_calls``) with its deterministic
call id, the exit code the command must give (``expect_exit``) and the file content the script implies.

pi has no subagents of its own ("No sub-agents", its README): the subagent example it ships as an
extension runs each child as ``pi --mode json -p --no-session``, which writes no session file.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..common.chat import Conversation, Step
from ..common.images import BLUE, RED


@dataclass
class Prompt:
    text: str
    steps: list[Step]
    how: str = "new"
    """``new`` (a fresh ``pi -p``), ``continue`` (``pi -c -p``: the most recent session of the cwd) or
    ``fork`` (``pi --fork <the first session's file> -p``: a new session holding a copy of it)."""
    attach: list[str] = field(default_factory=list)
    """Work-dir files given as ``@FILE`` arguments (pi attaches an image file to the prompt as an image
    block: cli/file-processor.js)."""


@dataclass
class Scenario:
    name: str
    prompts: list[Prompt]
    setup_files: dict[str, str | bytes] = field(default_factory=dict)
    kill_in_tool: tuple[int, str] | None = None
    """(prompt index, file name): SIGKILL the client's process group once the running shell command
    has created that file in the work dir (the client is then inside the tool call)."""
    notes: list[str] = field(default_factory=list)
    expect_exit: dict[str, int] = field(default_factory=dict)
    """call key ``P1/2/0`` (conversation/step/index) -> the exit code the shell command gives."""
    settings: dict = field(default_factory=dict)
    """pi's ``~/.pi/agent/settings.json`` (e.g. compaction thresholds)."""
    context_window: int = 128000
    """The mock model's ``contextWindow`` in models.json (pi compacts when the context nears it)."""
    summary: str = "Summary: the user asked for files; they were written."
    vision: bool = False
    """The mock model's ``input`` in models.json holds ``image`` too (else pi's read tool adds a note that
    the model does not support images; the image block is written either way)."""
    """What the mock answers a side call (pi's compaction summary request has no tools)."""

    def marker(self, i: int) -> str:
        return f"[{self.name} P{i + 1}]"

    def conversations(self) -> list[Conversation]:
        return [Conversation(self.marker(i), p.steps, f"P{i + 1}") for i, p in enumerate(self.prompts)]


def bash(command: str) -> tuple[str, dict]:
    return ("bash", {"command": command})


def write(path: str, content: str) -> tuple[str, dict]:
    return ("write", {"path": path, "content": content})


def edit(path: str, old: str, new: str) -> tuple[str, dict]:
    return ("edit", {"path": path, "edits": [{"oldText": old, "newText": new}]})


def read(path: str) -> tuple[str, dict]:
    return ("read", {"path": path})


HELLO = 'print("hello from pi")\n'
NOTES = "# Notes\n\nfirst line\n"

ALL: dict[str, Scenario] = {}


def _add(s: Scenario) -> Scenario:
    ALL[s.name] = s
    return s


_add(Scenario(
    name="shell_write",
    notes=["a turn with reasoning, a write (relative path), a shell command with output, a command that "
           "fails with exit 3, one that is not found (127), and one whose 3000 lines of output the bash tool cuts "
           "to the last 2000 (the whole output saved in a temp file under TMPDIR), and `printenv PI_CODING_AGENT` (what "
           "pi puts in its tools' environment: evidence for `whoami`)"],
    expect_exit={"P1/1/0": 0, "P1/2/0": 3, "P1/3/0": 127, "P1/4/0": 0, "P1/5/0": 0},
    prompts=[Prompt("Create hello.py and run it, then try two failing commands [shell_write P1]", [
        Step(reasoning="The user wants hello.py. I will write it, then run it.", calls=[write("hello.py", HELLO)]),
        Step(text="Running it.", calls=[bash("python3 hello.py")]),
        Step(calls=[bash("echo to-stderr >&2; echo to-stdout; exit 3")]),
        Step(calls=[bash("no-such-command-ssift")]),
        Step(calls=[bash("seq 1 3000")]),
        Step(calls=[bash("printenv PI_CODING_AGENT")]),
        Step(text="Done: hello.py prints a greeting; the other two commands failed (3, 127)."),
    ])],
))

_add(Scenario(
    name="edit_continue",
    notes=["a write with an absolute path, then `pi -c` (continue the most recent session of the cwd): "
           "a read, an edit and a cat of the edited file in the same session"],
    expect_exit={"P2/2/0": 0},
    prompts=[
        Prompt("Write notes.md [edit_continue P1]", [
            Step(calls=[write("{W}/notes.md", NOTES)]),
            Step(text="notes.md is written."),
        ]),
        Prompt("Change the first line of notes.md [edit_continue P2]", [
            Step(calls=[read("notes.md")]),
            Step(calls=[edit("notes.md", "first line", "first line, edited")]),
            Step(calls=[bash("cat notes.md")]),
            Step(text="The first line now says it was edited."),
        ], how="continue"),
    ],
))

_add(Scenario(
    name="fork",
    notes=["a session, then `pi --fork <its file>`: a new session file whose header names the first as "
           "parentSession and which holds a copy of every entry of it (same entry ids), then the new turn"],
    expect_exit={"P2/0/0": 0},
    prompts=[
        Prompt("Write a.txt [fork P1]", [
            Step(calls=[write("a.txt", "alpha\n")]),
            Step(text="a.txt is written."),
        ]),
        Prompt("In the fork, list the files [fork P2]", [
            Step(calls=[bash("ls")]),
            Step(text="There is a.txt."),
        ], how="fork"),
    ],
))

_add(Scenario(
    name="kill_tool",
    notes=["the client is SIGKILLed (its whole process group) while its shell tool runs a long command: "
           "the assistant message holding the call is on disk, its result never is"],
    kill_in_tool=(0, "started.flag"),
    prompts=[Prompt("Run the long job [kill_tool P1]", [
        Step(text="Starting the job.", calls=[bash("python3 -c \"open('started.flag','w').close(); "
                                                   "import time; time.sleep(300)\"")]),
        Step(text="never reached"),
    ])],
))

_add(Scenario(
    name="compaction",
    notes=["automatic compaction: the model's contextWindow is 4000 and settings.json keeps a reserve of "
           "1000 tokens, so the 3600-token prompt the mock reports for P1's last step crosses the threshold; "
           "pi asks the model for a summary (a request without tools) and appends a `compaction` entry; "
           "`pi -c` then continues from the summary"],
    context_window=4000,
    settings={"compaction": {"enabled": True, "reserveTokens": 1000, "keepRecentTokens": 1}},
    prompts=[
        Prompt("Write big.txt [compaction P1]", [
            Step(calls=[write("big.txt", "line\n" * 50)],
                 usage={"prompt_tokens": 1200, "completion_tokens": 40, "total_tokens": 1240}),
            Step(text="big.txt is written.",
                 usage={"prompt_tokens": 3600, "completion_tokens": 20, "total_tokens": 3620,
                        "prompt_tokens_details": {"cached_tokens": 1000}}),
        ]),
        Prompt("What did we do? [compaction P2]", [
            Step(text="We wrote big.txt (from the summary).",
                 usage={"prompt_tokens": 900, "completion_tokens": 12, "total_tokens": 912}),
        ], how="continue"),
    ],
))

_add(Scenario(
    name="images",
    notes=["`pi @red.png -p ...`: the prompt carries red.png as an image block; the model reads blue.png with "
           "the read tool, whose result carries it as an image block; a vision model (input text+image)"],
    setup_files={"red.png": RED, "blue.png": BLUE},
    vision=True,
    prompts=[Prompt("Look at the attached image and at blue.png [images P1]", [
        Step(calls=[read("blue.png")]),
        Step(text="red.png is red, blue.png is blue."),
    ], attach=["red.png"])],
))

SAMPLE = ("shell_write", "edit_continue", "fork", "kill_tool", "compaction")
"""The scenarios the session-scoped corpus runs and examples/pi-home holds."""
