"""The full-text index (index/fulltext.py) as `search`'s candidate picker keeps RE2's answer: the
same searches with the index (built on the first run, used on the second) and with --no-index
give the same hits and exit status, for every agent, on the real-client samples (examples/home
and the other committed real-client homes) and on hand-made patterns (case-insensitive,
alternation, anchors, a literal inside a word, unicode, no usable literal). The index follows
the files: an append, a rewrite and a deletion are searched as the scan sees them."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sessionsift.index.fulltext import NO_LITERAL, literals, match_expr

REPO = Path(__file__).resolve().parents[1]
HOME = REPO / "examples" / "home"
HOMES = ["codex-legacy-home", "opencode-legacy-home", "copilot-1.0.92-home", "claude-tmp"]
PATTERNS = ["hello", "README", "(?i)readme", "def |class ", "foo|bar", "the", "^#", "x.*y", "ample", "ELL",
            "(?i)tmp/ssift", "é|ü", "ssift-[a-z]+-sample", "\\bfile\\b", "[[:alpha:]]ello", "(?i:HELLO)",
            "hello$", "  ", "\\d{3}"]


def _env(tmp_path: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SESSIONSIFT_", "XDG_"))}
    env["SESSIONSIFT_INDEX_DIR"] = str(tmp_path / "idx")
    env["SESSIONSIFT_FULLTEXT_BUDGET"] = "-1"  # every unit indexed on the first run, however loaded the machine
    env["HOME"] = str(tmp_path / "userhome")
    return env


def _search(env: dict, *args: str) -> tuple[int, list[str], dict]:
    r = subprocess.run([sys.executable, "-m", "sessionsift", "search", *args, "--format", "json"],
                       capture_output=True, text=True, env=env, cwd=env["HOME"] if os.path.isdir(env["HOME"]) else "/")
    rows = [json.loads(x) for x in r.stdout.splitlines() if x.strip()]
    hits = sorted(json.dumps(x, sort_keys=True) for x in rows if x.get("kind") == "hit")
    sm = next((x for x in rows if x.get("kind") == "summary"), None)
    assert sm is not None, r.stderr[-2000:]
    return r.returncode, hits, sm


def _same(env: dict, home: Path, pat: str, *extra: str, twice: bool = False) -> dict:
    """The search with --no-index and with the index (`twice`: the first run, which brings the
    index up to date, and a second one, which reads it): equal exit status and hits."""
    base = _search(env, pat, "--home", str(home), "--no-index", *extra)
    runs = [_search(env, pat, "--home", str(home), *extra) for _ in range(2 if twice else 1)]
    for got in runs:
        assert got[0] == base[0], pat
        assert got[1] == base[1], pat
    assert base[2]["fulltext"] is None
    return runs[-1][2]


def test_hits_equal_with_and_without_the_index_on_every_agents_samples(tmp_path):
    (tmp_path / "userhome").mkdir()
    env = _env(tmp_path)
    used = 0
    for k, pat in enumerate(PATTERNS):
        sm = _same(env, HOME, pat, twice=k == 0)
        ft = sm["fulltext"]
        if literals([pat], False, False) is None:
            assert ft["used"] is False and ft["why_not"] == NO_LITERAL, pat
        else:
            assert ft["used"] is True, (pat, ft)
            used += ft["ruled_out"] > 0
    assert used >= 10  # the index did rule transcripts out (the picker was exercised)
    providers = set(sm["providers"])
    assert {"claude-code", "codex", "gemini-cli", "opencode", "crush", "pi", "qwen-code", "copilot-cli",
            "kilo-code"} <= providers
    # every agent's sessions are in the index (none left unindexed but those it must always read)
    sm = _same(env, HOME, "zqxq-nothing-holds-this")
    ft = sm["fulltext"]
    assert ft["candidates"] == 0 and ft["ruled_out"] + ft["not_indexed"] == ft["fresh"]
    assert ft["built"] == 0 and ft["appended"] == 0


def test_case_and_options_equal_on_the_other_real_client_homes(tmp_path):
    (tmp_path / "userhome").mkdir()
    env = _env(tmp_path)
    for name in HOMES:
        home = REPO / "examples" / name
        if not home.is_dir():
            continue
        for pat, extra in (("hello", ()), ("HELLO", ("-i",)), ("file", ("-F",)), ("tool", ("-t", "tool_call")),
                           ("README|hello", ())):
            _same(env, home, pat, *extra)


def test_appends_rewrites_and_deletions_are_searched_as_the_scan_sees_them(tmp_path):
    (tmp_path / "userhome").mkdir()
    env = _env(tmp_path)
    home = tmp_path / "home"
    shutil.copytree(HOME, home, symlinks=False)
    _same(env, home, "zqxcanary")  # builds the index
    # hand-made edit (no client writes a chosen literal): a Codex CLI assistant message repeated
    # with the canary in its text and an id of its own, appended
    codex = sorted((home / ".codex").rglob("*.jsonl"))
    victim = next(p for p in codex if b"hello" in p.read_bytes())
    lines = victim.read_bytes().splitlines(keepends=True)
    line = next(x for x in reversed(lines) if b"hello" in x and b'"role":"assistant"' in x)
    with open(victim, "ab") as f:
        f.write(line.replace(b"hello", b"zqxcanary").replace(b'"id":"msg_', b'"id":"msgz_'))
    sm = _same(env, home, "zqxcanary")
    assert sm["hits"] >= 1 and sm["fulltext"]["candidates"] >= 1
    # Claude Code: the same on a transcript
    claude = sorted((home / ".claude" / "projects").rglob("*.jsonl"))
    cv = next(p for p in claude if b'"type":"user"' in p.read_bytes() and b"hello" in p.read_bytes())
    cl = next(x for x in cv.read_bytes().splitlines(keepends=True) if b"hello" in x and b'"type":"assistant"' in x)
    with open(cv, "ab") as f:
        f.write(cl.replace(b"hello", b"zqxcanary").replace(b'"uuid":"', b'"uuid":"f'))
    sm2 = _same(env, home, "zqxcanary")
    assert sm2["hits"] > sm["hits"]
    # rewritten: the canary taken out again (the file shrinks: a rewrite, not an append)
    victim.write_bytes(b"".join(lines))
    sm3 = _same(env, home, "zqxcanary")
    assert sm3["hits"] == sm2["hits"] - sm["hits"]
    # deleted
    cv.unlink()
    sm4 = _same(env, home, "zqxcanary")
    assert sm4["hits"] == 0


def test_the_literals_respect_case_alternation_and_what_re2_reads():
    assert literals(["hello"], False, False) == ["hello"]
    assert literals(["(?i)HeLLo"], False, False) == ["hello"]
    assert literals(["(?i)HELLO world"], False, False) == ["hello world"]  # no k/s: none here
    assert literals(["(?i)ask"], False, False) is None  # k and s fold with KELVIN SIGN and LONG S
    assert literals(["foo|barbaz"], False, False) == ["barbaz", "foo"]
    assert literals(["foo|x"], False, False) is None  # a branch without a literal: no literal
    assert literals(["^abc$"], False, False) == ["abc"]
    assert literals(["café au lait"], False, False) == ["café au lait"]
    assert literals(["(?i)café"], False, False) == ["caf"]  # ignoring case: ASCII only
    assert literals(["[[:alpha:]]ello"], False, False) is None  # RE2's POSIX class, not a literal `]`
    assert literals(["a.c"], False, False) is None
    assert literals(["a+b"], True, True) == ["a+b"]
    assert match_expr(["hello"]) == '("hel" AND "ell" AND "llo")'
    assert match_expr(['a"b']) == '("a""b")'


@pytest.mark.parametrize("pat", ["(?i)readme", "HELLO", "sample"])
def test_a_refused_index_directory_says_so_and_scans(tmp_path, pat):
    (tmp_path / "userhome").mkdir()
    env = _env(tmp_path)
    home = tmp_path / "home"
    shutil.copytree(HOME, home, symlinks=False)
    env["SESSIONSIFT_INDEX_DIR"] = str(home / ".codex" / "idx")  # inside a data root: refused
    base = _search(env, pat, "--home", str(home), "--no-index")
    got = _search(env, pat, "--home", str(home))
    assert got[1] == base[1] and got[0] == base[0]
    ft = got[2]["fulltext"]
    assert ft["used"] is False and "lies inside the data root" in ft["why_not"]
    assert not (home / ".codex" / "idx").exists()


def test_index_status_gives_its_size_and_clear_drops_its_units(tmp_path):
    (tmp_path / "userhome").mkdir()
    env = _env(tmp_path)
    _same(env, HOME, "hello")  # builds it
    run = lambda *a: subprocess.run([sys.executable, "-m", "sessionsift", "index", *a, "--home", str(HOME),  # noqa: E731
                                     "--format", "json"], capture_output=True, text=True, env=env, cwd=env["HOME"])
    st = [json.loads(x) for x in run("status").stdout.splitlines()][-1]["fulltext"]
    # opencode's and Crush's readers give no session size: the total is unknown, not a sum
    assert st["units"] == 70 and st["db_bytes"] > 0 and st["units_size_unknown"] > 0
    assert st["src_bytes"] is None and st["ratio"] is None
    cl = [json.loads(x) for x in run("clear").stdout.splitlines()][-1]
    assert cl["fulltext_units_dropped"] == 70
    sm = _same(env, HOME, "hello")  # indexed again as it searches
    assert sm["fulltext"]["built"] == 70 and sm["fulltext"]["fresh"] == 0


def test_a_spent_budget_defers_units_and_index_update_indexes_them(tmp_path):
    (tmp_path / "userhome").mkdir()
    env = _env(tmp_path)
    env["SESSIONSIFT_FULLTEXT_BUDGET"] = "0"  # the first unit's indexing spends it
    sm = _same(env, HOME, "hello")
    ft = sm["fulltext"]
    assert ft["used"] is True and ft["deferred"] > 0 and ft["built"] < 70
    assert ft["deferred"] <= ft["not_indexed"]
    r = subprocess.run([sys.executable, "-m", "sessionsift", "index", "update", "--home", str(HOME), "--format", "json"],
                       capture_output=True, text=True, env=env, cwd=env["HOME"])
    up = [json.loads(x) for x in r.stdout.splitlines()][-1]["fulltext"]
    assert up["used"] is True and up["built"] + up["fresh"] == 70
    sm = _same(env, HOME, "hello")
    assert sm["fulltext"]["deferred"] == 0 and sm["fulltext"]["built"] == 0


def test_a_session_of_unknown_size_is_stored_unknown_and_a_known_store_gives_its_ratio(tmp_path):
    """A session whose reader gives no size (opencode's database: SessionRef.size None) keeps
    src_bytes NULL in the full-text index, never 0; a store where every size is known gives the
    sum and the ratio."""
    import sqlite3

    (tmp_path / "userhome").mkdir()
    env = _env(tmp_path)
    _same(env, HOME, "hello")  # builds it
    db = next((tmp_path / "idx").rglob("text-*.sqlite"))
    con = sqlite3.connect(db)
    rows = con.execute("SELECT key, src_bytes FROM units").fetchall()
    con.close()
    oc = [b for k, b in rows if k.startswith("rec\0opencode\0")]
    assert oc and all(b is None for b in oc)
    assert all(b is not None and b > 0 for k, b in rows if k.startswith("lane\0"))
    env2 = _env(tmp_path / "other")
    (tmp_path / "other" / "userhome").mkdir(parents=True)
    claude = REPO / "examples" / "claude-home"
    r = subprocess.run([sys.executable, "-m", "sessionsift", "search", "hello", "--claude-home", str(claude),
                        "--format", "json"], capture_output=True, text=True, env=env2, cwd=env2["HOME"])
    assert r.returncode == 0, r.stderr[-2000:]
    r = subprocess.run([sys.executable, "-m", "sessionsift", "index", "status", "--claude-home", str(claude),
                        "--format", "json"], capture_output=True, text=True, env=env2, cwd=env2["HOME"])
    assert r.returncode == 0, r.stderr[-2000:]
    st = [json.loads(x) for x in r.stdout.splitlines()][-1]["fulltext"]
    assert st["units_size_unknown"] == 0 and st["src_bytes"] > 0
    assert st["ratio"] == round(st["db_bytes"] / st["src_bytes"], 4)


def _cli(env: dict, *args: str) -> tuple[int, list[dict]]:
    r = subprocess.run([sys.executable, "-m", "sessionsift", *args, "--format", "json"], capture_output=True, text=True,
                       env=env, cwd=env["HOME"])
    return r.returncode, [json.loads(x) for x in r.stdout.splitlines() if x.strip()]


@pytest.mark.parametrize("cmd", [["search", "", "-t", "user.message", "--count"], ["search", "x.*y", "-c"], ["stats"]])
def test_a_command_that_reads_every_record_leaves_the_full_text_index_warm(tmp_path, cmd):
    """A census, a search with no usable literal and `stats` read every record: after their answer
    the full-text index is brought up to date for them, so the next literal search reads it (no
    transcript or session indexed then); with --no-index none is written."""
    (tmp_path / "userhome").mkdir()
    env = _env(tmp_path)
    code, _rows = _cli(env, *cmd, "--home", str(HOME), "--no-index")
    assert code == 0 and _cli(env, *cmd, "--home", str(HOME), "--no-index")[0] == 0  # each answers (hits, a census)
    assert not list((tmp_path / "idx").rglob("text-*.sqlite"))  # --no-index: nothing written
    assert _cli(env, *cmd, "--home", str(HOME))[0] == code
    st = _cli(env, "index", "status", "--home", str(HOME))[1][-1]["fulltext"]
    assert st is not None and st["units"] == 70
    sm = _same(env, HOME, "hello")
    assert sm["fulltext"]["used"] is True and sm["fulltext"]["built"] == 0 and sm["fulltext"]["fresh"] == 70


def test_index_update_builds_the_ranked_index_too(tmp_path):
    (tmp_path / "userhome").mkdir()
    env = _env(tmp_path)
    code, rows = _cli(env, "index", "update", "--home", str(HOME))
    assert code == 0
    rk = rows[-1]["ranked"]
    assert rk["why_not"] is None and rk["sessions_read"] == rk["sessions"] + rk["child_sessions"] > 60
    assert rk["turns"] > 0 and rk["bytes"] > 0
    code, rows = _cli(env, "search", "--rank", "hello world", "--home", str(HOME))
    assert code == 0
    sm = rows[-1]
    assert sm["ranked_by"] == "index" and sm["sessions_read"] == 0
    code, rows = _cli(env, "index", "update", "--home", str(HOME))
    assert code == 0 and rows[-1]["ranked"]["sessions_read"] == 0
