"""The other providers' search summary says what it read, what it searched and what its bytes
ruled out (review finding 7): "31 of 77 records searched" counted only the sessions that got
past the byte prefilter, so its total moved with the pattern while reading as the whole corpus.

Data: the real clients' corpora in examples/home (Codex CLI, Gemini CLI, opencode, Crush).
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EX = REPO / "examples"
CODEX = ("--codex-home", str(EX / "codex-home"))
RESUMED, SHELL = "01a230e8-bc39", "01a230e8-b40a"  # [resumed P1] Show notes.md / [shell_and_patch P1]


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sessionsift", *args], capture_output=True, text=True,
                          timeout=120, cwd=REPO)


def shared(*args: str) -> tuple[dict, str]:
    j = cli("search", *args, "--format", "json")
    summ = [json.loads(x) for x in j.stdout.splitlines()][-1]
    t = cli("search", *args)
    line = [x for x in t.stdout.splitlines() if " of Codex CLI" in x][-1]
    return summ["shared"], line


def test_the_summary_counts_records_of_the_sessions_read_and_names_the_ones_ruled_out():
    # the byte gate (--no-index: with the index, the full-text index rules sessions out first)
    sm, line = shared("-F", "Show notes.md", "--home", str(EX / "home"), "--no-index")
    assert sm["sessions_prefiltered"] > 0 and sm["sessions_read"] > 0
    assert sm["sessions_read"] + sm["sessions_prefiltered"] + len(sm["problems"]) == sm["sessions"]
    assert (f"({sm['records']} records read in {sm['sessions_read']} sessions, {sm['records_searched']} of them "
            f"searched; {sm['sessions_prefiltered']} sessions ruled out by their bytes") in line, line
    # an empty pattern has no needle: every session is read, and the records read are all there are
    al, line = shared("", "--home", str(EX / "home"))
    assert al["sessions_prefiltered"] == 0 and al["sessions_read"] == al["sessions"] == sm["sessions"]
    assert al["records"] > sm["records"]
    assert f"({al['records']} records read in {al['sessions']} sessions, " in line and "ruled out" not in line


def test_one_session_ruled_out_is_said_in_the_singular():
    sm, line = shared("-F", "Show notes.md", RESUMED, SHELL, *CODEX, "--no-index")
    assert (sm["sessions"], sm["sessions_read"], sm["sessions_prefiltered"]) == (2, 1, 1)
    assert (f"({sm['records']} records read in 1 session, {sm['records_searched']} of them searched; "
            "1 session ruled out by its bytes (no file or database row holds the pattern's literal), not parsed") in line, line


def test_the_sessions_the_full_text_index_rules_out_are_counted_and_named():
    """With the index the full-text index rules sessions out before the byte gate: every session
    is read, ruled out by it, ruled out by its bytes or a problem, and the line says which."""
    sm, line = shared("-F", "Show notes.md", "--home", str(EX / "home"))
    nx, _ = shared("-F", "Show notes.md", "--home", str(EX / "home"), "--no-index")
    assert sm["hits"] == nx["hits"] and sm["sessions_with_hits"] == nx["sessions_with_hits"]
    assert sm["sessions_indexed_out"] > 0 and nx["sessions_indexed_out"] == 0
    assert (sm["sessions_read"] + sm["sessions_prefiltered"] + sm["sessions_indexed_out"] + len(sm["problems"])
            == sm["sessions"])
    assert (f"{sm['sessions_indexed_out']} sessions ruled out by the full-text index (no record holds the "
            "pattern's literal), not parsed") in line, line


def test_the_hits_are_placed_in_the_sessions_that_hold_them():
    """'24 hits in 33 sessions' read as hits spread over 33 sessions when 17 were read and fewer
    held a hit: the line names the sessions with a hit out of the sessions in scope."""
    sm, line = shared("-F", "Show notes.md", "--home", str(EX / "home"))
    assert 0 < sm["sessions_with_hits"] < sm["sessions_read"] < sm["sessions"]
    assert line.startswith(f"{sm['hits']} hit{'s' if sm['hits'] != 1 else ''} in {sm['sessions_with_hits']} of "
                           f"{sm['sessions']} sessions of "), line
