"""Scenarios a reviewer wrote to try the tool as a new user (differently shaped from the library):
a long session over several prompts and resumes, many files (unicode names, a move, a delete), a
big shell output, failures of several kinds, hostile text (ESC, CR, bidi) in prompts and output.
Run one: ``python -m tests.realclient.codex.runner tests.realclient.codex.scenarios_review:long_haul``."""
from __future__ import annotations

from .mock_api import Turn, patch, say, think
from .scenarios import W, Prompt, Scenario, add_file, exec_cmd, update_file

CAFE = "café = 'ünïcödé ✓'\n"

LONG_HAUL = Scenario(
    name="long_haul",
    notes="P1: a big output (seq 1 60000), three new files (one under données/ with a unicode name), an update, "
          "a command that exits 2 and one killed by a signal (kill -9 $$: 137). P2 (resume): a move and a delete by "
          "patch, an output carrying ESC/CR/bidi bytes. P3 (resume): a prompt with an ESC sequence and a tab; a "
          "rejected patch; the answer.",
    setup_files={"README.md": b"# app\n"},
    prompts=[
        Prompt("Set up the project: three files, then check.", turns=[
            Turn([think("Big listing first."), exec_cmd("seq 1 60000")]),
            Turn([add_file(f"{W}/a.py", "A = 1\n")]),
            Turn([add_file(f"{W}/b.py", "B = 2\n")]),
            Turn([add_file(f"{W}/données/résumé café.py", CAFE)]),
            Turn([update_file(f"{W}/a.py", "A = 1", "A = 10", "A = 1\n")]),
            Turn([exec_cmd("ls nope-missing-dir", expect_exit=2)]),
            Turn([exec_cmd("kill -9 $$", expect_exit=None)]),
            Turn([say("Set up a.py, b.py and données/résumé café.py; two checks failed.")]),
        ]),
        Prompt("Rename b.py to c.py and drop a.py.", how="resume", turns=[
            Turn([patch(f"*** Begin Patch\n*** Update File: {W}/b.py\n*** Move to: {W}/c.py\n@@\n-B = 2\n+C = 3\n"
                        "*** End Patch\n")]),
            Turn([patch(f"*** Begin Patch\n*** Delete File: {W}/a.py\n*** End Patch\n")]),
            Turn([exec_cmd("printf 'red \\033[31mALERT\\033[0m\\rover \\xe2\\x80\\xae evil\\n'")]),
            Turn([say("c.py holds C = 3; a.py is gone.")]),
        ]),
        Prompt("Last: \x1b[2J check\tit — ✓.", how="resume", turns=[
            Turn([patch(f"*** Begin Patch\n*** Update File: {W}/c.py\n@@\n-C = 99\n+C = 4\n*** End Patch\n")]),
            Turn([exec_cmd("cat c.py")]),
            Turn([say("c.py is unchanged: C = 3.")]),
        ]),
    ],
)

FORKED = Scenario(
    name="forked",
    notes="P1: a shell call and an answer. P2: `codex exec fork <P1's thread id>`: a new thread, its own rollout, "
          "whose session_meta names the thread it was forked from (forked_from_id); a shell call and an answer.",
    setup_files={"notes.md": b"# Notes\n\n- first\n"},
    prompts=[
        Prompt("Show notes.md.", turns=[
            Turn([exec_cmd("cat notes.md")]),
            Turn([say("notes.md has one item.")]),
        ]),
        Prompt("In a fork: count the items.", how="fork", turns=[
            Turn([exec_cmd("grep -c '^- ' notes.md")]),
            Turn([say("One item.")]),
        ]),
    ],
)

ALL: dict[str, Scenario] = {s.name: s for s in (LONG_HAUL, FORKED)}
