"""The Qwen Code scenarios: each a list of prompts, each prompt a scripted conversation of model steps.

``{W}`` in a tool argument is replaced by the scenario's work dir. Markers: a prompt's text contains
``[<scenario> P<n>]``; a subagent's task contains ``SUBAGENT-<X>`` (the mock routes on both;
tests/realclient/common/chat.py). Every tool call here is in the ground truth (``tool_calls``) with its
deterministic call id, the exit code the command must give (``expect_exit``) and the file content the
script implies.
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
    """``new`` (a fresh ``qwen -p``), ``continue`` (``qwen --continue -p``: the most recent session of the
    project) or ``fork`` (``qwen --resume <the first session> --fork-session -p``: a new session holding a
    copy of it)."""


@dataclass
class Scenario:
    name: str
    prompts: list[Prompt]
    subagents: dict[str, list[Step]] = field(default_factory=dict)
    """marker (``SUBAGENT-A``) -> the subagent's steps."""
    setup_files: dict[str, str | bytes] = field(default_factory=dict)
    kill_in_tool: tuple[int, str] | None = None
    """(prompt index, file name): SIGKILL the client's process group once the running shell command
    has created that file in the work dir (the client is then inside the tool call)."""
    notes: list[str] = field(default_factory=list)
    expect_exit: dict[str, int] = field(default_factory=dict)
    """call key ``P1/2/0`` (conversation/step/index) -> the exit code the shell command gives."""
    settings: dict = field(default_factory=dict)
    """Merged into ``~/.qwen/settings.json``."""
    summary: str = "<state_snapshot>\nSummary: the user asked for files; they were written.\n</state_snapshot>"
    """What the mock answers a side call (the compression summary must hold a ``<state_snapshot>``)."""

    def marker(self, i: int) -> str:
        return f"[{self.name} P{i + 1}]"

    def conversations(self) -> list[Conversation]:
        convs = [Conversation(self.marker(i), p.steps, f"P{i + 1}") for i, p in enumerate(self.prompts)]
        convs += [Conversation(m, steps, m) for m, steps in self.subagents.items()]
        return convs


def shell(command: str, description: str = "Run a command") -> tuple[str, dict]:
    return ("run_shell_command", {"command": command, "description": description})


def write(path: str, content: str) -> tuple[str, dict]:
    return ("write_file", {"file_path": "{W}/" + path, "content": content})


def edit(path: str, old: str, new: str) -> tuple[str, dict]:
    return ("edit", {"file_path": "{W}/" + path, "old_string": old, "new_string": new})


def todos(*statuses: str) -> tuple[str, dict]:
    """A ``todo_write`` call over :data:`TODO_STEPS` with these statuses (0.24.4's schema: ``todos``,
    each ``{id, content, status}``)."""
    return ("todo_write", {"todos": [{"id": str(i + 1), "content": c, "status": st}
                                     for i, (c, st) in enumerate(zip(TODO_STEPS, statuses))]})


TODO_STEPS = ["Look at the images", "Write notes.txt", "Report"]


def read(path: str) -> tuple[str, dict]:
    return ("read_file", {"file_path": "{W}/" + path})


HELLO = 'print("hello from qwen")\n'
NOTES = "# Notes\n\nfirst line\n"

ALL: dict[str, Scenario] = {}


def _add(s: Scenario) -> Scenario:
    ALL[s.name] = s
    return s


_add(Scenario(
    name="shell_write",
    notes=["a turn with reasoning, a write, a shell command with output, a command that fails with exit 3, "
           "one that is not found (127), one with 30000 lines of output, and `printenv QWEN_CODE "
           "QWEN_CODE_SESSION_ID` (what Qwen puts in its shell tool's environment: evidence for `whoami`)"],
    expect_exit={"P1/1/0": 0, "P1/2/0": 3, "P1/3/0": 127, "P1/4/0": 0, "P1/5/0": 0},
    prompts=[Prompt("Create hello.py and run it, then try two failing commands [shell_write P1]", [
        Step(reasoning="The user wants hello.py. I will write it, then run it.", calls=[write("hello.py", HELLO)]),
        Step(text="Running it.", calls=[shell("python3 hello.py")]),
        Step(calls=[shell("echo to-stderr >&2; echo to-stdout; exit 3")]),
        Step(calls=[shell("no-such-command-ssift")]),
        Step(calls=[shell("seq 1 30000")]),
        # the trailing sleep keeps the command alive until its output has reached Qwen: Qwen 0.24.4's
        # shell service finalises the output when node-pty reports the exit, after draining what has
        # arrived by then; under load the last bytes of a command that exits at once can arrive later
        # and are lost (a fresh-clone run recorded output '' for this printenv; the process printed)
        Step(calls=[shell("printenv QWEN_CODE QWEN_CODE_SESSION_ID; sleep 0.5")]),
        Step(text="Done: hello.py prints a greeting; the other two commands failed (3, 127)."),
    ])],
))

_add(Scenario(
    name="edit_continue",
    notes=["a write, then `qwen --continue` (the most recent session of the project): a read, an edit "
           "(Qwen's edit refuses a file not read in the same run) and a cat of the edited file, in the same "
           "session file"],
    expect_exit={"P2/2/0": 0},
    prompts=[
        Prompt("Write notes.md [edit_continue P1]", [
            Step(calls=[write("notes.md", NOTES)]),
            Step(text="notes.md is written."),
        ]),
        Prompt("Change the first line of notes.md [edit_continue P2]", [
            Step(calls=[read("notes.md")]),
            Step(calls=[edit("notes.md", "first line", "first line, edited")]),
            Step(calls=[shell("cat notes.md")]),
            Step(text="The first line now says it was edited."),
        ], how="continue"),
    ],
))

_add(Scenario(
    name="subagent",
    notes=["an `agent` tool call (general-purpose, backgrounded: Qwen's default for a top-level agent): the "
           "parent's turn goes on, the subagent writes its own transcript projects/<p>/subagents/<session id>/"
           "agent-<id>.jsonl beside its .meta.json, and its completion notification opens one more parent step"],
    subagents={"SUBAGENT-A": [
        Step(calls=[write("sub.txt", "from the subagent\n")]),
        Step(text="Subagent: sub.txt is written."),
    ]},
    prompts=[Prompt("Delegate writing sub.txt [subagent P1]", [
        Step(calls=[("agent", {"description": "write sub.txt", "subagent_type": "general-purpose",
                               "prompt": "SUBAGENT-A: write sub.txt with one line"})]),
        Step(text="Waiting for the subagent."),
        Step(text="The subagent wrote sub.txt."),
    ])],
))

_add(Scenario(
    name="kill_tool",
    notes=["the client is SIGKILLed (its whole process group: the launcher and the relaunched child) while its "
           "shell tool runs a long command"],
    kill_in_tool=(0, "started.flag"),
    prompts=[Prompt("Run the long job [kill_tool P1]", [
        Step(text="Starting the job.", calls=[shell("python3 -c \"open('started.flag','w').close(); "
                                                    "import time; time.sleep(300)\"")]),
        Step(text="never reached"),
    ])],
))

_add(Scenario(
    name="compaction",
    notes=["chat compression asked for with `/compress` (`qwen --continue -p /compress`): Qwen asks the model "
           "for a summary (a side query without tools) and records a `chat_compression` system record holding "
           "the compressed history; a third `--continue` prompt goes on from it. (An automatic compression "
           "needs the reported prompt tokens to match the history's size: Qwen estimates the compressed "
           "history and refuses a result that is not smaller, COMPRESSION_FAILED_INFLATED_TOKEN_COUNT.)"],
    prompts=[
        Prompt("Write three big files [compaction P1]", [
            Step(calls=[write("big1.txt", "a line of the first big file\n" * 300)]),
            Step(calls=[write("big2.txt", "a line of the second big file\n" * 300)]),
            Step(calls=[write("big3.txt", "a line of the third big file\n" * 300)]),
            Step(text="The three files are written.",
                 usage={"prompt_tokens": 9000, "completion_tokens": 20, "total_tokens": 9020,
                        "prompt_tokens_details": {"cached_tokens": 1000}}),
        ]),
        Prompt("/compress", [], how="continue"),
        Prompt("What did we do? [compaction P3]", [
            Step(text="We wrote three big files (from the summary)."),
        ], how="continue"),
    ],
))

_add(Scenario(
    name="fork",
    notes=["a session, then `qwen --resume <its id> --fork-session`: a new session file whose records are the "
           "first one's, each marked forkedFrom {sessionId, messageUuid}, then the new turn"],
    expect_exit={"P2/0/0": 0},
    prompts=[
        Prompt("Write a.txt [fork P1]", [
            Step(calls=[write("a.txt", "alpha\n")]),
            Step(text="a.txt is written."),
        ]),
        Prompt("In the fork, list the files [fork P2]", [
            Step(calls=[shell("ls")]),
            Step(text="There is a.txt."),
        ], how="fork"),
    ],
))

_add(Scenario(
    name="plan_images",
    notes=["`qwen -p '@red.png ...'`: the prompt's @-reference carries red.png as an inlineData part; the model "
           "keeps a checklist with todo_write (three calls: the first step in progress, two completed, all "
           "completed), reads blue.png with read_file (an image result), writes notes.txt"],
    setup_files={"red.png": RED, "blue.png": BLUE},
    # 0.24.4: todo_write is "a built-in tool that is disabled by default" (its refusal names the setting), and a
    # model takes images only when its generationConfig says so (else "[Unsupported image file: ...]", measured)
    settings={"tools": {"todoWrite": {"enabled": True}}, "model": {"generationConfig": {"modalities": {"image": True}}}},
    prompts=[Prompt("@red.png Look at this image and at blue.png, then write notes.txt [plan_images P1]", [
        Step(calls=[todos("in_progress", "pending", "pending")]),
        Step(calls=[read("blue.png")]),
        Step(calls=[todos("completed", "in_progress", "pending")]),
        Step(calls=[write("notes.txt", "red and blue\n")]),
        Step(calls=[todos("completed", "completed", "completed")]),
        Step(text="red.png is red, blue.png is blue; notes.txt written."),
    ])],
))

SAMPLE = ("shell_write", "edit_continue", "subagent", "kill_tool", "compaction", "fork")
"""The scenarios the session-scoped corpus runs and examples/qwen-home holds."""
