"""The scenario library: scripted sessions for the real Codex CLI (``codex exec``).

Each :class:`Scenario` is a list of prompts; each prompt carries a marker (``[<scenario> P<n>]``)
the mock routes on.  A delegated task (``spawn_agent``) is routed by its own marker
(``SUBAGENT-A``) found in the task message the child thread receives.

``{W}`` in any string is the scenario's work dir (the client's cwd), filled in at run time, so the
same library runs under any root.  Every call names what the script expects of it
(``expect_exit``; ``expect_changes`` for a patch): the runner copies those into the ground truth,
so tests compare the reader with what the script implies, not with what the reader found.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .mock_api import Conversation, Turn, call, patch, say, think, tool_search

W = "{W}"


def exec_cmd(cmd: str, expect_exit: int | None = 0, **extra) -> dict:
    """An ``exec_command`` call (the shell tool of Codex CLI 0.171.0 with a catalog model)."""
    c = call("exec_command", cmd=cmd, workdir=W, yield_time_ms=10000, **extra)
    c["expect_exit"] = expect_exit
    return c


def shell_cmd(cmd: str, expect_exit: int | None = 0) -> dict:
    """A ``shell`` call (the shell tool of older releases, e.g. 0.50.0: ``command`` is an argv)."""
    c = call("shell", command=["bash", "-lc", cmd], workdir=W, timeout_ms=10000)
    c["expect_exit"] = expect_exit
    return c


def add_file(path: str, content: str) -> dict:
    lines = "".join(f"+{ln}\n" for ln in content.splitlines())
    p = patch(f"*** Begin Patch\n*** Add File: {path}\n{lines}*** End Patch\n")
    p["expect_changes"] = [{"path": path, "action": "create", "content": content}]
    return p


def update_file(path: str, old: str, new: str, before: str) -> dict:
    """Replace line ``old`` by ``new`` in a file whose content is ``before`` (one hunk)."""
    minus = "".join(f"-{ln}\n" for ln in old.split("\n"))
    plus = "".join(f"+{ln}\n" for ln in new.split("\n"))
    p = patch(f"*** Begin Patch\n*** Update File: {path}\n@@\n{minus}{plus}*** End Patch\n")
    p["expect_changes"] = [{"path": path, "action": "update", "before": before,
                            "content": before.replace(old + "\n", new + "\n", 1)}]
    return p


def rejected_update(path: str, old: str, new: str) -> dict:
    """An update whose context line is not in the file: the client refuses it and changes nothing."""
    p = patch(f"*** Begin Patch\n*** Update File: {path}\n@@\n-{old}\n+{new}\n*** End Patch\n")
    p["expect_changes"] = []
    p["expect_rejected"] = True
    return p


def agent_call(name: str, **args) -> dict:
    """A call of a multi-agent tool (namespace ``multi_agent_v1``, loaded through ``tool_search``)."""
    c = call(name, **args)
    c["namespace"] = "multi_agent_v1"
    return c


@dataclass
class Prompt:
    text: str
    turns: list[Turn] = field(default_factory=list)
    how: str = "new"  # "new" (codex exec PROMPT) | "resume" (codex exec resume --last PROMPT)
    #                 | "fork" (codex exec fork <first thread id> PROMPT: a new thread from its history)
    flags: list[str] = field(default_factory=list)
    """Extra `codex exec` flags for this prompt (e.g. ``--image=pic.png``: a file attached to the prompt)."""


@dataclass
class Scenario:
    name: str
    prompts: list[Prompt]
    subagents: list[Conversation] = field(default_factory=list)
    setup_files: dict[str, bytes] = field(default_factory=dict)
    config: list[str] = field(default_factory=list)  # `-c key=value` overrides (documented per scenario)
    archive_after: bool = False  # run `codex archive <thread id>` after the prompts (-> archived_sessions/)
    kill_at: tuple[int, int] | None = None  # (prompt#, turn#): SIGKILL the client while that turn is held
    killed_by_test: bool = False  # the test SIGKILLs the client (by the pid in client-P<n>.pid): its rc is not a failure
    notes: str = ""

    def marker(self, i: int) -> str:
        return f"[{self.name} P{i + 1}]"

    def prompt_text(self, i: int) -> str:
        return f"{self.marker(i)} {self.prompts[i].text}"

    def conversations(self) -> list[Conversation]:
        return [Conversation(self.marker(i), p.turns, name=f"P{i + 1}")
                for i, p in enumerate(self.prompts)] + list(self.subagents)


HELLO = "def hello():\n    return 'hello'\n"

SHELL_AND_PATCH = Scenario(
    name="shell_and_patch",
    notes="One turn: reasoning, a shell call (exec_command) that writes and counts a file, apply_patch adding "
          "hello.py, apply_patch updating it, a final answer. The work dir holds an AGENTS.md, which the client "
          "injects as context.",
    setup_files={"AGENTS.md": b"# Agent notes\n\nKeep answers short.\n"},
    prompts=[Prompt("Write data.txt with a shell command, then create hello.py and edit it.", turns=[
        Turn([think("I will write data.txt with the shell first."),
              exec_cmd("printf 'alpha\\nbeta\\n' > data.txt && wc -l data.txt")]),
        Turn([add_file(f"{W}/hello.py", HELLO)]),
        Turn([update_file(f"{W}/hello.py", "    return 'hello'", "    return 'hello, world'", HELLO)]),
        Turn([say("data.txt has 2 lines; hello.py returns 'hello, world'.")]),
    ])],
)

RESUMED = Scenario(
    name="resumed",
    notes="Prompt 1 runs a shell call; prompt 2 is `codex exec resume --last`, which appends to the same "
          "rollout file (a second task_started/turn_context, no second session_meta), patches and runs again.",
    setup_files={"notes.md": b"# Notes\n\n- first\n"},
    prompts=[
        Prompt("Show notes.md.", turns=[
            Turn([exec_cmd("cat notes.md")]),
            Turn([say("notes.md has one item.")]),
        ]),
        Prompt("Add a second item to notes.md and show it.", how="resume", turns=[
            Turn([update_file(f"{W}/notes.md", "- first", "- first\n- second", "# Notes\n\n- first\n")]),
            Turn([exec_cmd("grep -c '^- ' notes.md")]),
            Turn([say("notes.md now has two items.")]),
        ]),
    ],
)

FAILING = Scenario(
    name="failing_command",
    archive_after=True,
    notes="A shell call that exits 3 (stderr text), one that is not found (127), an apply_patch whose context "
          "does not match (the client rejects it: no FileChange event, nothing written), then an answer. "
          "Afterwards `codex archive <id>` moves the rollout to archived_sessions/.",
    setup_files={"config.ini": b"[main]\nmode = fast\n"},
    prompts=[Prompt("Run the check script.", turns=[
        Turn([exec_cmd("echo checking; echo 'check failed: missing config' >&2; exit 3", expect_exit=3)]),
        Turn([exec_cmd("definitely-not-a-command-sessionsift", expect_exit=127)]),
        Turn([rejected_update(f"{W}/config.ini", "mode = slow", "mode = safe")]),
        Turn([say("The check failed with exit code 3.")]),
    ])],
)

KILLED = Scenario(
    name="killed",
    kill_at=(0, 1),
    notes="The client is SIGKILLed while the mock holds the second response of the turn (30 s delay): the "
          "rollout ends after the first shell call's output, with no task_complete.",
    prompts=[Prompt("Start a long job.", turns=[
        Turn([exec_cmd("echo started > job.log")]),
        Turn([say("never delivered")], delay=30.0),
    ])],
)

SUBAGENT = Scenario(
    name="subagent",
    notes="Delegation: the model loads the deferred multi_agent_v1 tools with tool_search, calls spawn_agent "
          "(SUBAGENT-A runs a shell call and adds summary.txt in its own thread and rollout, linked to the parent "
          "by session_meta.parent_thread_id), waits with wait_agent on the id spawn_agent returned, and answers.",
    setup_files={"input.txt": b"one\ntwo\nthree\n"},
    prompts=[Prompt("Delegate a summary of input.txt to a helper agent.", turns=[
        Turn([tool_search("spawn agent")]),
        Turn([agent_call("spawn_agent", message="SUBAGENT-A: count the lines of input.txt and write summary.txt")]),
        Turn([agent_call("wait_agent", targets=["{AGENT_ID}"], timeout_ms=30000)]),
        Turn([say("The helper wrote summary.txt.")]),
    ])],
    subagents=[Conversation("SUBAGENT-A", name="agent-a", turns=[
        Turn([exec_cmd("wc -l < input.txt")]),
        Turn([add_file(f"{W}/summary.txt", "3 lines: one two three\n")]),
        Turn([say("summary.txt written (3 lines).")]),
    ])],
)

COMPACTION = Scenario(
    name="compaction",
    config=["model_auto_compact_token_limit=4000"],
    notes="The second response reports 5000 input tokens, over model_auto_compact_token_limit (4000): the client "
          "compacts mid-turn (a summary request, a `compacted` line with replacement_history, ContextCompaction), "
          "then finishes the turn; prompt 2 resumes after the compaction.",
    prompts=[
        Prompt("Check two things.", turns=[
            Turn([exec_cmd("echo one")]),
            Turn([exec_cmd("echo two")], input_tokens=5000),
            Turn([say("Both checked.")]),
        ]),
        Prompt("One more.", how="resume", turns=[
            Turn([exec_cmd("echo three")]),
            Turn([say("Done with three.")]),
        ]),
    ],
)

ALL: dict[str, Scenario] = {s.name: s for s in (SHELL_AND_PATCH, RESUMED, FAILING, SUBAGENT, KILLED, COMPACTION)}


# ----------------------------------------------------------------------------- older releases
# Releases before ~0.100 (measured: 0.50.0, with the catalog slug gpt-5-codex) offer `shell` (argv)
# instead of `exec_command`, write no token_usage_record, no turn ids, no item_completed, and the
# legacy UI events (user_message, agent_message, agent_reasoning, token_count with info null).

LEGACY = Scenario(
    name="legacy",
    notes="For releases before ~0.100 (0.50.0): reasoning, `shell` calls (exit 0 and exit 3), apply_patch "
          "Add/Update and a rejected Update in prompt 1; prompt 2 via `exec resume --last` runs `cat`.",
    setup_files={"config.ini": b"[main]\nmode = fast\n"},
    prompts=[
        Prompt("Write data.txt, create and edit hello.py, run the check.", turns=[
            Turn([think("Shell first, then the patches."),
                  shell_cmd("printf 'alpha\\nbeta\\n' > data.txt && wc -l data.txt")]),
            Turn([add_file(f"{W}/hello.py", HELLO)]),
            Turn([update_file(f"{W}/hello.py", "    return 'hello'", "    return 'hello, world'", HELLO)]),
            Turn([shell_cmd("echo checking; echo 'check failed: missing config' >&2; exit 3", expect_exit=3)]),
            Turn([rejected_update(f"{W}/config.ini", "mode = slow", "mode = safe")]),
            Turn([say("hello.py is ready; the check failed with exit code 3.")]),
        ]),
        Prompt("Show hello.py.", how="resume", turns=[
            Turn([shell_cmd("cat hello.py")]),
            Turn([say("hello.py returns 'hello, world'.")]),
        ]),
    ],
)

LEGACY_ALL: dict[str, Scenario] = {s.name: s for s in (LEGACY,)}
ALL_ANY: dict[str, Scenario] = {**ALL, **LEGACY_ALL}
