"""`search`'s fast path (cli/fastsearch.py): a plain `search PATTERN [-c] [--no-index]
[--claude-home DIR] [--format F]` runs without click, and prints exactly what the click command
prints -- stdout, stderr and exit status compared byte for byte, on the real-client store of
examples/, for many command-line shapes; every other shape is left to click (parse -> None)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from sessionsift.cli import fastsearch

ROOT = Path(__file__).resolve().parent.parent
H = str(ROOT / "examples" / "claude-home")
NEWEST = str(ROOT / "examples" / "newest-client" / "2.1.332" / "claude-home")

_RUN = "import sys; sys.argv[0] = 'sessionsift'; from sessionsift.cli import main; main()"
_CLICK = ("import sys; sys.argv[0] = 'sessionsift'; import sessionsift.cli.fastsearch as f; "
          "f.parse = lambda a: None; from sessionsift.cli import main; main()")
_PROBE = ("import atexit, os, sys; sys.argv[0] = 'sessionsift'\n"
          "def _w():\n"
          "    with open(os.environ['PROBE_OUT'], 'w') as fh:\n"
          "        fh.write(' '.join(m for m in ('click', 'rich', 'sessionsift.cli.app', 'sessionsift.cli.cmd_search',"
          " 'sessionsift.index.store') if m in sys.modules))\n"
          "atexit.register(_w)\n"
          "from sessionsift.cli import main; main()")


def _run(code: str, argv: list[str], tmp: Path, env_extra: dict | None = None) -> tuple[int, bytes, bytes]:
    env = dict(os.environ, SESSIONSIFT_INDEX_DIR=str(tmp), **(env_extra or {}))
    p = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, env=env, timeout=300)
    return p.returncode, p.stdout, p.stderr


FAST = [
    ["search", "Bash", "-c", "--claude-home", H],
    ["search", "-c", "Bash", "--claude-home", H, "--no-index"],
    ["search", "Read|Edit", "--count", f"--claude-home={H}"],
    ["search", "Bash", "-c", "--claude-home", H, "--format", "json"],
    ["search", "Bash", "--no-index", "-c", "--format=json", "--claude-home", NEWEST],
    ["search", "ENOENT", "--claude-home", H, "--no-index"],
    ["search", "the", "--claude-home", H, "--format", "json"],
    ["search", "", "-c", "--claude-home", H],
    ["search", "", "-c", "--claude-home", H, "--no-index", "--format", "json"],
    ["search", "zqx-nowhere-4417", "-c", "--claude-home", H],
    ["search", "(?=look)", "-c", "--claude-home", H],
    ["search", "a(", "-c", "--claude-home", H, "--format", "json"],
    ["search", "Bash", "-c", "--claude-home", "/nonexistent/sessionsift-none"],
    ["search", "Bash", "-c", "--claude-home", H, "--traceback"],
    ["search", "Bash", "-c"],  # the root from CLAUDE_CONFIG_DIR (set below)
    # censuses (-t/-T repeatable, --count-by): each twice below, the second answered whole from the index
    ["search", "", "-t", "user.message", "--count", "--claude-home", H],
    ["search", "", "-t", "user.message", "-t", "agent.tool.use", "-c", "--claude-home", NEWEST, "--format", "json"],
    ["search", "", "--type=user", "-T", "user.unsent", "--count-by", "label", "--claude-home", H],
    ["search", "", "--count-by", "session", "--type-not=harness", "--claude-home", NEWEST, "--format=json"],
    ["search", "", "--count-by=tool", "-t", "agent.tool.use", "--claude-home", H, "--no-index"],
    ["search", "", "-t", "no.such.label", "-c", "--claude-home", H],
    ["search", "Bash", "-t", "user", "--claude-home", H],
]


# the ONE exit status of each shape above, in order: 1 no hit (ENOENT, zqx-nowhere, an absent root,
# Bash among user records), 2 a usage error (a look-ahead RE2 refuses, an unclosed group, an
# unknown label)
STATUS = [0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 2, 2, 1, 0, 0, 0, 0, 0, 0, 0, 2, 1]
assert len(STATUS) == len(FAST)


@pytest.mark.parametrize("argv,status", list(zip(FAST, STATUS)),
                         ids=[" ".join(a[1:]).replace(H, "H").replace(NEWEST, "N") for a in FAST])
def test_fast_path_prints_what_click_prints(argv, status, tmp_path):
    assert fastsearch.parse([a for a in argv if a != "--traceback"]) is not None
    env = {"CLAUDE_CONFIG_DIR": H}
    fast = _run(_RUN, argv, tmp_path / "fast", env)
    slow = _run(_CLICK, argv, tmp_path / "click", env)
    assert fast == slow
    if "" in argv and "--no-index" not in argv:  # a census from the index: kept, then replayed whole
        home = next((a.partition("=")[2] or argv[i + 1] for i, a in enumerate(argv) if a.startswith("--claude-home")), H)
        for d in ("fast", "click"):
            assert _run(_RUN, ["index", "update", "--claude-home", home], tmp_path / d, env)[0] == 0
        kept = _run(_RUN, argv, tmp_path / "fast", env)
        assert kept == _run(_CLICK, argv, tmp_path / "click", env)
        assert _run(_RUN, argv, tmp_path / "fast", env) == _run(_CLICK, argv, tmp_path / "click", env) == kept
        assert list((tmp_path / "fast").rglob("claude-answers/*/*.idx")) or kept[0] == 2
    assert fast[0] == status, fast[2][-500:]
    if status == 0:
        assert fast[1].strip()  # an answer was printed (not a silent pass)


def test_fast_path_imports_neither_click_nor_rich_nor_the_index_store(tmp_path):
    out = tmp_path / "probe"
    code, stdout, _ = _run(_PROBE, ["search", "Bash", "-c", "--claude-home", H, "--no-index"], tmp_path / "i",
                           {"PROBE_OUT": str(out)})
    assert code == 0 and stdout.split(b"\n")[0].isdigit()
    assert out.read_text() == ""
    # the click path (another option) does import click: the probe can see it
    code, _, _ = _run(_PROBE, ["search", "Bash", "-c", "-i", "--claude-home", H, "--no-index"], tmp_path / "i",
                      {"PROBE_OUT": str(out)})
    assert code == 0 and "click" in out.read_text().split()


def test_an_error_on_the_fast_path_ends_as_on_click(tmp_path):
    code, stdout, stderr = _run(_RUN, ["search", "a(", "-c", "--claude-home", H], tmp_path)
    assert code == 2 and b"invalid regular expression" in stderr


SLOW = [
    ["search"],
    ["search", "-c"],
    ["search", "Bash", "target", "-c"],
    ["search", "-i", "Bash", "-c"],
    ["search", "Bash", "-c", "-c"],
    ["search", "Bash", "-c", "--claude-home", H, "--claude-home", H],
    ["search", "Bash", "--format", "yaml"],
    ["search", "Bash", "--format"],
    ["search", "Bash", "--claude-home"],
    ["search", "Bash", "--claude-home", "--no-index"],
    ["search", "Bash", "--claude-home="],
    ["search", "--", "Bash"],
    ["search", "-Bash"],
    ["search", "-", "-c"],
    ["search", "Bash", "--count=1"],
    ["search", "Bash", "-ci"],
    ["search", "Bash", "--home", H],
    ["search", "", "-tuser", "-c"],
    ["search", "", "-t=user", "-c"],
    ["search", "", "-c", "-t"],
    ["search", "", "-t", "-c"],
    ["search", "", "--type=", "-c"],
    ["search", "", "--count-by", "nope"],
    ["search", "", "--count-by", "label", "--count-by", "tool"],
    ["search", "", "-c", "--count-by", "label"],
    ["list", "Bash"],
    ["stats", "."],
]


@pytest.mark.parametrize("argv", SLOW, ids=[" ".join(a) for a in SLOW])
def test_other_command_lines_are_left_to_click(argv):
    assert fastsearch.parse(argv) is None


def test_a_home_click_refuses_is_left_to_click(tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    assert fastsearch.parse(["search", "Bash", "--claude-home", str(f)]) is None
    assert fastsearch.parse(["search", "Bash", "--claude-home", str(tmp_path)]) is not None
    assert fastsearch.parse(["search", "Bash", "--claude-home", str(tmp_path / "absent")]) is not None
    argv = ["search", "Bash", "-c", "--claude-home", str(f)]
    code, _, stderr = _run(_RUN, argv, tmp_path / "i")
    assert code == 2 and b"is a file" in stderr
