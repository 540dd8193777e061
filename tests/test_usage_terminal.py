"""`usage` tables as a person sees them: on a real pseudo-terminal (tests/terminal.py) of a given
width, over examples/home (real clients' data). A table fits the terminal, its bar column is made of
whole characters (never a character cut in two) and shrinks or goes before a figure is cut."""

from __future__ import annotations

import json
import os
import subprocess

from rich.cells import cell_len

from tests.terminal import CLI, run_on_terminal
from tests.test_usage_groups import HOME

ARGS = ["usage", "daily", "--home", str(HOME), "--by", "project", "--timezone", "UTC"]
BAR_CHARS = set("█▏▎▍▌▋▊▉")


def _table(lines: list[str]) -> list[str]:
    """The table's lines: from its header (the line that starts with `day`) to its `total` row."""
    start = next(i for i, ln in enumerate(lines) if ln.startswith("day "))
    end = next(i for i, ln in enumerate(lines) if ln.startswith("total "))
    return lines[start:end + 1]


def _figures() -> list[dict]:
    p = subprocess.run(CLI + ARGS + ["--format", "json"], capture_output=True, text=True)
    assert p.returncode == 0
    return [r for r in map(json.loads, p.stdout.splitlines()) if r["kind"] == "period"]


def test_table_fits_the_terminal_and_keeps_every_figure():
    rows = _figures()
    for cols in (100, 130):
        shown = run_on_terminal(CLI + ARGS, cols=cols)
        assert shown.code == 0
        table = _table(shown.lines)  # shown.lines decodes strictly: no character cut in two
        assert len(table) == len(rows) + 2
        for ln in table:
            assert cell_len(ln) <= cols, (cols, ln)
        for ln, r in zip(table[1:], rows):
            # every figure of the row is there whole, in its order
            want = [f"{r[k]:,}" if r[k] is not None else "-" for k in
                    ("input_tokens", "output_tokens", "cache_write_tokens", "cache_read_tokens", "total_tokens")]
            got = ln.split()
            j = 0
            for w in want:  # raises ValueError when a figure is missing or cut
                j = got.index(w, j) + 1


def test_bars_are_whole_characters_and_as_wide_as_the_room():
    wide = run_on_terminal(CLI + ARGS, cols=220)
    assert wide.code == 0
    table = _table(wide.lines)
    rows = _figures()
    # a row with tokens ends in its bar; a row without (Crush: no usage recorded) in its cost
    bars = [ln.split()[-1] for ln in table[1:-1]]
    assert [set(b) <= BAR_CHARS for b in bars] == [r["total_tokens"] is not None for r in rows], bars
    assert max(cell_len(b) for b in bars if set(b) <= BAR_CHARS) == 12
    # a pipe gets the table's natural width (nothing cut for a program), bars included; COLUMNS
    # would set it (the harness's process may carry one in its C environment: none here)
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    p = subprocess.run(CLI + ARGS, capture_output=True, env=env)
    assert p.returncode == 0
    piped = _table(p.stdout.decode("utf-8").split("\n"))
    assert [ln.split()[-1] for ln in piped[1:-1]] == bars
    # on 130 columns the project names shrink before any figure, and no bar fits beside them
    mid = _table(run_on_terminal(CLI + ARGS, cols=130).lines)
    assert not any(set(ln.split()[-1]) & BAR_CHARS for ln in mid)
    assert any(ln.split()[1].startswith("…") for ln in mid[1:-1])


def test_every_line_fits_an_80_column_terminal():
    """On 80 columns (the terminal a person most often has) no line of `usage daily`, `weekly`,
    or `monthly` on every agent's samples is wider than the terminal: the table's name
    column shrinks to 8 cells before a line overflows, and the prose around the table (the price
    table's line, the legend, the notes, the coverage line) is broken across lines, nothing cut
    (each figure of the total row still there). Before: the daily table's lines were 81 cells
    (the models column stopped at 10), the price-table line 158, the coverage line 275."""
    import re

    plain = re.compile(r"\x1b\[[0-9;]*m")
    for report in ("daily", "weekly", "monthly"):
        args = ["usage", report, "--home", str(HOME), "--timezone", "UTC"]
        shown = run_on_terminal(CLI + args, cols=80)
        assert shown.code == 0, shown.text[-300:]
        lines = [plain.sub("", ln) for ln in shown.lines]
        assert [ln for ln in lines if cell_len(ln) > 80] == [], report
        total = next(r for r in map(json.loads, subprocess.run(CLI + args + ["--format", "json"], capture_output=True,
                                                                 text=True).stdout.splitlines()) if r["kind"] == "summary")
        row = next(ln for ln in lines if ln.startswith("total "))
        assert f"{total['input_tokens']:,}" in row.split() and f"{total['output_tokens']:,}" in row.split(), row
        joined = " ".join(ln.strip() for ln in lines)
        assert "coverage: Claude Code 8 sessions (+2 subagents)" in joined and "Kilo Code 7 (+1 subagent)" in joined


def test_usage_session_and_blocks_fit_80_columns(tmp_path):
    """On 80 columns `usage session` and `usage blocks` over every agent's samples fit: the session
    ids are cut in the middle (start and end of the whole id kept: opencode's and Kilo Code's ids
    share their first 8 characters) and the table says so; blocks leave out `closes` and `models`
    and say so. Every figure is still there whole; a pipe gets the 13-character ids and every column
    as before. Before: usage session 62 lines of 84 cells, usage blocks 106 cells."""
    import re

    plain = re.compile(r"\x1b\[[0-9;]*m")
    env = {**os.environ, "HOME": str(tmp_path)}
    env.pop("COLUMNS", None)
    for report in ("session", "blocks"):
        args = ["usage", report, "--home", str(HOME), "--timezone", "UTC"]
        shown = run_on_terminal(CLI + args, cols=80, env=env)
        assert shown.code == 0, shown.text[-300:]
        lines = [plain.sub("", ln) for ln in shown.lines]
        assert [ln for ln in lines if cell_len(ln) > 80] == [], report
        js = [json.loads(x) for x in subprocess.run(CLI + args + ["--format", "json"], capture_output=True, text=True,
                                                     env=env).stdout.splitlines()]
        piped = subprocess.run(CLI + args, capture_output=True, text=True, env=env).stdout.split("\n")
        if report == "session":
            rows = [r for r in js if r["kind"] == "session"]
            start = next(i for i, ln in enumerate(lines) if ln.split()[:2] == ["session", "models"])
            table = lines[start + 1:start + 1 + len(rows)]
            for ln, r in zip(table, rows):
                head, sep, tail = ln.split()[0].partition("…")
                assert sep and r["session_id"].startswith(head) and r["session_id"].endswith(tail) and len(tail) >= 4, ln
                assert (f"{r['total_tokens']:,}" if r['total_tokens'] is not None else "-") in ln.split(), ln
            assert len({ln.split()[0] for ln in table}) == len(rows)  # every id still told apart
            assert sum(ln.startswith("(… in the session ids: each cut in the middle") for ln in lines) == 1
            assert sum(ln.startswith(r["session_id"][:13] + "  ") for r in rows for ln in piped) == len(rows)
        else:
            w = next(r for r in js if r["kind"] == "window")
            head = next(ln for ln in lines if ln.startswith("opens "))
            assert head.split() == ["opens", "status", "resp.", "input", "output", "write", "read", "total", "cost"]
            row = lines[lines.index(head) + 1]
            assert row.split()[2:] == ["closed", f"{w['messages']:,}", f"{w['input_tokens']:,}", f"{w['output_tokens']:,}",
                                       "0", "0", f"{w['total_tokens']:,}", f"${w['cost_usd']:,.2f}"], row
            assert " ".join(lines).count("(left out for the terminal's width: closes, models;") == 1
            assert next(ln for ln in piped if ln.startswith("opens ")).split()[:4] == ["opens", "closes", "status", "models"]
