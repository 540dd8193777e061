"""Colour on a terminal (issue 27), seen on a real pseudo-terminal (tests/terminal.py): `--color
auto|always|never` anywhere on the line, `NO_COLOR` and `TERM=dumb` honoured, session ids, verdicts
and table headers coloured, and colour only ever added to text already escaped -- a hostile record's own escape sequences
still print as `\\e[31m` (the hostile copy of tests/test_hostile_render.py)."""

from __future__ import annotations

import itertools
import json
import re
import subprocess
import sys
from pathlib import Path

from tests.terminal import CLI, run_on_terminal
from tests.test_hostile_render import _RAW, FB, hostile  # noqa: F401 (the module fixture)
from tests.test_newcomer import empty_env

REPO = Path(__file__).resolve().parent.parent
SGR = re.compile(r"\x1b\[(?:1;31|33|1|2|31|32|0)m")
"""Every colour code this program writes (render.STYLES and the reset)."""
VERDICT = "\x1b[32midle-eot\x1b[0m"


def colour_env(tmp_path: Path) -> dict:
    """A machine's environment without NO_COLOR (the suite's conftest sets it for every other test)."""
    env = empty_env(tmp_path)
    env.pop("NO_COLOR", None)
    return env


STATUS = ["status", "--claude-home", "examples/claude-home"]
"""Claude Code's verdicts here rest on the transcripts alone (no registry): two runs give the same
lines whatever else runs on the machine (other agents' verdicts look at its processes)."""


def test_status_colours_ids_and_verdicts_on_a_terminal_and_nothing_else_changes(tmp_path):
    env = colour_env(tmp_path)
    shown = run_on_terminal(CLI + STATUS, cols=400, env=env, cwd=REPO)
    assert shown.code == 0
    fb = next(ln for ln in shown.lines if FB in ln)
    assert fb.startswith(f"\x1b[33m{FB}\x1b[0m  \x1b[32midle-eot\x1b[0m  Claude Code: "), fb
    assert "\x1b[33midle-background-open\x1b[0m" in shown.text
    every = run_on_terminal(CLI + ["status", "--home", "examples/home"], cols=400, env=env, cwd=REPO)
    assert every.code == 0 and "\x1b[31mstale-dead (mid-turn)\x1b[0m" in every.text
    plain = run_on_terminal(CLI + STATUS + ["--color", "never"], cols=400, env=env, cwd=REPO)
    assert plain.code == 0 and "\x1b" not in plain.text
    assert SGR.sub("", shown.text) == plain.text  # colour is all that was added


def test_no_color_a_pipe_and_never_print_no_escape_and_always_colours_a_pipe(tmp_path):
    env = colour_env(tmp_path)
    nc = run_on_terminal(CLI + STATUS, cols=250, env={**env, "NO_COLOR": "1"}, cwd=REPO)
    assert nc.code == 0 and "\x1b" not in nc.text and "idle-eot" in nc.text
    dumb = run_on_terminal(CLI + STATUS, cols=250, env={**env, "TERM": "dumb"}, cwd=REPO)
    assert dumb.code == 0 and "\x1b" not in dumb.text
    forced = run_on_terminal(CLI + ["--color", "always"] + STATUS, cols=250, env={**env, "NO_COLOR": "1"}, cwd=REPO)
    assert forced.code == 0 and VERDICT in forced.text  # the explicit flag wins over NO_COLOR
    pipe = subprocess.run(CLI + STATUS, capture_output=True, text=True, env=env, cwd=REPO)
    assert pipe.returncode == 0 and "\x1b" not in pipe.stdout
    always = subprocess.run(CLI + STATUS + ["--color=always"], capture_output=True, text=True, env=env, cwd=REPO)
    assert always.returncode == 0 and VERDICT in always.stdout
    assert _steady(SGR.sub("", always.stdout)) == _steady(pipe.stdout)
    js = subprocess.run(CLI + STATUS + ["--color", "always", "--format", "json"], capture_output=True, text=True,
                        env=env, cwd=REPO)
    assert js.returncode == 0 and "\x1b" not in js.stdout  # JSON is never coloured
    bad = subprocess.run(CLI + ["--color", "sometimes"] + STATUS, capture_output=True, text=True, env=env, cwd=REPO)
    assert bad.returncode == 2 and "--color wants auto, always or never, got 'sometimes'" in bad.stderr
    # after `--` it is an argument, not the option: nothing takes it off the line
    dash = subprocess.run(CLI + ["list", "--home", "examples/home", "--", "--color"], capture_output=True, text=True,
                          env=env, cwd=REPO)
    assert dash.returncode == 2 and "--color" in dash.stderr and "wants auto" not in dash.stderr


def _steady(text: str) -> str:
    """Two runs' status text taken at different instants: the ages in it are not compared."""
    return re.sub(r"\d+s old", "Ns old", text)


def test_stats_and_list_colour_headers_and_ids(tmp_path):
    env = colour_env(tmp_path)
    sx = run_on_terminal(CLI + ["stats", "--claude-home", "examples/claude-home"], cols=200, env=env, cwd=REPO)
    assert sx.code == 0 and sx.lines[0].startswith("\x1b[1mSESSION")
    ls = run_on_terminal(CLI + ["list", "--claude-home", "examples/claude-home"], cols=200, env=env, cwd=REPO)
    assert ls.code == 0 and sum(ln.startswith("\x1b[33m") for ln in ls.lines) == 8  # one id per session


def test_colour_is_added_after_escaping_on_the_hostile_copy(hostile):  # noqa: F811
    (hostile.parent / "env-home").mkdir(exist_ok=True)
    env = colour_env(hostile.parent / "env-home")
    for args in (["stats"], ["status"], ["list"]):
        p = subprocess.run([sys.executable, "-m", "sessionsift", "--color", "always", *args, "--claude-home",
                            str(hostile)], capture_output=True, text=True, env=env, timeout=120)
        assert p.returncode == 0, (args, p.stderr[-300:])
        rest = SGR.sub("", p.stdout)
        assert not _RAW.findall(rest), (args, _RAW.findall(rest)[:5])
        assert "\\e[31mX\\e[0m" in rest, args  # the record's own escape shown escaped
        assert "\x1b[33m" in p.stdout or "\x1b[1m" in p.stdout, args  # and coloured


def test_list_fits_the_terminal_and_a_pipe_is_not_cut(tmp_path):
    """On 80 columns a `list` row's project keeps its end and, too narrow for one line, goes under
    the id with the agent and counts. A pipe gets the natural lines (the bytes are the ones before)."""
    env = empty_env(tmp_path)
    shown = run_on_terminal(CLI + ["list", "--home", "examples/home", "-n", "4"], cols=80, env=env, cwd=REPO)
    assert shown.code == 0
    # the session rows (an id's line and the lines under it); the notes, totals and coverage after them are prose
    body = list(itertools.takewhile(lambda ln: ln.startswith("  ") or re.match(r"[0-9a-f]{8}-", ln), shown.lines))
    assert len([ln for ln in body if not ln.startswith(" ")]) == 4
    assert body and all(len(ln) <= 80 for ln in body), [ln for ln in body if len(ln) > 80]
    assert "  …mp/ssift-qwen-sample/compaction/work  [Qwen Code 0.24.4] 158803 B, 26 records" in body
    pipe = subprocess.run(CLI + ["list", "--home", "examples/home", "-n", "4"], capture_output=True, text=True,
                          env=env, cwd=REPO)
    assert ("bc8180b4-5614-4eb1-bc2f-c67839af4316  2026-12-01 23:45  /tmp/ssift-qwen-sample/compaction/work  "
            "[Qwen Code 0.24.4] 158803 B, 26 records\n") in pipe.stdout


def _shown(raw: str) -> list[str]:
    """What a terminal shows of `raw`: on each line, only what follows the last `\\r\\x1b[K`."""
    return [ln.split("\r\x1b[K")[-1] for ln in raw.replace("\r\n", "\n").split("\n")]


def test_progress_shows_on_a_terminal_is_cleared_before_the_answer_and_never_in_a_pipe(tmp_path):
    """A cold read reports on stderr (`reading: ...`) when stderr is a terminal;
    each line is taken off before an answer line is written, so the terminal shows exactly the
    answer a pipe gets. $SESSIONSIFT_PROGRESS_DELAY=0 shows it from the first step (no timing)."""
    env = {**empty_env(tmp_path), "SESSIONSIFT_PROGRESS_DELAY": "0", "SESSIONSIFT_NO_INDEX": "1"}
    for args, verb in ((["stats", "--home", "examples/home"], "reading: "),
                       (["files", "--home", "examples/home", "--by", "summary"], "reading: "),
                       (["list", "--home", "examples/home", "--all"], "reading: ")):  # --all: a pipe's rows
        # wide enough that no line of prose is broken (files' summary lines are 400 cells and more)
        term = run_on_terminal(CLI + args, cols=2000, env=env, cwd=REPO)
        assert term.code == 0, args
        raw = term.raw.decode()
        assert verb in raw, args
        pipe = subprocess.run(CLI + args, capture_output=True, text=True, env=env, cwd=REPO)
        assert pipe.returncode == 0 and verb not in pipe.stderr and verb not in pipe.stdout
        shown = [ln for ln in _shown(raw) if ln]
        want = [ln for ln in (pipe.stderr + pipe.stdout).split("\n") if ln]
        assert sorted(shown) == sorted(want), args  # nothing left of the progress lines


SEARCH = ["search", "hello", "--home", "examples/home"]
HIT = "\x1b[1;31mhello\x1b[0m"


def test_search_highlights_every_match_on_a_terminal_and_nothing_else_changes(tmp_path):
    env = colour_env(tmp_path)
    # the first search builds the full-text index and says so in a line of its own: the runs compared are warm
    assert subprocess.run(CLI + SEARCH, capture_output=True, env=env, cwd=REPO).returncode == 0
    shown = run_on_terminal(CLI + SEARCH, cols=400, env=env, cwd=REPO)
    assert shown.code == 0
    line = next(ln for ln in shown.lines if "def " in ln and "Write {" in ln)
    # hello.py, def hello(), 'hello': three matches in the one snippet, each marked
    assert line.count(HIT) == 3, line
    plain = run_on_terminal(CLI + SEARCH + ["--color", "never"], cols=400, env=env, cwd=REPO)
    assert plain.code == 0 and "\x1b" not in plain.text
    assert SGR.sub("", shown.text) == plain.text  # colour is all that was added
    flat = run_on_terminal(CLI + SEARCH + ["--no-context"], cols=250, env=env, cwd=REPO)
    assert flat.code == 0 and any(ln.startswith(f"\x1b[33m{FB}\x1b[0m main L") for ln in flat.lines)
    pipe = subprocess.run(CLI + SEARCH, capture_output=True, text=True, env=env, cwd=REPO)
    always = subprocess.run(CLI + SEARCH + ["--color=always"], capture_output=True, text=True, env=env, cwd=REPO)
    assert always.returncode == 0 and HIT in always.stdout and SGR.sub("", always.stdout) == pipe.stdout
    assert "\x1b" not in pipe.stdout
    nc = run_on_terminal(CLI + SEARCH, cols=250, env={**env, "NO_COLOR": "1"}, cwd=REPO)
    assert nc.code == 0 and "\x1b" not in nc.text and "hello" in nc.text


def test_search_colours_after_escaping_on_the_hostile_copy(hostile):  # noqa: F811
    (hostile.parent / "env-home").mkdir(exist_ok=True)
    env = colour_env(hostile.parent / "env-home")
    for args in (["search", "P1"], ["search", "X", "--no-context"]):
        p = subprocess.run([sys.executable, "-m", "sessionsift", "--color", "always", *args, "--claude-home",
                            str(hostile)], capture_output=True, text=True, env=env, timeout=120)
        assert p.returncode == 0, (args, p.stderr[-300:])
        rest = SGR.sub("", p.stdout)
        assert not _RAW.findall(rest), (args, _RAW.findall(rest)[:5])
        assert "\\e[31mX\\e[0m" in rest, args  # the record's own escape shown escaped
        assert "\x1b[1;31m" in p.stdout, args


def test_search_snippets_fit_the_terminal_and_a_pipe_is_not_cut(tmp_path):
    env = empty_env(tmp_path)
    hits = run_on_terminal(CLI + SEARCH, cols=80, env=env, cwd=REPO)
    assert hits.code == 0
    # a hit whose head leaves room: the snippet takes what is left (a head is never cut, the
    # snippet keeps 20 characters at least: a database row's long locator makes a longer line)
    lines = [ln for ln in hits.lines if ln.startswith("> L")]
    assert len(lines) > 5 and all(len(ln) <= 80 and "hello" in ln.lower() for ln in lines), lines
    wide = subprocess.run(CLI + SEARCH, capture_output=True, text=True, env=env, cwd=REPO)
    assert max(len(ln) for ln in wide.stdout.split("\n") if ln.startswith("> L")) > 200


def test_every_search_line_fits_80_columns_and_every_hit_keeps_its_locator_and_match(tmp_path):
    """On 80 columns no line of `search` over every agent's samples is wider than the terminal: a hit
    whose head (a database row's long locator) leaves fewer than 20 cells has its snippet on the
    next line, indented; a turn's opening prompt is cut to the width; the summary, index and
    coverage lines are prose broken across lines. Each hit's locator is still shown whole, and
    its snippet still holds the match. Before: 20 lines over 80 (opencode, Crush and Kilo Code
    rows up to 110, a Gemini turn's prompt 94, the summary lines 300+)."""
    env = empty_env(tmp_path)
    for args in (SEARCH, SEARCH + ["--no-context"]):
        shown = run_on_terminal(CLI + args, cols=80, env=env, cwd=REPO)
        assert shown.code == 0
        lines = [SGR.sub("", ln) for ln in shown.lines]
        assert [ln for ln in lines if len(ln) > 80] == [], args
        p = subprocess.run(CLI + args + ["--format", "json"], capture_output=True, text=True, env=env, cwd=REPO)
        hits = [r for r in map(json.loads, p.stdout.splitlines()) if r["kind"] == "hit"]
        assert len(hits) > 40
        flat = " ".join(" ".join(lines).split())
        for h in hits:
            loc = h.get("locator") or f"L{h['line']}"
            assert loc in flat, loc
        snippets = [ln for ln in lines if ln.startswith("    ") or ln.startswith("> ")]
        assert sum("hello" in ln.lower() for ln in snippets) >= len(hits)


def test_search_progress_shows_on_a_terminal_only_and_is_cleared(tmp_path):
    env = {**empty_env(tmp_path), "SESSIONSIFT_PROGRESS_DELAY": "0", "SESSIONSIFT_NO_INDEX": "1"}
    args = SEARCH + ["--no-context"]
    # wide enough that no line of prose (the summary lines: 500 cells and more) is broken
    term = run_on_terminal(CLI + args, cols=2000, env=env, cwd=REPO)
    assert term.code == 0
    raw = term.raw.decode()
    assert "searching: " in raw
    pipe = subprocess.run(CLI + args, capture_output=True, text=True, env=env, cwd=REPO)
    assert pipe.returncode == 0 and "searching: " not in pipe.stderr + pipe.stdout
    shown = [ln for ln in _shown(raw) if ln]
    assert sorted(shown) == sorted(ln for ln in (pipe.stderr + pipe.stdout).split("\n") if ln)


SHOW = ["show", "01a230e8-cf6", "--home", "examples/home"]
"""The Codex CLI subagent sample (the real client): a session with a child session, 21 lines."""


def test_show_keeps_its_colour_through_the_pager_and_honours_no_color_and_never(tmp_path):
    """`show SESSION` on a terminal goes through a pager (less -FRX, as git does): what is written to
    the pager is coloured as the terminal would be -- before, the pager's pipe was taken for a pipe
    and the view lost every colour (and had none of its own)."""
    import shutil

    env = {**colour_env(tmp_path), "SESSIONSIFT_PAGER": "sed -u s/^/PAGED:/"}
    env.pop("PAGER", None)
    paged = run_on_terminal(CLI + SHOW, cols=200, env=env, cwd=REPO)
    assert paged.code == 0
    head = paged.lines[0]
    assert head.startswith("PAGED:session \x1b[33m01a230e8-cf64-7c50-bec4-e3887758c0c7\x1b[0m  [Codex CLI 0.171.0]"), head
    assert "PAGED:\x1b[1m── turn 1 · " in paged.text  # a turn's header
    assert "PAGED:\x1b[1m❯ [subagent P1] Delegate a summary of input.txt to a helper agent.\x1b[0m" in paged.text
    assert "PAGED:      \x1b[2m⏺ exec_command `wc -l < input.txt` → 104 chars, exit 0\x1b[0m" in paged.text
    direct = run_on_terminal(CLI + SHOW + ["--no-pager"], cols=200, env=env, cwd=REPO)
    assert direct.code == 0 and "PAGED:" not in direct.text
    assert paged.text.replace("PAGED:", "") == direct.text  # the pager gets what the terminal would
    for off in ({**env, "NO_COLOR": "1"}, {**env, "TERM": "dumb"}):
        nc = run_on_terminal(CLI + SHOW, cols=200, env=off, cwd=REPO)
        assert nc.code == 0 and "PAGED:session 01a230e8-cf64" in nc.text and "\x1b" not in nc.text
    never = run_on_terminal(CLI + ["--color", "never"] + SHOW, cols=200, env=env, cwd=REPO)
    assert never.code == 0 and "\x1b" not in never.text
    assert SGR.sub("", paged.text) == never.text
    pipe = subprocess.run(CLI + SHOW, capture_output=True, text=True, env=env, cwd=REPO)
    assert pipe.returncode == 0 and "\x1b" not in pipe.stdout and "PAGED:" not in pipe.stdout
    assert shutil.which("less"), "less is the default pager"
    env.pop("SESSIONSIFT_PAGER")
    less = run_on_terminal(CLI + SHOW, cols=200, env=env, cwd=REPO)  # the default: less -FRX, fits: quits at once
    assert less.code == 0
    assert "session \x1b[33m01a230e8-cf64-7c50-bec4-e3887758c0c7\x1b[0m" in less.text  # -R passed it on
    assert "\x1b[2m⏺ exec_command `wc -l < input.txt` → 104 chars, exit 0\x1b[0m" in less.text
