"""opencode and Crush through the commands (the CLI over the providers layer), on the committed
samples (examples/home links examples/opencode-home and examples/crush-home) and on broken copies."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from tests.conftest import EXAMPLES, REPO


def ssift(*args, home=None):
    env = dict(os.environ)
    r = subprocess.run([sys.executable, "-m", "sessionsift", *args], capture_output=True, text=True, cwd=REPO, env=env)
    return r


def jsonl(out: str) -> list[dict]:
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def _cov(rows, name):
    return next(c for c in rows[-1]["coverage"] if c["provider"] == name)


def test_list_shows_both_with_computed_coverage():
    r = ssift("list", "--home", str(EXAMPLES / "home"), "--provider", "opencode", "--provider", "crush",
              "--format", "json")
    assert r.returncode == 0, r.stderr
    rows = jsonl(r.stdout)
    sess = [x for x in rows if x["kind"] == "session"]
    gt = {json.loads(f.read_text())["session_ids_from_client_events"][0]: json.loads(f.read_text())
          for f in (EXAMPLES / "opencode-ground-truth").glob("*.json")}
    oc = {x["session_id"]: x for x in sess if x["provider"] == "opencode"}
    n = len(gt) + 1  # every scenario's session and the subagent's child
    assert set(gt) <= set(oc) and len(oc) == n
    for sid, t in gt.items():
        assert oc[sid]["project"] == t["cwd"]
        assert oc[sid]["first_prompt"] == f'"{t["prompts"][0]["text"]}"'  # stored quoted (client quirk)
    child = [x for x in oc.values() if x["parent_session_id"]]
    assert len(child) == 1 and child[0]["parent_session_id"] in gt
    cr = [x for x in sess if x["provider"] == "crush"]
    cgt = json.loads((EXAMPLES / "crush-ground-truth.json").read_text())
    assert {x["session_id"] for x in cr} == set(cgt["sessions"])
    oc_cov, cr_cov = _cov(rows, "opencode"), _cov(rows, "crush")  # top-level sessions, subagents apart
    assert (oc_cov["state"], oc_cov["sessions"], oc_cov["subagents"]) == ("ok", n - 1, 1)
    cr_kids = sum(1 for t in cgt["sessions"].values() if t["parent"] is not None and t["scenario"] != "title")
    cr_title = sum(1 for t in cgt["sessions"].values() if t["scenario"] == "title")  # a helper, not a subagent
    assert (cr_cov["sessions"], cr_cov["subagents"], cr_cov["helper_sessions"]) == (
        len(cgt["sessions"]) - cr_kids - cr_title, cr_kids, cr_title) and cr_kids and cr_title
    assert "moved corpus" in cr_cov["reason"]
    text = ssift("list", "--home", str(EXAMPLES / "home"), "--provider", "opencode", "--provider", "crush").stdout
    assert (f"opencode {n - 1} sessions (+1 subagent) · Crush {len(cgt['sessions']) - cr_kids - cr_title} "
            f"(+{cr_kids} subagent, +{cr_title} helper session) · pi not looked") in text.rstrip().splitlines()[-1]


@pytest.mark.parametrize("damage", ["corrupt", "unknown_schema"])
def test_list_reports_a_broken_database_as_null_with_reason(tmp_path, damage):
    d = tmp_path / ".local" / "share" / "opencode"
    d.mkdir(parents=True)
    db = d / "opencode.db"
    shutil.copy2(EXAMPLES / "opencode-home" / "opencode.db", db)
    if damage == "corrupt":
        db.write_bytes(db.read_bytes()[:1000])
    else:
        import sqlite3
        con = sqlite3.connect(db)
        con.execute("ALTER TABLE part RENAME TO part_v9")
        con.commit()
        con.close()
    r = ssift("list", "--home", str(tmp_path), "--format", "json")
    rows = jsonl(r.stdout)
    cov = _cov(rows, "opencode")
    assert cov["sessions"] is None
    assert cov["state"] == ("unreadable" if damage == "corrupt" else "unknown_format")
    assert ("corrupt" if damage == "corrupt" else "missing table part") in cov["reason"]
    assert r.returncode == 3  # answered, but something in scope could not be read
    human = ssift("list", "--home", str(tmp_path)).stdout.rstrip().splitlines()[-1]
    assert ("opencode unreadable" if damage == "corrupt" else "opencode unknown") in human, human
    assert "opencode 0" not in human


def test_hostile_title_prints_escaped(tmp_path):
    d = tmp_path / ".local" / "share" / "opencode"
    d.mkdir(parents=True)
    db = d / "opencode.db"
    shutil.copy2(EXAMPLES / "opencode-home" / "opencode.db", db)
    import sqlite3
    con = sqlite3.connect(db)
    con.execute("UPDATE session SET title = 'evil\x1b[2J\x07\r\nline\u202e'")
    con.commit()
    con.close()
    out = ssift("list", "--home", str(tmp_path)).stdout
    assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out
    assert not any(line.startswith("line") for line in out.splitlines())


def _oc_truths():
    return [json.loads(f.read_text()) for f in sorted((EXAMPLES / "opencode-ground-truth").glob("*.json"))]


def test_stats_counts_equal_the_ground_truth():
    home = str(EXAMPLES / "home")
    rows = jsonl(ssift("stats", "--home", home, "--provider", "opencode", "--format", "json").stdout)
    by_sid = {r["session_id"]: r for r in rows if r["kind"] == "session"}
    for t in _oc_truths():
        main = t["session_ids_from_client_events"][0]
        s = by_sid[main]
        assert s["prompts"] == len(t["prompts"])
        calls = [c for c in t["tool_calls"] if c["conversation"].startswith("P")]
        want: dict[str, int] = {}
        for c in calls:
            want[c["name"]] = want.get(c["name"], 0) + 1
        assert s["tool_calls"] == want
        failing = sum(1 for c in calls if c.get("expect_exit"))
        assert sum(s["tool_errors"].values()) == failing
    rows = jsonl(ssift("stats", "--home", home, "--provider", "crush", "--format", "json").stdout)
    cgt = json.loads((EXAMPLES / "crush-ground-truth.json").read_text())["sessions"]
    for r in (x for x in rows if x["kind"] == "session"):
        assert r["prompts"] == len(cgt[r["session_id"]]["prompts"])


def test_files_lists_every_recorded_change_with_content():
    home = str(EXAMPLES / "home")
    rows = jsonl(ssift("files", "--home", home, "--provider", "opencode", "--provider", "crush",
                       "--format", "json").stdout)
    files = {r["file"]: r for r in rows if r["kind"] == "file"}
    for t in _oc_truths():
        for c in t["tool_calls"]:
            if c["name"] in ("write", "edit"):
                assert c["input"]["filePath"] in files
    cgt = json.loads((EXAMPLES / "crush-ground-truth.json").read_text())["sessions"]
    crush_paths = {p for s in cgt.values() for p in s["files"]}
    assert crush_paths <= set(files)
    for p in crush_paths:
        assert all(t["has_new_content"] for t in files[p]["touches"])


def test_search_and_show_round_trip_by_locator():
    home = str(EXAMPLES / "home")
    rows = jsonl(ssift("search", "exit 3", "--home", home, "--provider", "opencode", "--provider", "crush",
                       "--format", "json").stdout)
    hits = [r for r in rows if r["kind"] in ("hit", "record", "match")]
    provs = {h["provider"] for h in hits}
    assert provs == {"opencode", "crush"}, rows[-1]
    for h in hits:
        r = subprocess.run(h["refetch"].replace("sessionsift", f"{sys.executable} -m sessionsift", 1) + " --format json",
                           shell=True, capture_output=True, text=True, cwd=REPO)
        again = [x for x in jsonl(r.stdout) if x["kind"] == "record"]
        # the refetch names the row: it gives back that record (and the other half of the same
        # row, for a tool part: part:<id> and part:<id>#output)
        assert h["locator"] in [x["locator"] for x in again], (h["refetch"], r.stderr)
        assert {x["locator"].split("#")[0] for x in again} == {h["locator"].split("#")[0]}


def test_stats_says_crush_tokens_are_unknown_never_an_empty_sum():
    """Crush records no per-message usage (docs/providers.md): its sessions' token sums are null
    with the reason, never `{}` (which reads as "no tokens"); opencode's, which it records, stay
    numbers. (The Crush sample is built by Crush's own migrations and queries: it cannot run here.)"""
    home = str(EXAMPLES / "home")
    p = ssift("stats", "--home", home, "--provider", "crush", "--provider", "opencode", "--format", "json")
    rows = jsonl(p.stdout)
    sess = [r for r in rows if r["kind"] == "session"]
    crush = [r for r in sess if r["provider"] == "crush" and r["kinds"].get("message")]
    assert crush and all(r["tokens_by_model"] is None and "no per-message usage" in r["tokens_unknown"] for r in crush)
    oc = [r for r in sess if r["provider"] == "opencode" and r["kinds"].get("message")]
    assert oc and all(r["tokens_by_model"] for r in oc)
    shared = rows[-1]["shared"]
    assert shared["tokens_unknown_sessions"] == len(crush) and shared["tokens_by_model"]
    rows = jsonl(ssift("stats", "--home", home, "--provider", "crush", "--format", "json").stdout)
    assert rows[-1]["shared"]["tokens_by_model"] is None
    short = ssift("stats", "--home", home, "--provider", "crush").stdout  # the short answer: unknown, not 0
    assert f"tokens unknown in {len(crush)} sessions (left out of the sums)" in short, short
    text = ssift("stats", "--home", home, "--provider", "crush", "--verbose").stdout  # the full census says why
    assert "tokens unknown: Crush keeps no per-message usage" in text
    assert " 1 prompts" not in text and " 1 tool calls" not in text and ", 1 prompt, " in text


def test_counts_of_one_read_in_the_singular():
    home = str(EXAMPLES / "home")
    text = ssift("search", "-F", "[failing_command P1] Run the check", "--home", home, "--provider", "codex").stdout
    assert "1 hit in 1 of 7 sessions of Codex CLI" in text, text
    text = ssift("files", "--home", home, "--provider", "crush", "592afbcf").stdout
    assert "1 recorded change of 1 file in 3 sessions of Crush" in text, text
    text = ssift("stats", "a09a50a1", "--claude-home", str(EXAMPLES / "claude-home"), "--verbose").stdout
    assert " main: 20 lines, 1 turn, 0 compactions, " in text, text
    text = ssift("files", "a09a50a1", "--claude-home", str(EXAMPLES / "claude-home"), "--by", "timeline").stdout
    assert " in 1 transcript" in text and " in 1 transcripts" not in text, text
