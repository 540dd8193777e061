"""Real-client scenarios for answers that must stay true on rewound, forked and shell-written sessions
(issue 10). What they produce with the pinned client, offline:

- `robust_heredoc` (print): files written through heredocs whose redirect the bash grammar nests inside
  the heredoc node (`cat <<'EOF' > f`, `python3 - <<'EOF' > f`, `tee f <<EOF`, `cat <<'EOF' | tee f`),
  and full views printed after a change in the same command (`sed -i ... f && cat f`,
  `echo x >> f && cat f`, `cat <<'EOF' > f && cat f`).
- `robust_fork` (print): a session of two prompts, then `--resume <id> --fork-session`: the client
  copies the earlier records into a NEW session file (with its own session id) and appends the new
  prompt there.
- `robust_rewind` (interactive): P1 writes a.txt; P2 creates b.txt and edits a.txt; then the operator
  rewinds (Esc Esc) to before P2 and picks "Restore code and conversation": the client puts a.txt back
  and removes b.txt; P3 follows on the restored branch.

Scenarios register into the harness's registry and run through the census module's inner (TuiKeys
steps, keys typed while a turn is served).
"""
from __future__ import annotations

import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from . import runner
from .mock_api import Turn, text, tool
from .scenarios import Prompt, W, register
from .scenarios_census import CensusScenario, TuiKeys, inside  # noqa: F401  (inside: run by the runner)

MODULE = "tests.realclient.scenarios_robust"

HEREDOC = register(CensusScenario(
    name="robust_heredoc",
    mode="print",
    notes="Heredoc writes whose redirect sits inside the heredoc node, and full views after a change.",
    setup_files={"h1.txt": b"old h1\n"},
    prompts=[Prompt("Write the files with the shell.", turns=[
        Turn([tool("Read", file_path=f"{W}/h1.txt")]),
        Turn([tool("Bash", command="cat <<'EOF' > h1.txt\nnew one\nnew two\nEOF", description="heredoc write")]),
        Turn([tool("Bash", command="python3 - <<'EOF' > h2.txt\nprint('from python')\nEOF",
                   description="python heredoc")]),
        Turn([tool("Bash", command="tee h3.txt <<EOF\nunquoted $((40 + 2))\nEOF", description="tee heredoc")]),
        Turn([tool("Bash", command="cat <<'EOF' | tee h5.txt\npiped body\nEOF", description="piped heredoc")]),
        Turn([tool("Write", file_path=f"{W}/v.txt", content="alpha\nbeta\n")]),
        Turn([tool("Bash", command="sed -i 's/alpha/ALPHA/' v.txt && cat v.txt", description="sed, then show")]),
        Turn([tool("Write", file_path=f"{W}/w.txt", content="x\n")]),
        Turn([tool("Bash", command="echo y >> w.txt && cat w.txt", description="append, then show")]),
        Turn([tool("Bash", command="cat <<'EOF' > h4.txt && cat h4.txt\nfour\nEOF", description="write, show")]),
        Turn([text("All files written.")]),
    ])],
))

FORK = register(CensusScenario(
    name="robust_fork",
    mode="print",
    notes="Two prompts in one session (4 Writes), then `--resume <id> --fork-session` with one more Write: the "
          "fork is a new session file holding copies of the first session's records.",
    prompts=[
        Prompt("Create the first two files.", turns=[
            Turn([tool("Write", file_path=f"{W}/f1.txt", content="one\n"),
                  tool("Write", file_path=f"{W}/f2.txt", content="two\n")]),
            Turn([text("Created f1 and f2.")]),
        ]),
        Prompt("Create two more.", how="resume", turns=[
            Turn([tool("Write", file_path=f"{W}/f3.txt", content="three\n")]),
            Turn([tool("Write", file_path=f"{W}/f4.txt", content="four\n")]),
            Turn([text("Created f3 and f4.")]),
        ]),
        Prompt("Branch off and create a fifth.", how="fork", turns=[
            Turn([tool("Write", file_path=f"{W}/f5.txt", content="five\n")]),
            Turn([text("Created f5 in the fork.")]),
        ]),
    ],
))


def rewind_restoring_code(prompt: str, answer: str) -> list:
    """TuiKeys steps of a rewind to before the last prompt that also restores the code: Esc Esc, Up to
    the last prompt, Enter; the confirmation then offers "Restore code and conversation" first (the
    prompt changed files); the input then holds the rewound prompt, which is cleared."""
    def restored(pane: str) -> bool:
        return "Confirm you want to restore" not in pane and answer not in pane and prompt in pane
    return [(None, ["Escape"], 0.3), (None, ["Escape"], 0.2),
            ("Restore the code and/or conversation", ["Up"], 0.5), (None, ["Enter"], 0.2),
            ("Restore code and conversation", ["Enter"], 0.2), (restored, ["C-u"], 0.3),
            (lambda pane: prompt not in pane, None, 0.2)]


REWIND = register(CensusScenario(
    name="robust_rewind",
    mode="interactive",
    notes="P1 writes a.txt; P2 creates b.txt and edits a.txt, answered; Esc Esc rewinds to before P2 with "
          "'Restore code and conversation' (a.txt back to P1's content, b.txt removed); P3 on the restored branch.",
    prompts=[
        Prompt("Create a.txt.", turns=[
            Turn([tool("Write", file_path=f"{W}/a.txt", content="first version\n")]),
            Turn([text("Created a.txt.")]),
        ]),
        Prompt("Create b.txt and change a.txt.", turns=[
            Turn([tool("Write", file_path=f"{W}/b.txt", content="made in the abandoned branch\n")]),
            Turn([tool("Edit", file_path=f"{W}/a.txt", old_string="first", new_string="second")]),
            Turn([text("Created b.txt; a.txt changed.")]),
        ]),
        Prompt("Just read a.txt.", before=[TuiKeys("robust_rewind", rewind_restoring_code(
            "[robust_rewind P2] Create b.txt and change a.txt.", "Created b.txt; a.txt changed."))],
               turns=[Turn([tool("Read", file_path=f"{W}/a.txt")]), Turn([text("a.txt says first version.")])]),
    ],
    final_settle=0.5,
))

REWIND_FORK = register(CensusScenario(
    name="robust_rewind_fork",
    mode="interactive",
    notes="robust_rewind's session (P1 writes a.txt; P2 writes b.txt and edits a.txt, answered; Esc Esc rewinds "
          "to before P2 restoring code and conversation; P3 on the restored branch), then, once the TUI exited, "
          "`claude --resume <id> --fork-session -p` (P4, one Write): the fork copies only the live branch (P1 and "
          "P3's records, not P2's abandoned ones) into a new session file.",
    prompts=[
        Prompt("Create a.txt.", turns=[
            Turn([tool("Write", file_path=f"{W}/a.txt", content="first version\n")]),
            Turn([text("Created a.txt.")]),
        ]),
        Prompt("Create b.txt and change a.txt.", turns=[
            Turn([tool("Write", file_path=f"{W}/b.txt", content="made in the abandoned branch\n")]),
            Turn([tool("Edit", file_path=f"{W}/a.txt", old_string="first", new_string="second")]),
            Turn([text("Created b.txt; a.txt changed.")]),
        ]),
        Prompt("Write c.txt.", before=[TuiKeys("robust_rewind_fork", rewind_restoring_code(
            "[robust_rewind_fork P2] Create b.txt and change a.txt.", "Created b.txt; a.txt changed."))],
               turns=[Turn([tool("Write", file_path=f"{W}/c.txt", content="on the restored branch\n")]),
                      Turn([text("Created c.txt.")])]),
        Prompt("Branch off and write d.txt.", how="fork", turns=[
            Turn([tool("Write", file_path=f"{W}/d.txt", content="in the fork\n")]),
            Turn([text("Created d.txt in the fork.")]),
        ]),
    ],
    final_settle=0.5,
))

BIG_OUTPUT_CMD = "seq -f 'row %g of the long report' 1 3000; echo MOVED-TAIL-$((4000+242))"

MOVED_PLAN = register(CensusScenario(
    name="robust_moved_plan",
    mode="print",
    bypass=False,
    extra_args=["--permission-mode", "plan"],
    notes="Print mode in plan mode: the plan file is written under $CLAUDE_CONFIG_DIR/plans/ and the "
          "plan_mode attachment records its ABSOLUTE path; the test then moves the data root.",
    prompts=[Prompt("Plan a tiny change.", turns=[
        Turn([tool("Write", file_path="{PLAN_FILE}", content="# Plan\n\n1. Do the tiny change.\n")]),
        Turn([text("The plan is written.")]),
    ])],
))

MOVED_OUTPUT = register(CensusScenario(
    name="robust_moved_output",
    mode="print",
    notes="A Bash output large enough for the client to persist it under the session's tool-results/ "
          "(the tool_result records its ABSOLUTE path); the test then moves the data root.",
    prompts=[Prompt("Print the long report.", turns=[
        Turn([tool("Bash", command=BIG_OUTPUT_CMD, description="Long report")]),
        Turn([text("Printed it.")]),
    ])],
))

REWIND_ROOT_FORK = register(CensusScenario(
    name="robust_rewind_root_fork",
    mode="interactive",
    notes="P1 writes f1 and f2, answered; Esc Esc rewinds to before P1 (its first prompt) restoring code and "
          "conversation; P2 on the restored branch writes f3 and f4 - a new root: its first record has no parent; "
          "then, once the TUI exited, `claude --resume <id> --fork-session -p` (P3, text only): the fork copies the "
          "live branch, which starts at P2's record, not at the file's first one.",
    prompts=[
        Prompt("Create the first two files.", turns=[
            Turn([tool("Write", file_path=f"{W}/f1.txt", content="one\n"),
                  tool("Write", file_path=f"{W}/f2.txt", content="two\n")]),
            Turn([text("Created f1 and f2.")]),
        ]),
        Prompt("Create two other files.", before=[TuiKeys("robust_rewind_root_fork", rewind_restoring_code(
            "[robust_rewind_root_fork P1] Create the first two files.", "Created f1 and f2."))], turns=[
            Turn([tool("Write", file_path=f"{W}/f3.txt", content="three\n")]),
            Turn([tool("Write", file_path=f"{W}/f4.txt", content="four\n")]),
            Turn([text("Created f3 and f4.")]),
        ]),
        Prompt("Branch off and say what is there.", how="fork", turns=[
            Turn([text("f3 and f4 are there.")]),
        ]),
    ],
    final_settle=0.5,
))

ALL = {s.name: s for s in (HEREDOC, FORK, REWIND, REWIND_FORK, REWIND_ROOT_FORK, MOVED_PLAN, MOVED_OUTPUT)}


def run_robust_scenario(name: str, root: Path, timeout: float = 300) -> dict:
    """Run `name` inside `unshare -n`; return its ground truth."""
    return runner.run_scenario(name, root, timeout=timeout, module=MODULE)


def run_all(root: Path, names=tuple(ALL), jobs: int = 3) -> dict[str, dict]:
    with ThreadPoolExecutor(max_workers=jobs) as ex:
        return dict(zip(names, ex.map(lambda n: run_robust_scenario(n, root), names)))


if __name__ == "__main__":
    sys.exit(runner.main(module=MODULE))
