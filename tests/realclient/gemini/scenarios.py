"""The scenario library for the real Gemini CLI: scripted sessions, each with what its script implies.

Each :class:`Scenario` is a list of prompts; each prompt carries a unique marker (``[<scenario> P<n>]``)
that the mock routes on; a subagent conversation is routed by its own marker (``SUBAGENT-A``), which the
main conversation passes in ``invoke_agent``'s prompt.  ``{W}`` in any string is the scenario's work dir
(the client's cwd), filled in at run time.  ``expect`` on a scripted shell call is the exit code the
command has by construction (``exit 3`` exits 3), which the ground truth carries.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .mock_api import Conversation, Turn, call, text, thought


@dataclass
class Prompt:
    text: str
    turns: list[Turn] = field(default_factory=list)
    how: str = "new"
    """``new`` (a fresh session) or ``resume`` (``--resume latest``, appends to the same file)."""
    kill_at_turn: int | None = None
    """SIGKILL the client (its process group) once the mock is serving this turn (held by its delay)."""
    version: str | None = None
    """Run this prompt with another client release (e.g. an old one that wrote the legacy layout)."""
    env: dict = field(default_factory=dict)
    """Extra environment for this prompt's client (documented beside the scenario)."""
    new_minute: bool = False
    """Start only once the wall-clock minute has changed: the client names a new chat file
    ``session-<YYYY-MM-DDTHH-MM>-<id[:8]>``, so a resume in the same minute as the start writes into the
    same file by coincidence, and one in a later minute does what it does for real users."""


@dataclass
class Scenario:
    name: str
    prompts: list[Prompt]
    subagents: list[Conversation] = field(default_factory=list)
    setup_files: dict[str, str] = field(default_factory=dict)
    notes: str = ""
    exit_codes: dict[str, int] = field(default_factory=dict)
    """Scripted shell command -> the exit code it has by construction."""
    mode: str = "print"
    """``print`` (``-p``, one client run per prompt) or ``interactive`` (the TUI under tmux, one run)."""
    start_early_in_minute: bool = False
    """Wait for a fresh minute if the current one is past :35, so every prompt runs in the same minute (the
    client's chat file name has minute resolution: a resume then appends a second header to the file)."""
    killed_by_test: bool = False
    """The test SIGKILLs the client (by the pid in ``client-P<n>.pid``): its exit status is not a failure."""
    steps: list = field(default_factory=list)
    """Interactive only: ``("prompt", i)`` types prompt i and waits for its last scripted turn;
    ``("rewind", n)`` opens ``/rewind``, picks the n-th newest prompt typed so far (1 = the last one) and
    answers "Rewind conversation" (the conversation only: files stay as they are)."""
    settings: dict = field(default_factory=dict)
    """Merged into the run's settings.json (a top-level key's dict is updated, e.g.
    ``{"model": {"compressionThreshold": 0.001}}``)."""
    summary: str | None = None
    """What the mock answers the client's chat-compression calls (mock_api.Script.summary)."""

    @property
    def slug(self) -> str:
        """The work dir's basename, hence the project's short name in projects.json."""
        return "gem-" + self.name.replace("_", "-")

    def marker(self, i: int) -> str:
        return f"[{self.name} P{i + 1}]"

    def prompt_text(self, i: int) -> str:
        return f"{self.marker(i)} {self.prompts[i].text}"

    def conversations(self) -> list[Conversation]:
        convs = [Conversation(self.marker(i), p.turns, f"P{i + 1}") for i, p in enumerate(self.prompts)]
        return convs + list(self.subagents)


def sh(command: str, description: str = "") -> dict:
    return call("run_shell_command", command=command, description=description or f"run {command[:30]}",
                dir_path="{W}")


ALL: dict[str, Scenario] = {}


def _add(s: Scenario) -> Scenario:
    ALL[s.name] = s
    return s


NOTES_TXT = "alpha\nbeta\ngamma\n"
CONFIG_INI = "[core]\nname = demo\nmode = slow\nretries = 3\n"

_add(Scenario(
    "shell_write",
    [Prompt("Count the lines of a tiny listing, then write notes.txt with three words.", [
        Turn([thought("**Planning the count**\n\nI will count lines with wc first."),
              text("Counting first."), sh("printf 'one\\ntwo\\n' | wc -l", "count two lines")], cached=12),
        Turn([text("Now writing the notes."), call("write_file", file_path="{W}/notes.txt", content=NOTES_TXT)]),
        Turn([text("Done: two lines counted and notes.txt written.")]),
    ])],
    notes="one turn: thought, a successful shell call (exit 0 proven by the wrapper) and a write_file of a new file",
    exit_codes={"printf 'one\\ntwo\\n' | wc -l": 0},
))

_add(Scenario(
    "resumed",
    [Prompt("Create app.py that prints hello and run it.", [
        Turn([thought("**Writing app.py**\n\nA one-line script."),
              call("write_file", file_path="{W}/app.py", content="print('hello')\n")]),
        Turn([sh("python3 app.py", "run app")]),
        Turn([text("app.py prints hello.")]),
    ]), Prompt("Change the greeting to goodbye and run it again.", [
        Turn([thought("**Editing**\n\nReplace hello by goodbye."),
              call("replace", file_path="{W}/app.py", old_string="hello", new_string="goodbye",
                   instruction="change the greeting")], cached=40),
        Turn([sh("python3 app.py", "run app again")]),
        Turn([text("Now it prints goodbye.")]),
    ], how="resume", new_minute=True)],
    notes="prompt 2 runs with --resume latest: the client appends a second header and a whole-history "
          "$set.messages in the Content shape (functionCall parts); each tool result must count once",
    exit_codes={"python3 app.py": 0},
))

_add(Scenario(
    "resumed_same_minute",
    [Prompt("Write a.txt.", [
        Turn([thought("**Creating a.txt**\n\nOne line."), text("Writing a.txt."),
              call("write_file", file_path="{W}/a.txt", content="a\n")]),
        Turn([sh("cat a.txt", "show a")]),
        Turn([text("a.txt holds a.")]),
    ]), Prompt("Append b to a.txt with replace.", [
        Turn([call("replace", file_path="{W}/a.txt", old_string="a\n", new_string="a\nb\n",
                   instruction="append b")]),
        Turn([text("a.txt now holds a and b.")]),
    ], how="resume")],
    start_early_in_minute=True,
    notes="both prompts in the same wall-clock minute: the resumed run's startup file name equals the "
          "session's own, so its header and context land inside the session file (the shape REALCLIENTS.md "
          "describes: a second header, $set.messages with only the context, $set.sessionId, then the "
          "whole-history $set.messages)",
    exit_codes={"cat a.txt": 0},
))

_add(Scenario(
    "failing",
    [Prompt("Run three commands: one that fails with 3, one that is not found, one that works.", [
        Turn([sh("echo oops >&2; exit 3", "fail with 3")]),
        Turn([sh("no-such-command-sessionsift", "not found")]),
        Turn([sh("echo fine", "works")]),
        Turn([text("The first two failed, the last one worked.")]),
    ])],
    notes="non-zero exits (3, 127) appear as an 'Exit Code:' line; the zero exit has none",
    exit_codes={"echo oops >&2; exit 3": 3, "no-such-command-sessionsift": 127, "echo fine": 0},
))

_add(Scenario(
    "subagent",
    [Prompt("Delegate writing sub.txt to the generalist agent.", [
        Turn([call("invoke_agent", agent_name="generalist",
                   prompt="SUBAGENT-A: write {W}/sub.txt with the word delegated, then check it with cat.")]),
        Turn([text("The generalist wrote sub.txt.")]),
    ])],
    subagents=[Conversation("SUBAGENT-A", [
        Turn([call("write_file", file_path="{W}/sub.txt", content="delegated\n")]),
        Turn([sh("cat {W}/sub.txt", "check sub.txt")]),
        Turn([call("complete_task", result={"response": "sub.txt holds the word delegated."})]),
    ], "SUBAGENT-A")],
    notes="invoke_agent(generalist): the subagent's own chat is chats/<parent session id>/<its id>.jsonl "
          "with kind 'subagent'",
    exit_codes={"cat {W}/sub.txt": 0},
))

_add(Scenario(
    "killed",
    [Prompt("Write part1.txt, then think for a long time.", [
        Turn([call("write_file", file_path="{W}/part1.txt", content="first part\n")]),
        Turn([text("This answer never arrives.")], delay=60.0),
    ], kill_at_turn=1, env={"GEMINI_CLI_NO_RELAUNCH": None})],
    notes="SIGKILL of the client's process group while the mock holds turn 2: the session ends mid-turn. "
          "Runs without GEMINI_CLI_NO_RELAUNCH (the client's default: a parent node relaunches itself as a "
          "child with a bigger heap), so client_processes shows both processes' command lines",
))

_add(Scenario(
    "replace_edit",
    [Prompt("In config.ini set mode to fast, then try a replace that cannot match.", [
        Turn([call("replace", file_path="{W}/config.ini", old_string="mode = slow", new_string="mode = fast",
                   instruction="set mode to fast")]),
        Turn([call("replace", file_path="{W}/config.ini", old_string="no such text", new_string="x",
                   instruction="a replace that cannot match")]),
        Turn([text("mode is fast now; the second replace found nothing.")]),
    ])],
    setup_files={"config.ini": CONFIG_INI},
    notes="replace of a file that existed before the session (originalContent is the old file); a replace "
          "whose old_string is absent fails (status error) and changes nothing",
))

FAST = ("shell_write", "resumed", "resumed_same_minute", "failing", "subagent", "killed", "replace_edit")
"""The scenarios the session-scoped pytest fixture runs."""

_add(Scenario(
    "legacy_json",
    [Prompt("Write old.txt and list it.", [
        Turn([call("write_file", file_path="{W}/old.txt", content="written by 0.38\n")]),
        Turn([sh("ls old.txt", "list it")]),
        Turn([text("old.txt is there.")]),
    ], version="0.38.2")],
    notes="run with @google/gemini-cli 0.38.2, the last release that wrote whole-file session-*.json",
    exit_codes={"ls old.txt": 0},
))

_add(Scenario(
    "legacy_migrated",
    [Prompt("Write v1.txt.", [
        Turn([call("write_file", file_path="{W}/v1.txt", content="one\n")]),
        Turn([text("v1.txt written.")]),
    ], version="0.28.2"), Prompt("Now write v2.txt.", [
        Turn([call("write_file", file_path="{W}/v2.txt", content="two\n")]),
        Turn([text("v2.txt written.")]),
    ], how="resume", new_minute=True)],
    notes="prompt 1 with 0.28.2 (hash-named tmp dir, whole-file .json), prompt 2 resumed with the pinned "
          "release: it copies the hash dir to the short-name dir and continues the session in a .jsonl "
          "beside the .json",
))

_add(Scenario(
    "rewind",
    [Prompt("Write keep.txt.", [
        Turn([call("write_file", file_path="{W}/keep.txt", content="kept\n")]),
        Turn([text("keep.txt written.")]),
    ]), Prompt("Write drop.txt.", [
        Turn([call("write_file", file_path="{W}/drop.txt", content="dropped later\n")]),
        Turn([text("drop.txt written.")]),
    ]), Prompt("Instead, write other.txt.", [
        Turn([call("write_file", file_path="{W}/other.txt", content="after the rewind\n")]),
        Turn([text("other.txt written.")]),
    ])],
    mode="interactive",
    steps=[("prompt", 0), ("prompt", 1), ("rewind", 1), ("prompt", 2)],
    notes="interactive (tmux): /rewind to prompt 2 with 'Rewind conversation' (files kept): the client "
          "appends {\"$rewindTo\": <prompt 2's message id>}; prompt 2 and its turn leave the conversation "
          "(drop.txt stays on disk: only the conversation was rewound)",
))

FAST = FAST + ("legacy_json", "legacy_migrated", "rewind")
