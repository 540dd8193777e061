"""`audit reinjection` on HAND-MADE transcripts.

Why hand-made: the real client we can run offline (2.1.258, tests/test_audit_realclient.py) delivers
a shell-changed file ONCE and does not re-send it at later flushes, so the re-injection the seed
describes (the same entry re-sent byte-identical at every flush, growing when a second region
changes) cannot be produced with it. These records copy the real 2.1.258 shapes (attachment payload
exactly {type, filename, snippet}, FH-033; gutter `N\\t` lines, FH-034) and exercise the waste
arithmetic, growth, episodes, empty and truncated snippets and unreadable records.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from sessionsift.providers.claude.reinjection import audit_lane, reinjection
from sessionsift.providers.claude.discover import resolve_targets

SID = "11111111-2222-4333-8444-555555555555"
CWD = "/w"
A, B = "/w/a.txt", "/w/b.txt"


def snip(first: int, lines: list[str]) -> str:
    return "\n".join(f"{first + i}\t{t}" for i, t in enumerate(lines))


S1 = snip(1, [f"line{i:02d}" if i != 3 else "LINE03" for i in range(1, 12)])           # one region
S2 = S1 + "\n" + snip(20, [f"line{i:02d}" if i != 28 else "LINE28" for i in range(20, 31)])  # two regions
SB = snip(1, ["b-one", "B-TWO", "b-three"])


class T:
    """A transcript builder: every record is one line, numbered from 1."""

    def __init__(self):
        self.lines: list[str] = []
        self.n = 0

    def add(self, obj: dict | str) -> int:
        self.n += 1
        if isinstance(obj, str):
            self.lines.append(obj)
        else:
            obj.setdefault("uuid", f"u{self.n}")
            obj.setdefault("timestamp", f"2026-01-01T00:{self.n // 60:02d}:{self.n % 60:02d}.000Z")
            obj.setdefault("sessionId", SID)
            obj.setdefault("cwd", CWD)
            self.lines.append(json.dumps(obj))
        return self.n

    def prompt(self, text: str) -> int:
        return self.add({"type": "user", "message": {"role": "user", "content": text}})

    def eta(self, fn: str, snippet) -> int:
        return self.add({"type": "attachment", "attachment": {"type": "edited_text_file", "filename": fn,
                                                              "snippet": snippet}})

    def other_att(self) -> int:
        return self.add({"type": "attachment", "attachment": {"type": "total_tokens_reminder"}})

    def say(self, text: str) -> int:
        return self.add({"type": "assistant", "message": {"role": "assistant", "content": [
            {"type": "text", "text": text}]}})

    def call(self, tool: str, tid: str, path: str) -> int:
        return self.add({"type": "assistant", "message": {"role": "assistant", "content": [
            {"type": "tool_use", "id": tid, "name": tool, "input": {"file_path": path}}]}})

    def result(self, tid: str, error: bool = False) -> int:
        return self.add({"type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": tid, "content": "x", "is_error": error}]}})

    def write(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(self.lines) + "\n")
        return path


@pytest.fixture()
def seedlike(tmp_path):
    """The seed's sequence, hand-made: a.txt re-sent at every flush (growing once, left by an Edit that
    failed, then by one that worked, then re-entering), b.txt re-sent then blanked (empty snippet)."""
    t = T()
    L = {}
    t.prompt("P1")
    L["write"] = t.call("Write", "t1", A)
    t.result("t1")
    t.prompt("P2")
    L["a1"] = t.eta(A, S1)
    t.other_att()
    t.say("ok")
    t.prompt("P3")
    L["a2"] = t.eta(A, S1)
    L["b1"] = t.eta(B, SB)
    t.say("ok")
    t.prompt("P4")
    L["a3"] = t.eta(A, S2)
    L["b2"] = t.eta(B, SB)
    t.say("ok")
    t.prompt("P5")
    L["a4"] = t.eta(A, S2)
    t.other_att()
    L["b3"] = t.eta(B, "")
    L["edit_fail"] = t.call("Edit", "t2", A)
    L["edit_fail_res"] = t.result("t2", error=True)
    L["a5"] = t.eta(A, S2)
    L["edit"] = t.call("Edit", "t3", A)
    L["edit_res"] = t.result("t3")
    t.prompt("P6")
    L["a6"] = t.eta(A, S2)
    L["last"] = t.say("done")
    home = tmp_path / "home"
    t.write(home / "projects" / "-w" / f"{SID}.jsonl")
    return home, L


def _one_lane(home):
    res = reinjection(resolve_targets([], str(home)))
    assert len(res.with_deliveries) == 1
    return res.with_deliveries[0]


def test_waste_arithmetic_growth_and_episodes(seedlike):
    home, L = seedlike
    lr = _one_lane(home)
    files = {f.filename: f for f in lr.files}
    a, b = files[A], files[B]
    s1, s2, sb = (len(x.encode()) for x in (S1, S2, SB))
    assert a.lines == [L[k] for k in ("a1", "a2", "a3", "a4", "a5", "a6")]
    assert a.flushes == 6
    assert a.bytes_total == 2 * s1 + 4 * s2
    # repeats: a2 (=a1), a4 (=a3), a5 (=a4: the failed Edit does not end the episode); a6 follows a
    # successful Edit, so it starts a new episode and is not a repeat
    assert [d.repeat for d in a.deliveries] == [False, True, False, True, True, False]
    assert a.repeat_bytes == s1 + 2 * s2 and a.repeats == 3
    assert a.waste_share == round((s1 + 2 * s2) / (2 * s1 + 4 * s2), 4)
    assert a.grew is True and [d.grew for d in a.deliveries][2] is True
    assert [d.regions for d in a.deliveries] == [1, 1, 2, 2, 2, 2]
    assert a.episodes == 2 and [x.line for x in a.exits] == [L["edit"]]
    assert a.exits[0].result_line == L["edit_res"] and a.exits[0].is_error is False
    assert [w.line for w in a.writes] == [L["write"], L["edit_fail"], L["edit"]]
    assert a.left_by is None   # re-entered after the Edit and never left again
    assert b.lines == [L["b1"], L["b2"], L["b3"]]
    assert b.bytes_total == 2 * sb and b.repeat_bytes == sb
    assert [d.empty for d in b.deliveries] == [False, False, True] and b.grew is False
    # flushes: runs of attachment records; b3 shares a4's flush across a non-ETF attachment
    assert [f.line for f in lr.flushes] == [L[k] for k in ("a1", "a2", "a3", "a4", "a5", "a6")]
    assert [fn for fn, _ in lr.flushes[3].deliveries] == [A, B]
    assert lr.bytes_total == a.bytes_total + b.bytes_total
    assert lr.repeat_bytes == a.repeat_bytes + b.repeat_bytes
    assert lr.duplicated_share == round(lr.repeat_bytes / lr.bytes_total, 4)
    assert {f.filename for f in lr.pending} == {A, B} and lr.complete


def test_exit_after_last_delivery_is_left_by(tmp_path):
    t = T()
    t.prompt("P1")
    t.call("Write", "w1", A)
    t.result("w1")
    t.prompt("P2")
    d1 = t.eta(A, S1)
    t.say("x")
    t.prompt("P3")
    d2 = t.eta(A, S1)
    e = t.call("Edit", "e1", "a.txt")     # relative path: resolved against the record's cwd
    r = t.result("e1")
    t.prompt("P4")
    t.say("y")
    lr = audit_lane(_lane(t.write(tmp_path / "home" / "projects" / "-w" / f"{SID}.jsonl")))
    (a,) = lr.files
    assert a.lines == [d1, d2] and a.left_by is not None
    assert (a.left_by.line, a.left_by.tool, a.left_by.result_line) == (e, "Edit", r)
    assert a.repeat_bytes == len(S1.encode()) and a.waste_share == 0.5 and a.grew is False


def _lane(path: Path):
    from sessionsift.providers.claude.discover import Lane

    return Lane(path, SID, "main", "main")


def test_unreadable_records_are_reported_not_dropped(tmp_path):
    t = T()
    t.prompt("P1")
    ok = t.eta(A, S1)
    t.say("x")
    # a damaged record whose filename is still legible, and one with no filename at all
    bad = t.add('{"type":"attachment","attachment":{"type":"edited_text_file","filename":"/w/c.txt","snippet":"1\\tx')
    t.say("y")
    nofn = t.eta(None, "1\tz")
    t.say("z")
    trunc = t.eta(B, SB + "\n... [12 lines truncated] ...")
    t.say("w")
    home = tmp_path / "home"
    t.write(home / "projects" / "-w" / f"{SID}.jsonl")
    lr = _one_lane(home)
    files = {f.filename: f for f in lr.files}
    c = files["/w/c.txt"]
    assert c.unreadable_lines == [bad] and c.bytes_total is None and c.repeat_bytes is None
    assert c.waste_share is None and c.grew is None
    assert files[A].bytes_total == len(S1.encode()) and files[A].lines == [ok]
    assert files[B].deliveries[0].truncated_lines == 12
    assert lr.unreadable == [(nofn, "edited_text_file without a string filename")]
    assert lr.bytes_total is None and lr.duplicated_share is None and not lr.complete
    # CLI: exit 3 (answered, some inputs unreadable), the unknown stays null
    p = _cli(["audit", "reinjection", "--claude-home", str(home), "--format", "json"])
    assert p.returncode == 3, p.stderr
    rows = [json.loads(x) for x in p.stdout.splitlines()]
    summ = rows[-1]
    assert summ["bytes_total"] is None and summ["unreadable_records"] == 2
    un = [r for r in rows if r["kind"] == "unreadable"]
    assert [r["line"] for r in un] == [nofn] and un[0]["refetch"].endswith(f"--line {nofn} --claude-home {home}")
    crow = next(r for r in rows if r["kind"] == "reinjection" and r["filename"] == "/w/c.txt")
    assert crow["bytes_total"] is None and crow["unreadable_lines"] == [bad]
    assert crow["delivery"][0]["readable"] is False and crow["delivery"][0]["bytes"] is None


def _cli(args):
    return subprocess.run([sys.executable, "-m", "sessionsift", *args], capture_output=True, text=True, timeout=60)


def test_cli_json_rows_and_subagent_lane(seedlike):
    home, L = seedlike
    # a subagent lane of the same session with its own delivery
    t = T()
    t.prompt("SUB")
    sub_line = t.eta("/w/s.txt", SB)
    t.say("ok")
    t.write(home / "projects" / "-w" / SID / "subagents" / "agent-abc123.jsonl")
    p = _cli(["audit", "reinjection", "--claude-home", str(home), "--format", "json", "--flushes"])
    assert p.returncode == 0, p.stderr
    rows = [json.loads(x) for x in p.stdout.splitlines()]
    assert rows[0]["kind"] == "header" and rows[-1]["kind"] == "summary" and rows[0]["command"] == "audit"
    re_rows = [r for r in rows if r["kind"] == "reinjection"]
    a = next(r for r in re_rows if r["filename"] == A)
    assert a["lines"] == [L[k] for k in ("a1", "a2", "a3", "a4", "a5", "a6")]
    assert a["status"] == "pending" and a["left_by"] is None and a["episodes"] == 2
    assert a["exits"][0]["line"] == L["edit"] and a["exits"][0]["tool"] == "Edit"
    assert a["refetch"][0] == f"sessionsift show {SID} --line {L['a1']} --claude-home {home}"
    assert a["first_flush"]["utc"].endswith("Z") and a["grew"] is True
    assert a["session_id"] == SID and a["is_subagent"] is False and a["parent_session_id"] is None
    s = next(r for r in re_rows if r["filename"] == "/w/s.txt")
    assert s["is_subagent"] is True and s["parent_session_id"] == SID and s["lines"] == [sub_line]
    assert "agent-abc123.jsonl" in s["refetch"][0]
    flushes = [r for r in rows if r["kind"] == "flush"]
    assert len(flushes) == 7 and all(isinstance(r["refetch"], str) for r in flushes)
    summ = rows[-1]
    lanes = [r for r in rows if r["kind"] == "lane"]
    assert summ["bytes_total"] == sum(r["bytes_total"] for r in lanes)
    assert summ["repeat_bytes"] == sum(r["repeat_bytes"] for r in lanes)
    assert summ["deliveries"] == sum(r["deliveries"] for r in re_rows) == 10
    assert summ["pending_files"] == 3 and summ["invisible"]
    # the refetch commands work and show the delivery line
    show = _cli(a["refetch"][2].split()[1:] + ["--format", "json"])
    rec = [json.loads(x) for x in show.stdout.splitlines() if '"kind":"record"' in x][0]
    assert rec["line"] == L["a3"] and rec["record"]["attachment"]["snippet"] == S2
    # --min-flushes and --no-subagents
    p2 = _cli(["audit", "reinjection", "--claude-home", str(home), "--format", "json", "--min-flushes", "4",
               "--no-subagents"])
    assert [r["filename"] for r in map(json.loads, p2.stdout.splitlines()) if r["kind"] == "reinjection"] == [A]


def test_text_output_escapes_hostile_filenames(tmp_path):
    t = T()
    t.prompt("P")
    evil = "/w/ev\x1b[31mil\nFORGED.txt"
    t.eta(evil, "1\tx\x1b[0m")
    t.say("x")
    home = tmp_path / "home"
    t.write(home / "projects" / "-w" / f"{SID}.jsonl")
    p = _cli(["audit", "reinjection", "--claude-home", str(home)])
    assert p.returncode == 0, p.stderr
    assert "\x1b" not in p.stdout and "\nFORGED" not in p.stdout
    assert "ev\\e[31mil\\nFORGED.txt" in p.stdout
    assert "still pending at end of transcript" in p.stdout


def test_no_reinjection_exits_1_with_a_summary(tmp_path):
    t = T()
    t.prompt("P")
    t.say("x")
    home = tmp_path / "home"
    t.write(home / "projects" / "-w" / f"{SID}.jsonl")
    p = _cli(["audit", "reinjection", "--claude-home", str(home), "--format", "json"])
    assert p.returncode == 1
    rows = [json.loads(x) for x in p.stdout.splitlines()]
    assert [r["kind"] for r in rows] == ["header", "summary"]
    assert rows[-1]["files"] == 0 and rows[-1]["bytes_total"] == 0 and rows[-1]["duplicated_share"] is None


def test_unknown_audit_is_a_usage_error():
    p = _cli(["audit", "nonsense"])
    assert p.returncode == 2 and p.stderr.startswith("sessionsift: usage error: no such audit")


@pytest.mark.parametrize("block", [1, 3, 15, 16, 17, 64, 1 << 22])
def test_block_scan_finds_the_needle_across_block_seams(tmp_path, block):
    from sessionsift.providers.claude.reinjection import _mentions

    needle = b"edited_text_file"
    for pre in range(0, 40, 7):
        f = tmp_path / f"x{pre}"
        f.write_bytes(b"a" * pre + needle + b"b")
        assert _mentions(f, needle, block)
        f.write_bytes(b"a" * pre + needle[:-1] + b"b" + needle[1:])
        assert not _mentions(f, needle, block)
