"""`index status` for every agent: each session of an agent whose lane facts the index does not
hold gets a row with its state in the full-text index (fresh / changed / absent, with the records
it holds) and each agent a text line, where before it said only "not indexed" (the full-text index
holds every agent's records' text since a search builds it). Data: a copy of examples/home (every
agent's real-client samples); the changes made to it are an append to a real Codex CLI rollout
line and a pi session file copied under a new id (hand-made: no client writes a copy)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _run(*args: str) -> tuple[int, list[dict], str]:
    p = subprocess.run([sys.executable, "-m", "sessionsift", *args], capture_output=True, text=True,
                       env=dict(os.environ, NO_COLOR="1"), timeout=300)
    rows = [json.loads(x) for x in p.stdout.splitlines()] if "--format" in args else []
    return p.returncode, rows, p.stdout


def _status(home: Path) -> list[dict]:
    rc, rows, _ = _run("index", "status", "--home", str(home), "--format", "json")
    assert rc == 0
    return rows


def test_every_agents_sessions_have_their_full_text_state(tmp_path):
    home = tmp_path / "home"
    shutil.copytree(REPO / "examples" / "home", home, symlinks=False)
    before = _status(home)
    assert [r for r in before if r["kind"] == "session"] == [] and before[-1]["fulltext_sessions"] is None
    rc, listed, _ = _run("list", "--home", str(home), "--format", "json")
    assert rc == 0
    others = sorted((r["provider"], r["session_id"]) for r in listed
                    if r["kind"] == "session" and r["provider"] != "claude-code")
    assert len({p for p, _ in others}) == 8
    rc, _rows, _ = _run("search", "hello", "--home", str(home), "-c", "--format", "json")
    assert rc == 0
    rows = _status(home)
    sess = {(r["provider"], r["session_id"]): r for r in rows if r["kind"] == "session"}
    assert sorted(sess) == others
    assert {r["fulltext_state"] for r in sess.values()} == {"fresh"}
    assert all(isinstance(r["fulltext_records"], int) for r in sess.values())
    assert rows[-1]["fulltext_sessions"] == {"fresh": len(others), "changed": 0, "absent": 0}

    rollout = sorted((home / ".codex" / "sessions").rglob("rollout-*.jsonl"))[0]
    with open(rollout, "ab") as f:
        f.write(rollout.read_bytes().splitlines(keepends=True)[-1])
    pi = sorted((home / ".pi" / "agent" / "sessions").rglob("*.jsonl"))[0]
    old_id = json.loads(pi.read_text().splitlines()[0])["id"]
    new_id = "01a233fd-0000-7000-8000-000000000abc"
    (pi.parent / pi.name.replace(old_id, new_id)).write_text(pi.read_text().replace(old_id, new_id))
    rc, text_out = _run("index", "status", "--home", str(home))[0], _run("index", "status", "--home", str(home))[2]
    assert rc == 0
    rows = _status(home)
    sess = {(r["provider"], r["session_id"]): r for r in rows if r["kind"] == "session"}
    changed = [k for k, r in sess.items() if r["fulltext_state"] == "changed"]
    absent = [k for k, r in sess.items() if r["fulltext_state"] == "absent"]
    assert [p for p, _ in changed] == ["codex"] and absent == [("pi", new_id)]
    assert sess[("pi", new_id)]["fulltext_records"] is None
    assert rows[-1]["fulltext_sessions"] == {"fresh": len(others) - 1, "changed": 1, "absent": 1}
    lines = [ln for ln in text_out.splitlines() if ln.startswith(("Codex CLI:", "pi:"))]
    assert lines[0].startswith("Codex CLI: 6 sessions (+1 child): full-text index 6 fresh, 1 changed;"), lines
    assert lines[1].startswith("pi: 7 sessions: full-text index 6 fresh, 1 absent;"), lines
