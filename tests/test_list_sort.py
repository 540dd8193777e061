"""`list --sort KEY` (issue 27) on the bundled samples the real clients wrote: rows in the order
asked for, an unknown value (a size not attributable to a session in a shared database) after
every known one whichever the direction, `-n N` the first N in that order (not the N newest,
then sorted), and the text saying what `--limit` left out."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.terminal import CLI
from tests.test_newcomer import empty_env

REPO = Path(__file__).resolve().parent.parent


def _list(env, *args: str) -> list[dict]:
    p = subprocess.run(CLI + ["list", "--home", "examples/home", "--format", "json", *args], capture_output=True,
                       text=True, env=env, cwd=REPO)
    assert p.returncode == 0, p.stderr
    return [json.loads(x) for x in p.stdout.splitlines()]


def _rows(doc):
    return [r for r in doc if r["kind"] == "session"]


def _key(r):
    return (r["provider"], r["session_id"])


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    return empty_env(tmp_path_factory.mktemp("sort"))


@pytest.fixture(scope="module")
def every(env):
    return _rows(_list(env))


def test_size_puts_the_largest_first_and_unknown_sizes_last(env, every):
    got = _rows(_list(env, "--sort", "size"))
    assert sorted(map(_key, got)) == sorted(map(_key, every))  # the same sessions, reordered
    sizes = [r["size_bytes"] for r in got]
    known = [s for s in sizes if s is not None]
    assert known == sorted(known, reverse=True) and known[0] == max(known)
    assert None in sizes  # shared databases (opencode, Crush): size not attributable
    assert sizes[len(known):] == [None] * (len(sizes) - len(known))  # never taken for 0
    assert sizes[:len(known)] == known


def test_oldest_is_newest_reversed(env, every):
    got = _rows(_list(env, "--sort", "oldest"))
    dated = [r["last_at"]["utc"] for r in got if r["last_at"] is not None]
    assert dated == sorted(dated) and dated[0] < dated[-1]
    assert [r["last_at"]["utc"] for r in every if r["last_at"] is not None] == sorted(dated, reverse=True)


def test_records_then_limit_keeps_the_first_n_in_that_order(env, every):
    top = [r for r in every if r["parent_session_id"] is None]
    want = sorted([r for r in top if r["records"] is not None], key=lambda r: -r["records"])[:3]
    doc = _list(env, "--sort", "records", "-n", "3")
    got = [r for r in _rows(doc) if r["parent_session_id"] is None]
    assert [_key(r) for r in got] == [_key(r) for r in want]  # ties in the listing's order (newest first)
    newest3 = [_key(r) for r in top[:3]]
    assert [_key(r) for r in got] != newest3  # not the 3 most recent, sorted
    header, summary = doc[0], doc[-1]
    assert header["sort"] == "records" and header["sessions"] == 3
    assert header["narrowed"] == {"filters": ["--limit 3"], "sessions_kept": 3, "sessions_left_out": len(top) - 3,
                                  "left_out_undated": 0, "left_out_no_project": 0}
    kids = [r for r in _rows(doc) if r["parent_session_id"] is not None]
    assert summary["sessions"] + summary["child_sessions"] == len(_rows(doc)) == 3 + len(kids)
    for k in kids:  # a child session follows its kept parent
        assert any(p["session_id"] == k["parent_session_id"] for p in got)


def test_the_text_says_what_the_limit_left_out(env, every):
    top = [r for r in every if r["parent_session_id"] is None]
    for extra in ([], ["--sort", "size"]):
        p = subprocess.run(CLI + ["list", "--home", "examples/home", "-n", "2", *extra], capture_output=True,
                           text=True, env=env, cwd=REPO)
        assert p.returncode == 0
        assert f"narrowed by --limit 2: 2 sessions kept, {len(top) - 2} left out\n" in p.stdout


def test_an_unknown_key_is_a_usage_error(env):
    p = subprocess.run(CLI + ["list", "--home", "examples/home", "--sort", "bogus"], capture_output=True, text=True,
                       env=env, cwd=REPO)
    assert p.returncode == 2 and "'bogus' is not one of 'newest', 'oldest', 'size'" in p.stderr
