"""`stats`'s fast path (cli/fastsearch.py `_parse_stats`): a plain `stats [--claude-home DIR]
[--format text|json] [--no-index] [--no-subagents]` runs without click and prints exactly what
the click command prints -- stdout, stderr and exit status compared byte for byte on the
real-client stores of examples/ (cold, then answered from the index it built), for many
command-line shapes; every other shape is left to click (parse -> None)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sessionsift.cli import fastsearch

from tests.test_cli_fastsearch import _CLICK, _PROBE, _RUN, _run

ROOT = Path(__file__).resolve().parent.parent
H = str(ROOT / "examples" / "claude-home")
NEWEST = str(ROOT / "examples" / "newest-client" / "2.1.332" / "claude-home")

FAST = [
    ["stats", "--claude-home", H],
    ["stats", "--claude-home", H, "--format", "json"],
    ["stats", "--format=json", f"--claude-home={H}", "--no-index"],
    ["stats", "--no-subagents", "--claude-home", H, "--format", "json"],
    ["stats", "--no-index", "--no-subagents", "--format=text", "--claude-home", NEWEST],
    ["stats", "--claude-home", NEWEST, "--format", "json"],
    ["stats", "--claude-home", "/nonexistent/sessionsift-none"],
    ["stats", "--claude-home", "/nonexistent/sessionsift-none", "--format", "json"],
    ["stats", "--claude-home", H, "--traceback"],
    ["stats"],  # the root from CLAUDE_CONFIG_DIR (set below)
    ["stats", "--format", "json"],
]


def _same_dir(got: tuple[int, bytes, bytes], tmp: Path) -> tuple[int, bytes, bytes]:
    """The fast run's output with its index directory named as the click run's (the summary's
    `index.dir`: each run has its own, so the first is not a warm answer for the second)."""
    a, b = str(tmp / "fast").encode(), str(tmp / "click").encode()
    return got[0], got[1].replace(a, b), got[2].replace(a, b)


# every shape above answers (0): an absent named root is a definitive zero (coverage: absent)


@pytest.mark.parametrize("argv", FAST, ids=[" ".join(a[1:]).replace(H, "H").replace(NEWEST, "N") or "bare" for a in FAST])
def test_fast_stats_prints_what_click_prints(argv, tmp_path):
    assert fastsearch.parse([a for a in argv if a != "--traceback"]) is not None
    env = {"CLAUDE_CONFIG_DIR": H}
    fast = _same_dir(_run(_RUN, argv, tmp_path / "fast", env), tmp_path)
    slow = _run(_CLICK, argv, tmp_path / "click", env)
    assert fast == slow
    if "--no-index" not in argv:  # the second run answers from the index the first one built
        again = _same_dir(_run(_RUN, argv, tmp_path / "fast", env), tmp_path)
        assert again == _run(_CLICK, argv, tmp_path / "click", env)
    assert fast[0] == 0, fast[2][-500:]
    assert fast[1].strip()  # an answer was printed (not a silent pass)


def test_fast_stats_imports_no_click(tmp_path):
    out = tmp_path / "probe"
    code, stdout, _ = _run(_PROBE, ["stats", "--claude-home", H, "--no-index", "--format", "json"], tmp_path / "i",
                           {"PROBE_OUT": str(out)})
    assert code == 0 and b'"kind":"summary"' in stdout.replace(b" ", b"")
    assert "click" not in out.read_text().split()
    code, _, _ = _run(_PROBE, ["stats", "--strict", "--claude-home", H, "--no-index"], tmp_path / "i",
                      {"PROBE_OUT": str(out)})
    assert "click" in out.read_text().split()


SLOW = [
    ["stats", "."],
    ["stats", "--claude-home", H, "target"],
    ["stats", "--strict"],
    ["stats", "--shared"],
    ["stats", "--home", H],
    ["stats", "--codex-home", H],
    ["stats", "--provider", "codex"],
    ["stats", "--sessions-from", "-"],
    ["stats", "--no-index", "--no-index"],
    ["stats", "--no-subagents", "--no-subagents"],
    ["stats", "--claude-home", H, "--claude-home", H],
    ["stats", "--format", "yaml"],
    ["stats", "--format"],
    ["stats", "--format="],
    ["stats", "--format", "json", "--format=json"],
    ["stats", "--claude-home"],
    ["stats", "--claude-home="],
    ["stats", "--claude-home", "--no-index"],
    ["stats", "--no-index=1"],
    ["stats", "--help"],
    ["stats", "-h"],
    ["stats", "--"],
    ["stats", "-"],
    ["stats", "--traceback"],  # (main removes it before parse)
    ["stat"],
    ["stats2"],
]


@pytest.mark.parametrize("argv", SLOW, ids=[" ".join(a) for a in SLOW])
def test_other_stats_lines_are_left_to_click(argv):
    assert fastsearch.parse(argv) is None


def test_a_home_click_refuses_is_left_to_click(tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    assert fastsearch.parse(["stats", "--claude-home", str(f)]) is None
    assert fastsearch.parse(["stats", "--claude-home", str(tmp_path)]) is not None
    code, _, stderr = _run(_RUN, ["stats", "--claude-home", str(f)], tmp_path / "i")
    assert code == 2 and b"is a file" in stderr
