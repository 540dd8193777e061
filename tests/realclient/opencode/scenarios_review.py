"""Scenarios a reviewer wrote to try the tool as a new user (differently shaped from the library):
a long session continued twice, several files (a unicode path), a big output, failures, a subagent
whose file the parent then edits, hostile text (ESC, CR, bidi) in a prompt and in an output.
Run one: ``python -m tests.realclient.opencode.runner tests.realclient.opencode.scenarios_review:long_haul``."""
from __future__ import annotations

from .mock_chat import Step
from .scenarios import Prompt, Scenario, bash, edit, write

ALL: dict[str, Scenario] = {}

CAFE = "café = 'ünïcödé ✓'\n"

ALL["long_haul"] = Scenario(
    name="long_haul",
    title="Long haul",
    git=True,
    prompts=[
        Prompt("[long_haul P1] Set up three files and check the tree.", [
            Step(reasoning="Three files, then a listing.", calls=[write("a.py", "A = 1\n")]),
            Step(calls=[write("données/résumé café.py", CAFE)]),
            Step(calls=[write("b.py", "B = 2\n")]),
            Step(calls=[bash("seq 1 60000", "A big listing")]),
            Step(calls=[bash("ls nope-missing-dir", "A failing listing")]),
            Step(calls=[edit("a.py", "A = 1", "A = 10")]),
            Step(text="a.py, b.py and données/résumé café.py are set up; one listing failed."),
        ]),
        Prompt("[long_haul P2] Delegate shared.txt, then fix it up.", [
            Step(calls=[("task", {"description": "Write shared.txt",
                                  "prompt": "SUBAGENT-A: write shared.txt with the line from-sub.",
                                  "subagent_type": "general"})]),
            Step(calls=[edit("shared.txt", "from-sub", "from-parent")]),
            Step(calls=[bash("printf 'red \\033[31mALERT\\033[0m\\rover \\xe2\\x80\\xae evil\\n'", "Hostile")]),
            Step(text="shared.txt now says from-parent."),
        ], how="continue"),
        Prompt("[long_haul P3] Last: \x1b[2J check\tit — ✓.", [
            Step(calls=[write("b.py", "B = 3\n")]),
            Step(calls=[bash("cat b.py; exit 4", "Show b and fail")]),
            Step(text="b.py holds B = 3."),
        ], how="continue"),
    ],
    subagents={"SUBAGENT-A": [
        Step(calls=[write("shared.txt", "from-sub\n")]),
        Step(text="shared.txt written."),
    ]},
    expect_exit={"P1/3/0": 0, "P1/4/0": 2, "P2/2/0": 0, "P3/1/0": 4},
    notes=["P1: 3 writes (one unicode path), a 60000-line output, exit 2, an edit; P2 (--continue): a task"
           " subagent writes shared.txt, the parent edits it, a hostile output; P3 (--continue): an ESC/tab"
           " prompt, an overwrite of b.py, a command that prints then exits 4"],
)

ALL["big_output"] = Scenario(
    name="big_output",
    title="Big output",
    prompts=[Prompt("[big_output P1] Print a long listing.", [
        Step(calls=[bash("seq 1 5000", "A long listing")]),
        Step(text="The listing ends at 5000."),
    ])],
    expect_exit={"P1/0/0": 0},
    notes=["seq 1 5000 (5,000 lines) is over opencode's cut: the result holds '...output truncated...', the path"
           " of the whole output (metadata.outputPath, under <data dir>/tool-output/) and the last lines only; the"
           " first lines (e.g. 1000) are not in what the model read"],
)
