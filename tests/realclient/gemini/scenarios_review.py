"""Scenarios a reviewer wrote to try the tool as a new user (differently shaped from the library):
a long session resumed twice, several files (unicode names), a big shell output, failures, a
subagent whose file the parent then edits, hostile text (ESC, CR, bidi) in a prompt and an output.
Run one: ``python -m tests.realclient.gemini.runner tests.realclient.gemini.scenarios_review:long_haul``."""
from __future__ import annotations

from .mock_api import Conversation, Turn, call, text, thought
from .scenarios import Prompt, Scenario, sh

ALL: dict[str, Scenario] = {}

CAFE = "café = 'ünïcödé ✓'\n"

ALL["long_haul"] = Scenario(
    "long_haul",
    [Prompt("Set up three files and check the tree.", [
        Turn([thought("**Setting up**\n\nThree files, then a listing."),
              call("write_file", file_path="{W}/a.py", content="A = 1\n")]),
        Turn([call("write_file", file_path="{W}/données/résumé café.py", content=CAFE)]),
        Turn([call("write_file", file_path="{W}/b.py", content="B = 2\n")]),
        Turn([sh("seq 1 50000", "a big listing")]),
        Turn([sh("ls nope-missing-dir", "a failing listing")]),
        Turn([call("replace", file_path="{W}/a.py", old_string="A = 1", new_string="A = 10",
                   instruction="bump A")]),
        Turn([text("a.py, b.py and données/résumé café.py are set up; one listing failed.")]),
    ]), Prompt("Delegate shared.txt, then fix it up.", [
        Turn([call("invoke_agent", agent_name="generalist",
                   prompt="SUBAGENT-A: write {W}/shared.txt with the line from-sub, then check it with cat.")]),
        Turn([call("replace", file_path="{W}/shared.txt", old_string="from-sub", new_string="from-parent",
                   instruction="take it over")]),
        Turn([sh("printf 'red \\033[31mALERT\\033[0m\\rover \\xe2\\x80\\xae evil\\n'", "hostile output")]),
        Turn([text("shared.txt now says from-parent.")]),
    ], how="resume", new_minute=True), Prompt("Last: \x1b[2J check\tit — ✓.", [
        Turn([call("write_file", file_path="{W}/b.py", content="B = 3\n")]),
        Turn([sh("cat b.py; exit 4", "show b and fail")]),
        Turn([text("b.py holds B = 3.")]),
    ], how="resume")],
    subagents=[Conversation("SUBAGENT-A", [
        Turn([call("write_file", file_path="{W}/shared.txt", content="from-sub\n")]),
        Turn([sh("cat {W}/shared.txt", "check shared.txt")]),
        Turn([call("complete_task", result={"response": "shared.txt holds from-sub."})]),
    ], "SUBAGENT-A")],
    notes="P1: 3 writes (one unicode path), a 50000-line output, exit 2, a replace. P2 (--resume latest, a later "
          "minute): a subagent writes shared.txt, the parent replaces its line, a hostile output. P3 (--resume, "
          "same minute as P2): an ESC/tab prompt, an overwrite of b.py, a command that prints then exits 4.",
    exit_codes={"seq 1 50000": 0, "ls nope-missing-dir": 2, "cat {W}/shared.txt": 0, "cat b.py; exit 4": 4},
)

ALL["big_output"] = Scenario(
    "big_output",
    [Prompt("Print a long listing.", [
        Turn([sh("seq 1 10000", "a long listing")]),
        Turn([text("The listing ends at 10000.")]),
    ]), Prompt("And a short one.", [
        Turn([sh("echo short", "a short one")]),
        Turn([text("short.")]),
    ], how="resume")],
    notes="seq 1 10000 prints 48,894 characters, over the client's 40,000: the model gets the first 8,000 and "
          "the last 32,000 with '... [N characters omitted] ...' between (the middle, e.g. 2500, is not in its "
          "result); the whole output is the call's resultDisplay and tool-outputs/session-<id>/<call id>.txt. "
          "P2 resumes in the same minute: the history (with the cut result) is written again.",
    exit_codes={"seq 1 10000": 0, "echo short": 0},
)
