"""Hostile file names through the whole clean lifecycle (scan -v, capture --apply, list, verify,
restore): each name prints as exactly ONE escaped line. The session is a copy of a real transcript
(examples/, Claude Code 2.1.258) renamed; a file named so can be written by any process running as
the user (no client names its files this way: that is the attack)."""
from __future__ import annotations

import json
import re
import shutil

from tests.clean_util import EX, cli

FB = "8414eb07-cca2-5cca-9059-e9baedac31e1"
# a newline followed by a plausible second row, ESC sequences, a carriage return, a bidi override
EVIL = (f"x\n{FB}  Claude Code  1.3 h  39.0 KiB  -tmp-y  [ELIGIBLE]\x1b[2J\x1b[31mred\rover\u202eW")
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\u2028\u2029]")


def test_hostile_names_print_as_one_escaped_line_each(tmp_path):
    home = tmp_path / "h"
    c = home / ".claude" / "projects" / "-tmp-evil"
    c.mkdir(parents=True)
    sid = f"{EVIL}"
    shutil.copy2(EX / "claude-home/projects/-tmp-ssift-rc-files-basic-work" / f"{FB}.jsonl", c / f"{sid}.jsonl")
    side = c / f"{sid}.precompact.json"  # a sibling the footprint takes with it
    side.write_text("{}")
    data = tmp_path / "d"
    common = ["--home", str(home), "--data-dir", str(data), "--older-than", "1m"]
    outs = {
        "scan": cli("clean", "scan", "-v", *common),
        "capture": cli("clean", "capture", "--apply", "--waive-kept", *common),
        "list": cli("clean", "list", "--data-dir", str(data)),
        "verify": cli("clean", "verify", "--data-dir", str(data)),
    }
    cap = [json.loads(l) for l in cli("clean", "list", "--data-dir", str(data), "--format", "json").stdout.splitlines()]
    (row,) = [r for r in cap if r["kind"] == "capture"]
    assert row["session_id"] == sid and row["status"] == "removed"
    assert not (c / f"{sid}.jsonl").exists() and not side.exists()
    outs["restore"] = cli("clean", "restore", row["capture_id"], "--data-dir", str(data))
    assert (c / f"{sid}.jsonl").is_file() and side.is_file()
    esc_sid = "x\\n" + FB
    for name, r in outs.items():
        assert r.returncode == 0, (name, r.returncode, r.stderr)
        for stream in (r.stdout, r.stderr):
            assert not RAW.findall(stream), (name, RAW.findall(stream)[:5])
            for line in stream.splitlines():
                # the forged second row never starts a line of its own
                assert not line.startswith(f"{FB}  Claude Code"), (name, line)
        if name == "verify":
            continue  # names no session unless a check fails
        lines = [l for l in r.stdout.splitlines() if esc_sid in l]
        assert lines, (name, r.stdout[-800:])
        for l in lines:  # the whole name, escaped, on that one line
            assert "[ELIGIBLE]\\e[2J\\e[31mred\\rover\\u202eW" in l, (name, l)
    # scan -v names the session once on its line and each footprint file once on its own line
    v = outs["scan"].stdout.splitlines()
    assert sum(1 for l in v if l.startswith(esc_sid)) == 1
    assert sum(1 for l in v if l.strip().startswith("file: ") and esc_sid in l) == 2
    # restore prints one line per restored top-level entry
    assert sum(1 for l in outs["restore"].stdout.splitlines() if l.startswith("restored ")) == 2
