"""A Codex CLI scenario a second new-user pass wrote: several apply_patch edits to the same
pre-existing file (one patch with two hunks, one patch touching two files), a shell `sed -i` on that
file between two patches, a resume, and failing commands (exit 1, exit 127).

Run: ``python -m tests.realclient.codex.runner tests.realclient.codex.scenarios_fresh:fresh_patches --root R``."""
from __future__ import annotations

from .mock_api import Turn, patch, say, think
from .scenarios import W, Prompt, Scenario, exec_cmd

CALC0 = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"
CALC1 = "def add(a, b):\n    return int(a) + int(b)\n\n\ndef sub(a, b):\n    return int(a) - int(b)\n"
CALC2 = CALC1 + "\n\ndef mul(a, b):\n    return a * b\n"
TEST = "from calc import add, mul\n\nassert add(2, 3) == 5\nassert mul(2, 3) == 6\nprint('ok')\n"
CALC3 = CALC2.replace("    return a * b\n", "    return int(a) * int(b)\n")
CALC4 = CALC3.replace("int(a) + int(b)", "int(b) + int(a)")  # the shell's sed
CALC5 = CALC4.replace("def sub(a, b):\n", "def subtract(a, b):\n")


def _p(body: str) -> str:
    return f"*** Begin Patch\n{body}*** End Patch\n"


def hunk2(before: str, after: str, ctx: str) -> str:
    return f"@@\n {ctx}\n-{before}\n+{after}\n"


TWO_HUNKS = patch(_p(f"*** Update File: {W}/calc.py\n"
                     + hunk2("    return a + b", "    return int(a) + int(b)", "def add(a, b):")
                     + hunk2("    return a - b", "    return int(a) - int(b)", "def sub(a, b):")))
TWO_HUNKS["expect_changes"] = [{"path": f"{W}/calc.py", "action": "update", "before": CALC0, "content": CALC1}]

TWO_FILES = patch(_p(f"*** Update File: {W}/calc.py\n@@\n     return int(a) - int(b)\n+\n+\n+def mul(a, b):\n"
                     "+    return a * b\n"
                     f"*** Add File: {W}/test_calc.py\n" + "".join(f"+{ln}\n" for ln in TEST.splitlines())))
TWO_FILES["expect_changes"] = [{"path": f"{W}/calc.py", "action": "update", "before": CALC1, "content": CALC2},
                               {"path": f"{W}/test_calc.py", "action": "create", "content": TEST}]

THIRD = patch(_p(f"*** Update File: {W}/calc.py\n" + hunk2("    return a * b", "    return int(a) * int(b)",
                                                           "def mul(a, b):")))
THIRD["expect_changes"] = [{"path": f"{W}/calc.py", "action": "update", "before": CALC2, "content": CALC3}]

AFTER_SED = patch(_p(f"*** Update File: {W}/calc.py\n@@\n-def sub(a, b):\n+def subtract(a, b):\n"))
AFTER_SED["expect_changes"] = [{"path": f"{W}/calc.py", "action": "update", "before": CALC4, "content": CALC5}]

UNSEEN = patch(_p(f"*** Update File: {W}/notes.txt\n@@\n-b\n+B\n"))
UNSEEN["expect_changes"] = [{"path": f"{W}/notes.txt", "action": "update", "before": "a\nb\n", "content": "a\nB\n"}]
"""A patch of a pre-existing file the model never printed: no complete view anywhere."""

FRESH_PATCHES = Scenario(
    name="fresh_patches",
    notes="P1: cat of a pre-existing calc.py, a two-hunk patch of it, one patch updating it and adding "
          "test_calc.py, a run (exit 0) and one exiting 1, a third patch of calc.py, a patch of notes.txt (pre-existing, never printed). P2 (resume): the shell "
          "edits calc.py (sed -i), a patch after that, `sed -n '1,200p' calc.py` (the whole file: fewer "
          "lines than asked), `false` (1), a missing command (127), and an append to test_calc.py by the "
          "shell after its last patch.",
    setup_files={"calc.py": CALC0.encode(), "notes.txt": b"a\nb\n"},
    prompts=[
        Prompt("Make calc.py coerce to int, add mul and a test, then run it.", turns=[
            Turn([think("Look first."), exec_cmd("cat calc.py")]),
            Turn([TWO_HUNKS]),
            Turn([TWO_FILES]),
            Turn([exec_cmd("python3 test_calc.py")]),
            Turn([exec_cmd("python3 -c 'import sys; sys.exit(1)'", expect_exit=1)]),
            Turn([THIRD]),
            Turn([UNSEEN]),
            Turn([say("calc.py coerces to int and has mul; test_calc.py passes.")]),
        ]),
        Prompt("Swap the operands of add with sed, rename sub, and check two commands.", how="resume", turns=[
            Turn([exec_cmd("sed -i 's/int(a) + int(b)/int(b) + int(a)/' calc.py")]),
            Turn([AFTER_SED]),
            Turn([exec_cmd("sed -n '1,200p' calc.py")]),
            Turn([exec_cmd("false", expect_exit=1)]),
            Turn([exec_cmd("no-such-tool-fresh --version", expect_exit=127)]),
            Turn([exec_cmd("echo 'print(\"end\")' >> test_calc.py")]),
            Turn([say("add swapped, sub renamed to subtract; both checks failed as expected.")]),
        ]),
    ],
)

ALL: dict[str, Scenario] = {s.name: s for s in (FRESH_PATCHES,)}
CALC_FINAL = CALC5
