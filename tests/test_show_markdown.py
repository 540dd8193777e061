"""`show SESSION` renders a reply's Markdown on a colour terminal (issue 27: "the reply rendered"), in a
real pseudo-terminal (tests/terminal.py), on a transcript the REAL Claude Code client wrote
(tests/realclient/scenarios_show.py: headings, lists, inline code, a code fence, a long paragraph,
and terminal escape sequences, a bidi override and rich markup in the reply's text). Every string
from disk is escaped before it is rendered: the only escape sequences on the terminal are this
program's own colours. A pipe, NO_COLOR and --color never get the reply's Markdown source; JSON
is unchanged (docs/cli.md)."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest
from rich.cells import cell_len

from tests.realclient import scenarios_show as SS
from tests.realclient.fixtures import require_realclient
from tests.terminal import CLI, run_on_terminal
from tests.test_colour import colour_env

REPO = Path(__file__).resolve().parent.parent
SGR = re.compile(r"\x1b\[[0-9;]*m")


@pytest.fixture(scope="module")
def show_rc(tmp_path_factory) -> dict:
    require_realclient()
    return SS.run_show_scenario(tmp_path_factory.mktemp("show-rc"))


def _args(rc: dict) -> list[str]:
    return ["show", rc["session_id"], "--claude-home", rc["config_dir"]]


def _flat(lines: list[str]) -> str:
    return " ".join(" ".join(lines).split())


def test_the_transcript_holds_the_hostile_reply_as_the_api_sent_it(show_rc, tmp_path):
    t = next(Path(show_rc["config_dir"]).glob(f"projects/*/{show_rc['session_id']}.jsonl")).read_text()
    assert "\\u001b]0;PWNED-TITLE\\u0007" in t and "[bold]NOT-BOLD[/bold]" in t and "\u202eEVIL-BIDI" in t
    p = subprocess.run(CLI + _args(show_rc) + ["--format", "json"], capture_output=True, text=True,
                       env=colour_env(tmp_path), cwd=REPO)
    assert p.returncode == 0, p.stderr
    items = [i for r in map(json.loads, p.stdout.splitlines()) if r["kind"] == "turn" for i in r["items"]]
    assert [i["text"] for i in items if i["kind"] == "message"] == [SS.MD_REPLY]  # JSON: the text as is


def test_a_reply_is_rendered_on_a_colour_terminal_and_nothing_from_disk_reaches_it_raw(show_rc, tmp_path):
    shown = run_on_terminal(CLI + _args(show_rc) + ["--no-pager"], cols=80, env=colour_env(tmp_path), cwd=REPO)
    assert shown.code == 0, shown.text[-300:]
    raw = shown.text
    # the only escape sequences are SGR colours; no OSC (title, hyperlink), BEL, bidi override or cursor move
    rest = SGR.sub("", raw)
    assert "\x1b" not in rest and "\x07" not in rest and "\u202e" not in rest
    lines = rest.rstrip("\n").split("\n")
    assert [ln for ln in lines if cell_len(ln) > 80] == []
    # headings, lists, emphasis, inline code and the code block rendered: their marks gone, styled
    for mark in ("# Summary", "## Steps", "- first bullet", "`inline_code_here`", "**strong words**", "```",
                 "1. numbered one"):
        assert mark not in rest, mark
    assert [ln.strip() for ln in lines if "MDH" in ln] == ["Summary MDH1", "Steps MDH2"]
    assert re.search(r"\x1b\[[0-9;]+mSummary MDH1\x1b\[0m", raw) and re.search(r"\x1b\[[0-9;]+mSteps MDH2\x1b\[0m", raw)
    assert "• first bullet with inline_code_here" in rest and "• second bullet with strong words" in rest
    assert re.search(r"\x1b\[[0-9;]+minline_code_here\x1b\[0m", raw)
    assert re.search(r"\x1b\[1mstrong words\x1b\[0m", raw)
    assert any(re.fullmatch(r"\s+1 numbered one", ln) for ln in lines)
    d = next(ln for ln in lines if "mdcode():" in ln)
    r = next(ln for ln in lines if "return 'MDCODE'" in ln)
    assert d.strip() == "def mdcode():" and len(r) - len(r.lstrip()) == len(d) - len(d.lstrip()) + 4
    # the long paragraph is wrapped within the width, every word kept
    para = [ln for ln in lines if ln.startswith("  ") and any(w in ln for w in ("paragraph", "terminal,", "WRAPEND"))]
    assert len(para) >= 2 and "A paragraph long enough" in para[0] and para[-1].endswith("WRAPEND.")
    # the hostile text: shown escaped, as text (not a colour, not rich markup)
    flat = _flat(lines)
    assert ("Hostile: \\e[31mRED-ESC\\e[0m \\e]0;PWNED-TITLE\\u0007 \\e[2J\\e[H [bold]NOT-BOLD[/bold] "
            "[link=https://example.com/x]NOT-LINK[/link] \\u202eEVIL-BIDI") in flat
    assert not re.search(r"\x1b\[[0-9;]+mNOT-BOLD", raw)


def test_a_pipe_and_a_terminal_without_colour_get_the_markdown_source(show_rc, tmp_path):
    env = colour_env(tmp_path)
    piped = subprocess.run(CLI + _args(show_rc), capture_output=True, text=True, env=env, cwd=REPO)
    assert piped.returncode == 0
    src = [ln for ln in piped.stdout.split("\n")]
    i = src.index("  # Summary MDH1")
    assert src[i:i + 6] == ["  # Summary MDH1", "  ", "  ## Steps MDH2", "  ", "  - first bullet with `inline_code_here`",
                            "  - second bullet with **strong words**"]
    assert "  ```python" in src and "  Hostile: \\e[31mRED-ESC\\e[0m \\e]0;PWNED-TITLE\\u0007 \\e[2J\\e[H [bold]NOT-BOLD" \
        "[/bold] [link=https://example.com/x]NOT-LINK[/link] \\u202eEVIL-BIDI" in src
    assert "\x1b" not in piped.stdout
    for off in ({**env, "NO_COLOR": "1"}, {**env, "TERM": "dumb"}):
        nc = run_on_terminal(CLI + _args(show_rc) + ["--no-pager"], cols=80, env=off, cwd=REPO)
        assert nc.code == 0 and "\x1b" not in nc.text and "  ## Steps MDH2" in nc.lines
        assert [ln for ln in nc.lines if cell_len(ln) > 80] == []
    never = run_on_terminal(CLI + ["--color", "never"] + _args(show_rc) + ["--no-pager"], cols=80, env=env, cwd=REPO)
    assert never.code == 0 and never.text == nc.text


def test_the_rendered_reply_goes_through_the_pager(show_rc, tmp_path):
    import shutil

    env = {**colour_env(tmp_path), "SESSIONSIFT_PAGER": "sed -u s/^/PAGED:/"}
    env.pop("PAGER", None)
    paged = run_on_terminal(CLI + _args(show_rc), cols=80, env=env, cwd=REPO)
    direct = run_on_terminal(CLI + _args(show_rc) + ["--no-pager"], cols=80, env=env, cwd=REPO)
    assert paged.code == 0 and direct.code == 0
    assert re.search(r"^PAGED:  \x1b\[[0-9;]+mSteps MDH2\x1b\[0m$", paged.text, re.M)
    assert paged.text.replace("PAGED:", "") == direct.text  # the pager gets what the terminal would
    assert shutil.which("less"), "less is the default pager"
    env.pop("SESSIONSIFT_PAGER")
    less = run_on_terminal(CLI + _args(show_rc), cols=80, rows=100, env=env, cwd=REPO)  # fits: less -F quits
    assert less.code == 0
    assert re.search(r"\x1b\[[0-9;]+mSteps MDH2\x1b\[0m", less.text)  # -R passed the colour on
    assert "• first bullet with" in SGR.sub("", less.text) and "\x1b]" not in less.text
