"""The scenario library: scripted sessions for the real Claude Code client.

Each :class:`Scenario` is a list of prompts; each prompt carries a unique marker
(``[<scenario> P<n>]``) that the mock uses to route requests to that prompt's
scripted assistant turns.  Subagent conversations are routed by their own
markers (``SUBAGENT-A`` ...) found in the subagent's prompt.

Paths are absolute under the scenario's work dir; ``{W}`` in any string is
replaced by that dir at run time (so the same library runs under any root).
"""
from __future__ import annotations

import struct
import uuid
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from .mock_api import Conversation, Turn, text, thinking, tool

UUID_NS = uuid.UUID("5e5510f7-51f7-4c1e-9a55-5e5510f75157")


def session_uuid(scenario: str, n: int = 0) -> str:
    return str(uuid.uuid5(UUID_NS, f"{scenario}/{n}"))


def tiny_png(w: int = 4, h: int = 4) -> bytes:
    """A valid w x h RGB PNG made with zlib/struct (red/blue checkerboard)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    rows = b""
    for y in range(h):
        rows += b"\x00" + b"".join(b"\xff\x00\x00" if (x + y) % 2 else b"\x00\x00\xff" for x in range(w))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


@dataclass
class ShellEdit:
    """A shell action between prompts: ``sed -i 's/old/new/' path`` (old/new: plain words)."""
    path: str
    old: str
    new: str

    def command(self, work: Path) -> list[str]:
        return ["sed", "-i", f"s/{self.old}/{self.new}/", self.path.replace("{W}", str(work))]

    def apply(self, content: str) -> str:
        return _sed_first_per_line(content, self.old, self.new)


def _sed_first_per_line(content: str, old: str, new: str) -> str:
    return "".join(l.replace(old, new, 1) for l in content.splitlines(keepends=True))


@dataclass
class Prompt:
    text: str
    turns: list[Turn] = field(default_factory=list)
    how: str = "new"  # print mode: "new" (--session-id), "resume" (--resume <id>), "continue" (--continue),
    # "fork" (--resume <id> --fork-session: the client writes a new session file), "fresh" (another
    # session: --session-id uuid5(scenario, n)); in an interactive scenario both run in print mode
    # after the TUI exited
    before: list[ShellEdit] = field(default_factory=list)
    slash: bool = False  # interactive slash command (e.g. /compact): sent verbatim, no marker
    wait_route: str | None = None  # interactive: wait until a request with this route prefix was served
    settle: float = 0.0  # seconds to wait after the prompt finished
    may_fail: bool = False  # print mode: a non-zero exit is expected (e.g. the turn ends on an API error)
    cwd: str | None = None  # print mode: run from this directory under the work dir (made if absent)


@dataclass
class Scenario:
    name: str
    mode: str  # "print" | "interactive"
    prompts: list[Prompt]
    subagents: list[Conversation] = field(default_factory=list)
    summary: str = "Summary: files were written and edited as the user asked."
    setup_files: dict[str, bytes] = field(default_factory=dict)  # relative path -> bytes, created before start
    extra_args: list[str] = field(default_factory=list)
    # tool_use ids are only known after materialisation; expectations name tool uses by (prompt#, turn#, block#)
    background: list[dict] = field(default_factory=list)  # [{"where": (conv, turn, block), "completes": bool}]
    snapshot_turns: list[tuple[int, int]] = field(default_factory=list)  # (prompt#, turn#) -> snapshot sessions/
    turn_actions: dict[tuple[int, int], list[ShellEdit]] = field(default_factory=dict)  # run when turn is served
    extra_env: dict[str, str] = field(default_factory=dict)  # documented deviations from the minimal env
    seed_config: dict = field(default_factory=dict)  # merged into $CLAUDE_CONFIG_DIR/.claude.json
    bypass: bool = True  # pass --dangerously-skip-permissions
    answers: list[tuple] = field(default_factory=list)  # interactive: (pane text, keys[, gate]) once each
    # (with a gate name, the dialog is answered only once the test releases that gate: common/gate.py)
    final_settle: float = 0.0
    fast: bool = False  # included in the pytest fixture's quick set
    notes: str = ""

    def marker(self, i: int) -> str:
        return f"[{self.name} P{i + 1}]"

    def prompt_text(self, i: int) -> str:
        p = self.prompts[i]
        return p.text if p.slash else f"{self.marker(i)} {p.text}"

    def conversations(self) -> list[Conversation]:
        convs = [Conversation(self.marker(i), p.turns, name=f"P{i + 1}")
                 for i, p in enumerate(self.prompts) if not p.slash]
        return convs + list(self.subagents)


W = "{W}"

# ----------------------------------------------------------------------------- scenarios

FILES_BASIC = Scenario(
    name="files_basic",
    mode="print",
    fast=True,
    # While turn 2 is served the shell changes notes.md (written by the session in turn 0) and seed.txt (only
    # Read).  2.1.x reports only the former (edited_text_file): Read stores offset=1 in its file state and the
    # changed-files scan skips entries with an offset.
    turn_actions={(0, 2): [ShellEdit(f"{W}/notes.md", "# Notes", "# NOTES"),
                           ShellEdit(f"{W}/seed.txt", "gamma", "GAMMA")]},
    setup_files={"pixel.png": tiny_png(), "seed.txt": b"alpha\nbeta\ngamma\n"},
    notes="Write, Read (text + PNG image), Edit (incl. replace_all), thinking blocks; a shell `sed -i` on a file "
          "the session had read, then `--resume` and `--continue` prompts.",
    prompts=[
        Prompt("Create hello.py and notes.md, then look at seed.txt and pixel.png.", turns=[
            Turn([thinking("I will create the two files first."),
                  tool("Write", file_path=f"{W}/hello.py", content="def hello():\n    return 'hello'\n"),
                  tool("Write", file_path=f"{W}/notes.md", content="# Notes\n\n- first\n- first again\n")]),
            Turn([tool("Read", file_path=f"{W}/seed.txt"), tool("Read", file_path=f"{W}/pixel.png")]),
            Turn([tool("Edit", file_path=f"{W}/hello.py", old_string="'hello'", new_string="'hello, world'")]),
            Turn([tool("Edit", file_path=f"{W}/notes.md", old_string="first", new_string="second", replace_all=True)]),
            Turn([text("Created hello.py and notes.md; seed.txt has three lines and pixel.png is a 4x4 image.")]),
        ]),
        Prompt("Append a line to hello.py.", how="resume",  # seed.txt and notes.md change between prompts
               before=[ShellEdit(f"{W}/seed.txt", "beta", "BETA"), ShellEdit(f"{W}/notes.md", "again", "AGAIN")],
               turns=[
                   Turn([tool("Read", file_path=f"{W}/hello.py")]),
                   Turn([tool("Edit", file_path=f"{W}/hello.py", old_string="    return 'hello, world'\n",
                              new_string="    return 'hello, world'\n\n\nGREETING = hello()\n")]),
                   Turn([text("Appended GREETING to hello.py.")]),
               ]),
        Prompt("Run the script.", how="continue", turns=[
            Turn([tool("Bash", command="python3 hello.py && echo ran-ok", description="Run hello.py")]),
            Turn([text("It ran.")]),
        ]),
    ],
)

BASH_BACKGROUND = Scenario(
    name="bash_background",
    mode="print",
    fast=True,
    notes="Two Bash commands with run_in_background: one completes during the session, one (sleep 600) is still "
          "running when the session ends.",
    prompts=[
        Prompt("Start two background jobs and wait a bit.", turns=[
            Turn([tool("Bash", command="sleep 0.3; echo fast-job-done > fast.out; echo fast-job-done",
                       description="Quick background job", run_in_background=True),
                  tool("Bash", command="sleep 600; echo never > slow.out", description="Long background job",
                       run_in_background=True)]),
            Turn([tool("Bash", command="sleep 2; ls", description="Wait for the quick job")]),
            Turn([text("The quick job finished; the long one is still running.")]),
        ]),
    ],
    background=[{"where": ("P1", 0, 0), "completes": True, "output_file": "fast.out"},
                {"where": ("P1", 0, 1), "completes": False, "output_file": "slow.out"}],
)

SUBAGENTS = Scenario(
    name="subagents",
    mode="print",
    fast=True,
    notes="Agent tool: a synchronous subagent (SUBAGENT-A) that reads and writes a file, and a background one "
          "(SUBAGENT-B, run_in_background) that runs Bash.",
    setup_files={"input.txt": b"one\ntwo\nthree\n"},
    prompts=[
        Prompt("Use helpers to summarise input.txt.", turns=[
            Turn([tool("Agent", description="Summarise input file", subagent_type="general-purpose",
                       prompt="SUBAGENT-A: read input.txt and write summary.txt", run_in_background=False)]),
            Turn([tool("Agent", description="Count lines in background", subagent_type="general-purpose",
                       prompt="SUBAGENT-B: count the lines of input.txt", run_in_background=True)]),
            Turn([tool("Bash", command="sleep 2; cat summary.txt", description="Wait, then show summary")]),
            Turn([text("summary.txt written; the line count helper ran in the background.")]),
        ]),
    ],
    subagents=[
        Conversation("SUBAGENT-A", name="agent-a", turns=[
            Turn([tool("Read", file_path=f"{W}/input.txt")]),
            Turn([tool("Write", file_path=f"{W}/summary.txt", content="3 lines: one two three\n")]),
            Turn([text("Wrote summary.txt (3 lines).")]),
        ]),
        Conversation("SUBAGENT-B", name="agent-b", turns=[
            Turn([tool("Bash", command="wc -l < input.txt", description="Count lines")]),
            Turn([text("input.txt has 3 lines.")]),
        ]),
    ],
)

INTERACTIVE = Scenario(
    name="interactive",
    mode="interactive",
    fast=True,
    notes="tmux-driven interactive session: file-history snapshots, turn_duration, the live registry row "
          "sessions/<pid>.json captured while a turn is held busy, a shell edit between prompts "
          "(edited_text_file), and a manual /compact.",
    setup_files={"config.ini": b"[main]\nmode = slow\nlevel = 1\n"},
    prompts=[
        Prompt("Read config.ini and create app.py.", turns=[
            Turn([tool("Read", file_path=f"{W}/config.ini")]),
            Turn([tool("Write", file_path=f"{W}/app.py", content="MODE = 'slow'\n")], delay=2.5),
            Turn([text("Read config.ini; created app.py.")]),
        ]),
        Prompt("Switch app.py to match config.ini.",
               before=[ShellEdit(f"{W}/config.ini", "slow", "fast"), ShellEdit(f"{W}/app.py", "MODE", "APP_MODE")],
               turns=[
                   Turn([tool("Edit", file_path=f"{W}/app.py", old_string="'slow'", new_string="'fast'")]),
                   Turn([tool("Read", file_path=f"{W}/app.py")]),
                   Turn([text("app.py now uses fast mode.")]),
               ]),
        Prompt("/compact", slash=True, wait_route="compact", settle=1.0),
        Prompt("What did we do?", turns=[
            Turn([text("We read config.ini, created app.py and switched it to fast mode.")]),
        ]),
    ],
    snapshot_turns=[(0, 1)],
    turn_actions={(0, 1): [ShellEdit(f"{W}/config.ini", "level = 1", "level = 2")]},
    summary="Summary: the user asked to read config.ini and create app.py; app.py was switched to fast mode "
            "after config.ini changed.",
)

PLAN_MODE = Scenario(
    name="plan_mode",
    mode="interactive",
    notes="Interactive session started in plan mode (--permission-mode plan, no bypass): plan_mode attachment, "
          "the plan file written under $CLAUDE_CONFIG_DIR/plans/, ExitPlanMode approved in the TUI dialog "
          "(manually approve edits), then the implementation, whose Write is approved in the permission dialog. "
          "Before that, an AskUserQuestion answered in its TUI dialog (first option).",
    bypass=False,
    extra_args=["--permission-mode", "plan"],
    # option 1 is "Yes, and use auto mode"; take option 2 (manually approve edits) and approve the Write
    answers=[("Which greeting style should greet() use?", ["Enter"]), ("Review your answers", ["Enter"]),
             ("Would you like to proceed?", ["Down", "Enter"]), ("Do you want to create greet.py?", ["Enter"])],
    prompts=[
        Prompt("Plan a greeting module.", turns=[
            Turn([tool("AskUserQuestion", questions=[{
                "question": "Which greeting style should greet() use?", "header": "Style", "multiSelect": False,
                "options": [{"label": "Casual", "description": "Say hi"},
                            {"label": "Formal", "description": "Say good day"}]}])]),
            Turn([tool("Write", file_path="{PLAN_FILE}",
                       content="# Plan\n\n1. Create greet.py with greet(name).\n2. Done.\n")]),
            Turn([tool("ExitPlanMode")]),
            Turn([tool("Write", file_path=f"{W}/greet.py", content="def greet(name):\n    return f'hi {name}'\n")]),
            Turn([text("Implemented the plan: greet.py created.")]),
        ]),
    ],
)

# Monitor is gated by a GrowthBook flag (tengu_amber_sentinel, default off).  Offline the flag can only come from
# the local disk cache in .claude.json, which the client reads only with CLAUDE_CODE_GB_DISK_CACHE_WHEN_TELEMETRY_OFF.
GB_ENV = {"CLAUDE_CODE_GB_DISK_CACHE_WHEN_TELEMETRY_OFF": "1"}
GB_SEED = {"cachedGrowthBookFeatures": {"tengu_amber_sentinel": True}}

MONITOR = Scenario(
    name="monitor",
    mode="print",
    fast=True,
    extra_env=GB_ENV,
    seed_config=GB_SEED,
    notes="Monitor tool (flag enabled from the local GrowthBook disk cache): a short monitor that emits three "
          "lines and exits.  (A persistent monitor keeps `claude -p` from ever exiting, so none is scripted.)",
    prompts=[
        Prompt("Watch a counter.", turns=[
            Turn([tool("Monitor", description="Count to three", timeout_ms=20000, persistent=False,
                       command="for i in 1 2 3; do echo tick $i; sleep 0.2; done")]),
            Turn([tool("Bash", command="sleep 2; echo waited", description="Wait for ticks")]),
            Turn([text("The counter reached three.")]),
        ]),
    ],
)

TASKS = Scenario(
    name="tasks",
    mode="print",
    fast=True,
    extra_args=["--model", "claude-sonnet-4-5-20250929"],
    notes="Task tools (TaskCreate/TaskUpdate/TaskList/TaskGet): 2.1.258 registers them only for models older than "
          "its current default, so this scenario runs with --model claude-sonnet-4-5-20250929.",
    prompts=[
        Prompt("Track two tasks.", turns=[
            Turn([tool("TaskCreate", subject="Write the parser", description="Parse the input format",
                       activeForm="Writing the parser"),
                  tool("TaskCreate", subject="Write the tests", description="Cover the parser",
                       activeForm="Writing the tests")]),
            Turn([tool("TaskUpdate", taskId="1", status="in_progress")]),
            Turn([tool("Write", file_path=f"{W}/parser.py", content="def parse(s):\n    return s.split()\n"),
                  tool("TaskUpdate", taskId="1", status="completed")]),
            Turn([tool("TaskList")]),
            Turn([tool("TaskGet", taskId="2")]),
            Turn([text("Parser done; tests still pending.")]),
        ]),
    ],
)

TODOS = Scenario(
    name="todos",
    mode="print",
    fast=True,
    extra_env={"CLAUDE_CODE_ENABLE_TASKS": "false", "CLAUDE_CODE_ENABLE_TODO_TOOLS": "1"},
    notes="TodoWrite: 2.1.258 registers it only when the Task tools are off (CLAUDE_CODE_ENABLE_TASKS=false) and, "
          "on its default model, only with CLAUDE_CODE_ENABLE_TODO_TOOLS=1.",
    prompts=[
        Prompt("Keep a todo list.", turns=[
            Turn([tool("TodoWrite", todos=[
                {"content": "Write the parser", "status": "in_progress", "activeForm": "Writing the parser"},
                {"content": "Write the tests", "status": "pending", "activeForm": "Writing the tests"}])]),
            Turn([tool("Write", file_path=f"{W}/parser.py", content="def parse(s):\n    return s.split()\n")]),
            Turn([tool("TodoWrite", todos=[
                {"content": "Write the parser", "status": "completed", "activeForm": "Writing the parser"},
                {"content": "Write the tests", "status": "in_progress", "activeForm": "Writing the tests"}])]),
            Turn([text("Parser written; tests in progress.")]),
        ]),
    ],
)

ALL: dict[str, Scenario] = {s.name: s for s in [FILES_BASIC, BASH_BACKGROUND, SUBAGENTS, INTERACTIVE, PLAN_MODE,
                                                 MONITOR, TASKS, TODOS]}


def register(s: Scenario) -> Scenario:
    ALL[s.name] = s
    return s
