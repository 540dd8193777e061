"""Short answers first (issue 27): `stats` and `status` lead with what a person asked for, on a real
pseudo-terminal (tests/terminal.py), on the bundled samples the real clients wrote; the details are
under `--verbose`, a note is said once, and `--format json` is the same document with or without
`--verbose` (docs/json.md)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

from tests.terminal import CLI, run_on_terminal
from tests.test_newcomer import empty_env

REPO = Path(__file__).resolve().parent.parent
DEMO = ["stats", "--claude-home", "examples/claude-home", "--no-subagents"]  # README's demo, second half
CODE = re.compile(r"\b[A-Z]{2,6}-\d{3}\b")


def _json(args: list[str], env: dict) -> list[dict]:
    p = subprocess.run(CLI + args + ["--format", "json"], capture_output=True, text=True, env=env, cwd=REPO)
    return [json.loads(x) for x in p.stdout.splitlines()]


def _plain(text: str) -> str:
    return re.sub(r"\x1b\[[0-9;]*m", "", text)


def _through_coverage(lines: list[str]) -> list[str]:
    """The lines up to the coverage line's first: on a terminal narrower than it (487 cells with
    eight agents not looked at) it is broken across lines, each after the first indented."""
    cov = max(i for i, ln in enumerate(lines) if ln.startswith("coverage: "))
    assert all(ln.startswith("  ") for ln in lines[cov + 1:]), lines[cov:]
    return lines[:cov + 1]


def test_stats_of_the_readme_demo_is_a_table_of_sessions_and_the_totals(tmp_path):
    env = empty_env(tmp_path)
    shown = run_on_terminal(CLI + DEMO, cols=120, env=env, cwd=REPO)
    assert shown.code == 0
    lines = _through_coverage([ln for ln in _plain(shown.text).split("\n") if ln])
    # before: 162 lines, most of them record kinds and labels of the client's internals
    assert len(lines) == 13, lines
    assert not any("atis-latch" in ln or "harness.meta.attachment" in ln for ln in lines)
    assert lines[0].split() == ["SESSION", "AGENT", "TURNS", "PROMPTS", "RECORDS", "CALLS", "FAILED", "TOKENS"]
    rows = {r["session_id"]: r for r in _json(DEMO, env) if r["kind"] == "lane"}
    assert len(rows) == 8
    for r in rows.values():
        line = next(ln for ln in lines if ln.startswith(r["session_id"]))
        tokens = sum(sum(d.values()) for d in r["tokens_by_model"].values())
        want = ["Claude", "Code", str(r["turns"]), str(sum(r["prompts"].values())), str(r["records"]),
                str(sum(r["tool_calls"].values())), str(sum(r["tool_errors"].values())), f"{tokens:,}"]
        assert line.split()[1:] == want, (line, want)
    assert lines[-4].startswith("tools most called: Write 7, Bash 6, Read 5, Edit 4,")
    assert "TodoWrite 2 (2 failed)" in lines[-4]
    assert lines[-3].startswith("every agent's sessions (Claude Code): 8 sessions,")
    assert lines[-1].startswith("coverage: Claude Code 8 sessions")
    # on 80 columns the table fits: the turns and records columns go first, and it says so
    narrow = run_on_terminal(CLI + DEMO, cols=80, env=env, cwd=REPO)
    nl = _plain(narrow.text).split("\n")
    assert nl[0].split() == ["SESSION", "AGENT", "PROMPTS", "CALLS", "FAILED", "TOKENS"]
    assert all(len(ln) <= 80 for ln in nl[:9]) and nl[1].split()[1:3] == ["Claude", "Co…"]
    assert nl[9:11] == ["(left out for the terminal's width: TURNS, RECORDS; a wider terminal or a pipe",
                        "  shows them)"]  # broken to fit, as every line is
    assert all(len(ln) <= 80 for ln in nl)


def test_stats_verbose_keeps_every_detail_and_json_is_the_same_either_way(tmp_path):
    env = empty_env(tmp_path)
    verbose = run_on_terminal(CLI + DEMO + ["--verbose"], cols=200, env=env, cwd=REPO)
    assert verbose.code == 0
    text = _plain(verbose.text)
    assert "  type atis-latch                   1" in text and "  label harness.meta.attachment" in text
    assert "human prompts: 12 typed: 12 sent, 0 queued, 0 rewound, 0 unsent" in text
    lines = _through_coverage(text.strip().split("\n"))
    # the whole census, as before (162 lines), its tool calls line broken in two to fit the 200 columns
    assert len(lines) == 163 and lines[-6].startswith("tool calls: ") and lines[-5].startswith("  ")
    assert all(len(ln) <= 200 for ln in text.strip().split("\n"))
    a = _json(DEMO, env)
    b = _json(DEMO + ["--verbose"], env)
    assert a == b and a[0]["kind"] == "header" and a[-1]["kind"] == "summary"


def test_stats_on_every_agent_has_one_row_per_session_with_subagents_under_it(tmp_path):
    env = empty_env(tmp_path)
    shown = run_on_terminal(CLI + ["stats", "--home", "examples/home"], cols=200, env=env, cwd=REPO)
    assert shown.code == 0
    lines = _through_coverage(_plain(shown.text).rstrip("\n").split("\n"))
    rows = _json(["stats", "--home", "examples/home"], env)
    sessions = [r for r in rows if r["kind"] == "session"]
    top = [r for r in sessions if r["parent_session_id"] is None]
    end = next(i for i, ln in enumerate(lines) if ln.startswith("tools most called: "))
    table = lines[1:end]
    lanes = [r for r in rows if r["kind"] == "lane" and r["lane"] != "main"]
    assert len(lanes) == 2
    assert len(table) == len(sessions) + len(lanes), table  # one row per session, and per Claude Code subagent lane
    for ln in lanes:
        assert sum(t.startswith("  ↳ " + ln["lane"] + " ") for t in table) == 1
    crush = next(ln for ln in table if ln.startswith("7449d26b-0aff-492a-91fc-684f5edb6126"))
    assert crush.split()[-1] == "?"  # Crush records no per-message usage: unknown, never 0
    child = next(r for r in sessions if r["provider"] == "codex" and r["parent_session_id"])
    i = next(k for k, ln in enumerate(table) if ln.startswith(child["parent_session_id"]))
    assert table[i + 1].startswith("  ↳ " + child["session_id"])
    # the header, a row per session, then at most: tools, the index line, the totals, the hint, coverage
    assert len(top) < len(table) and len(lines) - 1 - len(table) <= 5, lines[end:]  # before: 589 lines


STATUS = ["status", "--claude-home", "examples/claude-home"]


def test_status_says_each_verdict_on_one_line_and_each_note_once(tmp_path):
    env = empty_env(tmp_path)
    shown = run_on_terminal(CLI + STATUS, cols=200, env=env, cwd=REPO)
    assert shown.code == 0
    lines = _through_coverage([ln for ln in _plain(shown.text).split("\n") if ln])
    rows = [r for r in _json(STATUS, env) if r["kind"] == "session"]
    assert len(rows) == 8
    for r in rows:
        mine = [ln for ln in lines if ln.startswith(r["session_id"])]
        assert mine == [f"{r['session_id']}  {r['verdict']}  Claude Code: {r['reason']}"], mine
    every = {n for r in rows for n in r["notes"]}
    for n in every:  # each note once, without its catalog codes
        said = [ln for ln in lines if CODE.sub("", n)[:40] in CODE.sub("", ln)]
        assert len(said) == 1, (n, said)
    assert sum("no registry row" in ln for ln in lines) == 1
    assert not any(CODE.search(ln) for ln in lines), [ln for ln in lines if CODE.search(ln)]
    assert any(CODE.search(n) for r in rows for n in r["notes"])  # JSON keeps the catalog codes
    assert not any(ln.lstrip().startswith("[registry]") for ln in lines)
    i = lines.index(next(ln for ln in lines if ln.startswith("8a2b4883")))
    assert lines[i + 1:i + 3] == ["  open tasks:", "    #2 [pending] Write the tests"]  # what is still open
    # before: 109 lines for these 8 sessions; the permission note (306 cells) broken in two at 200 columns
    assert len(lines) == 18 and all(len(ln) <= 200 for ln in lines)
    assert sum(ln.startswith("note (8 sessions): ") for ln in lines) == 3


def test_status_verbose_keeps_the_evidence_rows(tmp_path):
    env = empty_env(tmp_path)
    shown = run_on_terminal(CLI + STATUS + ["--verbose"], cols=200, env=env, cwd=REPO)
    assert shown.code == 0
    text = _plain(shown.text)
    assert text.count("  [registry] directory absent") == 8
    assert text.count("no registry row") == 8

    def steady(v):  # the ages are taken at each run's own instant
        if isinstance(v, dict):
            return {k: steady(x) for k, x in v.items() if not k.endswith("age_secs")}
        if isinstance(v, str):
            return re.sub(r"\d+s old", "Ns old", v)
        return [steady(x) for x in v] if isinstance(v, list) else v

    assert steady(_json(STATUS, env)[1:-1]) == steady(_json(STATUS + ["--verbose"], env)[1:-1])


def test_stats_and_status_lines_fit_the_terminal(tmp_path):
    """On 80 and 120 columns no line of the README demo's `stats`, of `status` (short and
    --verbose, Claude Code's samples and every agent's) is wider than the terminal: the table drops
    and shortens columns, the verdict lines, evidence, notes and the coverage line are broken
    across lines, nothing cut (each session's line still starts with its id and verdict)."""
    env = empty_env(tmp_path)
    for cols in (80, 120):
        for args in (DEMO, STATUS, STATUS + ["-v"], ["status", "--home", "examples/home"]):
            shown = run_on_terminal(CLI + args, cols=cols, env=env, cwd=REPO)
            assert shown.code == 0, (args, shown.text[-300:])
            lines = _plain(shown.text).rstrip("\n").split("\n")
            assert [ln for ln in lines if len(ln) > cols] == [], (args, cols)
            _through_coverage(lines)
            if args[0] == "status" and "-v" not in args:
                rows = [r for r in _json(args, env) if r["kind"] == "session"]
                for r in rows:
                    assert sum(ln.startswith(f"{r['session_id']}  {r['verdict']}") for ln in lines) == 1, r["session_id"]


def test_files_lines_fit_the_terminal_and_keep_every_path(tmp_path):
    """On 80 columns no line of `files` (by file, timeline, dir and summary) over every agent's
    samples is wider than the terminal: each row is broken after its path, the summary and the
    coverage line across lines, nothing cut (every file's path still shown whole). A pipe gets each
    row on one line. Before: by file 65 of 68 lines over 80 (up to 119 cells)."""
    env = {**empty_env(tmp_path), "SESSIONSIFT_PROGRESS_DELAY": "1000"}  # no progress line
    home = ["--home", "examples/home"]
    for by in ("file", "timeline", "dir", "summary"):
        args = ["files", *home, "--by", by]
        shown = run_on_terminal(CLI + args, cols=80, env=env, cwd=REPO)
        assert shown.code == 0, shown.text[-300:]
        lines = _plain(shown.text).rstrip("\n").split("\n")
        assert [ln for ln in lines if len(ln) > 80] == [], by
        _through_coverage(lines)
        if by == "file":
            p = subprocess.run(CLI + args + ["--format", "json"], capture_output=True, text=True, env=env, cwd=REPO)
            files = [r["file"] for r in map(json.loads, p.stdout.splitlines()) if r["kind"] == "file"]
            assert len(files) > 40
            starts = {ln.split("  ", 1)[0] for ln in lines}
            assert [f for f in files if f not in starts] == []
            piped = subprocess.run(CLI + args, capture_output=True, text=True, env=env, cwd=REPO).stdout.splitlines()
            assert sum(ln.split("  ", 1)[0] in files for ln in piped) == len(files)
            assert max(len(ln) for ln in piped) > 100


def test_agents_lines_fit_the_terminal_and_keep_every_subagent(tmp_path):
    """On 80 columns no line of `agents` (flat and --tree) over every agent's samples is wider than
    the terminal: each subagent's lines are broken across lines, its name still first on its own
    line. Before: 18 of 46 lines over 80 (up to 114 cells: the spawning call's id and place)."""
    env = empty_env(tmp_path)
    for extra in ([], ["--tree"]):
        args = ["agents", "--home", "examples/home", *extra]
        shown = run_on_terminal(CLI + args, cols=80, env=env, cwd=REPO)
        assert shown.code == 0, shown.text[-300:]
        lines = _plain(shown.text).rstrip("\n").split("\n")
        assert [ln for ln in lines if len(ln) > 80] == [], extra
        p = subprocess.run(CLI + args + ["--format", "json"], capture_output=True, text=True, env=env, cwd=REPO)
        rows = [r for r in map(json.loads, p.stdout.splitlines()) if r["kind"] == "agent"]
        assert len(rows) >= 9
        firsts = {ln.split()[0] for ln in lines if ln.strip()}
        assert [r["lane"] for r in rows if r["lane"] not in firsts and r["session_id"] not in firsts] == []


def _cut_from(shown: str, whole: str) -> bool:
    """`shown` is `whole`, or `whole` cut in its middle: its start, `…`, its end."""
    if shown == whole:
        return True
    head, sep, tail = shown.partition("…")
    return bool(sep) and len(head) >= 4 and len(tail) >= 4 and whole.startswith(head) and whole.endswith(tail) \
        and len(head) + len(tail) < len(whole)


def test_stats_on_every_agent_fits_80_columns_with_long_ids_cut_in_the_middle(tmp_path):
    """On 80 columns `stats --home examples/home` fits: the ids wider than the room (Crush's
    56-character subagent id, Qwen Code's and Crush's title helper) are cut in the middle, start
    and end kept, the table says so; every row still names its session (a UUID stays whole) and
    a pipe gets every id whole. Before: 71 lines of 99 cells."""
    env = empty_env(tmp_path)
    args = ["stats", "--home", "examples/home"]
    shown = run_on_terminal(CLI + args, cols=80, env=env, cwd=REPO)
    assert shown.code == 0
    lines = _plain(shown.text).rstrip("\n").split("\n")
    assert [ln for ln in lines if len(ln) > 80] == []
    _through_coverage(lines)
    rows = _json(args, env)
    ids = [r["session_id"] for r in rows if r["kind"] == "session"]
    ids += [r["lane"] for r in rows if r["kind"] == "lane" and r["lane"] != "main"]
    end = next(i for i, ln in enumerate(lines) if ln.startswith("("))  # the table's notes under it
    table = [ln.split("↳ ")[-1].split(" ")[0] for ln in lines[1:end]]
    assert len(table) == len(ids)
    assert [s for s in table if not any(_cut_from(s, i) for i in ids)] == [], table
    cut = [s for s in table if "…" in s]
    assert len(cut) == 3 and any(s.startswith("c27489fa-") and s.endswith("call_subagent_0_0") for s in cut), cut
    assert all(len(i) <= 36 for i in ids if i in table)  # a UUID is never cut at 80 columns
    assert sum(ln.startswith("(… in 3 ids: cut in the middle") for ln in lines) == 1
    piped = subprocess.run(CLI + args, capture_output=True, text=True, env=env, cwd=REPO).stdout
    assert "…" not in piped.split("tools most called: ")[0] and "c27489fa-88a9-401d-af22-f862d830291b$$call_subagent_0_0" in piped
