"""Lazy imports (issue 16): `sessionsift --help` is rendered without click and without any command
module, and equals what click renders; a command imports only its own module."""

from __future__ import annotations

import json
import subprocess
import sys

import click
import pytest

from sessionsift.cli import COMMANDS
from sessionsift.cli.app import cli
from sessionsift.cli.fasthelp import group_help, summary


@pytest.mark.parametrize("limit", [20, 45, 70, 200])
def test_each_summary_read_from_source_is_the_commands_own(limit):
    from click.utils import _make_default_short_help

    from sessionsift.cli.fasthelp import _short

    ctx = click.Context(cli)
    for name in COMMANDS:
        doc = summary(name)
        assert doc is not None, f"{name}: its docstring cannot be read from its module's source"
        assert _short(doc, limit) == cli.get_command(ctx, name).get_short_help_str(limit), name
        assert _short(doc, limit) == _make_default_short_help(doc, limit)


@pytest.mark.parametrize("width", [50, 51, 60, 72, 79, 80, 81, 99, 100, 101, 120, 200])
def test_fast_help_equals_clicks(width):
    ctx = click.Context(cli, info_name="sessionsift", terminal_width=width, **cli.context_settings)
    assert group_help(width=width) == cli.get_help(ctx)


_PROBE = """
import json, sys
from sessionsift.cli import main
try:
    main(sys.argv[1:])
except SystemExit as e:
    code = e.code
sys.stdout.flush()
print("\\n" + json.dumps({"code": code, "mods": sorted(sys.modules)}), file=sys.stderr)
"""


def _run(args: list[str], env_cols: str = "80", extra: dict | None = None) -> tuple[str, dict]:
    p = subprocess.run([sys.executable, "-c", _PROBE, *args], capture_output=True, text=True,
                       env={"PATH": "/usr/bin:/bin", "COLUMNS": env_cols, "HOME": "/nonexistent", **(extra or {})})
    return p.stdout, json.loads(p.stderr.strip().splitlines()[-1])


def test_help_imports_neither_click_nor_commands():
    out, info = _run(["--help"], "90")
    assert info["code"] == 0
    assert "click" not in info["mods"] and "rich" not in info["mods"]
    assert not [m for m in info["mods"] if m.startswith("sessionsift.cli.cmd_")]
    ctx = click.Context(cli, info_name="sessionsift", terminal_width=88, **cli.context_settings)
    assert out == cli.get_help(ctx) + "\n"


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_command_help_imports_only_its_module(name):
    _out, info = _run([name, "--help"])
    assert info["code"] == 0
    own = "sessionsift.cli." + COMMANDS[name].split(":")[0]
    others = {"sessionsift.cli." + s.split(":")[0] for s in COMMANDS.values()} - {own}
    assert own in info["mods"]
    assert not others & set(info["mods"]), sorted(others & set(info["mods"]))


def test_help_imports_no_json_encoder_nor_shutil():
    # `--help` pays only for the interpreter, `re` and `textwrap` (issue 16: <= interpreter + 0.05 s):
    # orjson (~20 ms), shutil (zlib, bz2, lzma) and typing are imported by commands that use them
    _out, info = _run(["--help"])
    assert info["code"] == 0
    for heavy in ("orjson", "shutil", "typing", "click", "pathlib"):
        assert heavy not in info["mods"], heavy


@pytest.mark.parametrize("cols", ["", "0", "-3", "x", "57", "133"])
def test_help_width_is_shutils(cols, monkeypatch):
    import shutil

    from sessionsift.cli.fasthelp import _columns

    monkeypatch.setenv("COLUMNS", cols)
    assert _columns() == shutil.get_terminal_size().columns
    monkeypatch.delenv("COLUMNS")
    assert _columns() == shutil.get_terminal_size().columns


def test_search_without_hits_imports_no_census_or_lane_model():
    # the cold search path pays for its scan, not for `stats`' census or the lane model (issue 16)
    from pathlib import Path

    home = Path(__file__).resolve().parents[1] / "examples" / "claude-home"
    _out, info = _run(["search", "zzqqnotinanytranscript", "-c", "--claude-home", str(home), "--no-index"])
    assert info["code"] == 1  # no hit, looked everywhere
    for heavy in ("sessionsift.providers.claude.stats", "sessionsift.providers.claude.model.lane", "importlib.metadata", "rich"):
        assert heavy not in info["mods"], heavy


def test_a_warm_stats_imports_no_other_commands_module_nor_a_writer():
    """`stats` answered from the index pays for its census, not for `show`'s module (cmd_core
    holds both commands) nor for tempfile (only an index writer needs it)."""
    import shutil
    import tempfile
    from pathlib import Path

    src = Path(__file__).resolve().parents[1] / "examples" / "claude-home"
    with tempfile.TemporaryDirectory() as d:
        home = Path(d) / "claude"
        shutil.copytree(src, home)
        env = {"SESSIONSIFT_INDEX_DIR": str(Path(d) / "index")}
        _run(["stats", "--claude-home", str(home)], extra=env)  # builds the index
        _out, info = _run(["stats", "--claude-home", str(home), "--format", "json"], extra=env)
    assert info["code"] == 0
    assert json.loads(_out.splitlines()[-1])["index"]["from_index"] > 0
    for heavy in ("sessionsift.providers.claude.show", "tempfile"):
        assert heavy not in info["mods"], heavy
