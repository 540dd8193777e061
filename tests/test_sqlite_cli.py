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
    assert set(gt) <= set(oc) and len(oc) == 6
    for sid, t in gt.items():
        assert oc[sid]["project"] == t["cwd"]
        assert oc[sid]["first_prompt"] == f'"{t["prompts"][0]["text"]}"'  # stored quoted (client quirk)
    child = [x for x in oc.values() if x["parent_session_id"]]
    assert len(child) == 1 and child[0]["parent_session_id"] in gt
    cr = [x for x in sess if x["provider"] == "crush"]
    cgt = json.loads((EXAMPLES / "crush-ground-truth.json").read_text())
    assert {x["session_id"] for x in cr} == set(cgt["sessions"])
    assert (_cov(rows, "opencode")["state"], _cov(rows, "opencode")["sessions"]) == ("ok", 6)
    assert _cov(rows, "crush")["sessions"] == 8 and "moved corpus" in _cov(rows, "crush")["reason"]
    text = ssift("list", "--home", str(EXAMPLES / "home"), "--provider", "opencode", "--provider", "crush").stdout
    assert text.rstrip().splitlines()[-1].endswith("opencode 6 sessions · Crush 8")


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
    assert r.returncode != 0  # something in scope could not be read
    human = ssift("list", "--home", str(tmp_path)).stdout.rstrip().splitlines()[-1]
    assert "opencode unreadable" in human or "opencode unknown" in human
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
