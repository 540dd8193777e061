"""recover's replay rules (providers/claude/files/replay.py), step by step: what each event does
to the rebuilt file and what the step says about it (kind, what, line, instant, turn, segment,
known/total pieces, the patch, the tool call).

First on REAL transcripts, unchanged: examples/claude-home (files_basic, interactive: Claude Code
2.1.258 offline) and examples/captured/reply-before-prompt (a real rewind with 'Restore code').
The expected values are read from those records here (the result record's line and instant, the
client's own originalFile / Read echo for the content), not from the replay.

Then on sessions made of the real files_basic records' envelopes (`Real` below: the prompt, the
tool_use and tool_result records copied, their ids, inputs, results and instants replaced) for
the shapes no transcript in examples/ holds: windowed and token-capped Reads, edits placed by
their structuredPatch, rejected or unanswered calls, shell deletes, moves, touches, heredocs and
shell reads, stale hints, checkpoints. Each test says why it is made rather than captured."""
from __future__ import annotations

import copy
import difflib
import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest

from sessionsift.files.shell import GRAMMAR
from sessionsift.providers.claude.discover import resolve_targets, sanitize
from sessionsift.providers.claude.files import replay as _R
from sessionsift.providers.fileevents import Cutoff, Unk, render_text
from sessionsift.timefmt import parse_ts

REPO = Path(__file__).resolve().parents[1]
CH = REPO / "examples" / "claude-home"
GT = json.loads((REPO / "examples" / "ground-truth" / "files_basic.json").read_text())
FB = CH / "projects" / "-tmp-ssift-rc-files-basic-work" / "8414eb07-cca2-5cca-9059-e9baedac31e1.jsonl"
WORK = GT["cwd"]
HELLO, NOTES, SEED = f"{WORK}/hello.py", f"{WORK}/notes.md", f"{WORK}/seed.txt"
CAP = REPO / "examples" / "captured" / "reply-before-prompt"
CAP_WORK = "/var/tmp/lead-rr/robust-rc0/robust_rewind_fork/work"
CAP_SID = "43d862be-7c57-5677-87e1-3657469384d9"


def recover(home: Path, path: str, at=None):
    return _R.recover(resolve_targets([], home), path, at, grammar=GRAMMAR)


def records(p: Path) -> list[dict]:
    return [json.loads(ln) for ln in p.read_text().splitlines()]


def result_of(recs: list[dict], tool_use_id: str) -> tuple[int, dict]:
    """(1-based line, record) of the tool_result answering `tool_use_id`."""
    for i, r in enumerate(recs, 1):
        c = (r.get("message") or {}).get("content")
        if r.get("type") == "user" and isinstance(c, list) and any(
                isinstance(b, dict) and b.get("tool_use_id") == tool_use_id for b in c):
            return i, r
    raise AssertionError(tool_use_id)


def uses(recs: list[dict], name: str, path: str) -> list[dict]:
    out = []
    for r in recs:
        for b in (r.get("message") or {}).get("content") or []:
            if isinstance(b, dict) and b.get("type") == "tool_use" and b["name"] == name \
                    and b["input"].get("file_path") == path:
                out.append(b)
    return out


def diff(a: str, b: str, path: str) -> list[str]:
    return list(difflib.unified_diff(a.splitlines(keepends=True), b.splitlines(keepends=True),
                                     fromfile=f"a{path}", tofile=f"b{path}", n=3))


def row(s) -> tuple:
    return (s.seq, s.kind, s.what, s.line, s.timestamp, s.turn, s.segment, s.known, s.total, s.complete,
            s.tool_use_id)


# -- real transcripts --------------------------------------------------------------------------

def test_real_write_edit_read_edit_then_a_script_run_step_by_step():
    recs = records(FB)
    w = uses(recs, "Write", HELLO)[0]
    e1, e2 = uses(recs, "Edit", HELLO)
    rd = uses(recs, "Read", HELLO)[0]
    lw, rw = result_of(recs, w["id"])
    le1, re1 = result_of(recs, e1["id"])
    lr, rr = result_of(recs, rd["id"])
    le2, re2 = result_of(recs, e2["id"])
    bash = next(b for r in recs for b in (r.get("message") or {}).get("content") or []
                if isinstance(b, dict) and b.get("name") == "Bash")
    lb, rb = result_of(recs, bash["id"])
    after1 = re2["toolUseResult"]["originalFile"]  # the client's own view after edit 1 (= the Read's)
    assert after1 == rr["toolUseResult"]["file"]["content"]
    final = after1.replace(e2["input"]["old_string"], e2["input"]["new_string"], 1)
    content = w["input"]["content"]
    n = lambda t: len(t.split("\n"))  # noqa: E731

    r = recover(CH, HELLO)
    assert [row(s) for s in r.steps] == [
        (0, "anchor", "write", lw, rw["timestamp"], 1, 0, n(content), n(content), True, w["id"]),
        (1, "transform", "edit", le1, re1["timestamp"], 1, 0, n(after1), n(after1), True, e1["id"]),
        (2, "anchor", "read", lr, rr["timestamp"], 2, 0, n(after1), n(after1), True, rd["id"]),
        (3, "transform", "edit", le2, re2["timestamp"], 2, 0, n(final), n(final), True, e2["id"]),
        (4, "risk", "possible-write", lb, rb["timestamp"], 3, 0, n(final), n(final), True, bash["id"]),
    ]
    assert [s.detail for s in r.steps] == [
        f"create: {len(content)} chars", "1 replacement(s) applied to the complete text",
        f"whole file, {rr['toolUseResult']['file']['totalLines']} pieces",
        "1 replacement(s) applied to the complete text", "class marker interp:python: mutates files it does not name"]
    assert [s.patch for s in r.steps] == [None, diff(content, after1, HELLO), None, diff(after1, final, HELLO), None]
    for s in r.steps:
        assert (s.lane, s.lane_path, s.session_id, s.is_subagent) == ("main", str(FB), FB.stem, False)
    assert r.text() == final
    assert hashlib.sha256(final.encode()).hexdigest() == GT["disk_files"][HELLO]["sha256"]
    assert (r.status, r.exists, r.boundaries, r.shell_writes) == ("complete_at_risk", True, 0, 0)
    assert r.risks_since_anchor == [r.steps[4]]
    assert r.transcripts == len(list((CH / "projects").rglob("*.jsonl")))

    # --at: a main-transcript line, a turn, an instant (the step AT that instant is in)
    assert recover(CH, HELLO, Cutoff(line=le1)).text() == after1
    assert [s.seq for s in recover(CH, HELLO, Cutoff(line=le1 - 1)).steps] == [0]
    assert recover(CH, HELLO, Cutoff(turn=1)).text() == after1
    assert recover(CH, HELLO, Cutoff(turn=2)).status == "complete"
    t_e1 = parse_ts(re1["timestamp"]).timestamp()
    assert [s.what for s in recover(CH, HELLO, Cutoff(instant=t_e1)).steps] == ["write", "edit"]
    assert [s.what for s in recover(CH, HELLO, Cutoff(instant=t_e1 - 0.001)).steps] == ["write"]


def test_real_edited_text_file_is_a_boundary_keeping_the_snippet_then_an_edit_anchors_again():
    recs = records(FB)
    la, ra = next((i, r) for i, r in enumerate(recs, 1)
                  if (r.get("attachment") or {}).get("type") == "edited_text_file")
    snippet = ra["attachment"]["snippet"]
    lines = [ln.split("\t", 1)[1] for ln in snippet.split("\n")]
    e = uses(recs, "Edit", NOTES)[0]
    le, re_ = result_of(recs, e["id"])
    orig = re_["toolUseResult"]["originalFile"]
    assert e["input"]["replace_all"] is True and orig.count(e["input"]["old_string"]) == 2
    final = orig.replace(e["input"]["old_string"], e["input"]["new_string"])

    r = recover(CH, NOTES)
    assert [(s.kind, s.what, s.line, s.segment, s.known, s.total, s.complete) for s in r.steps[1:3]] == [
        ("boundary", "edited_text_file", la, 1, len(lines), None, False),
        ("transform", "edit", le, 1, len(final.split("\n")), len(final.split("\n")), True)]
    assert r.steps[1].detail == f"changed outside the session; snippet keeps {len(lines)} line(s)"
    assert r.steps[1].tool_use_id is None and r.steps[1].timestamp == ra["timestamp"]
    assert r.steps[2].patch == diff(orig, final, NOTES)
    assert r.text() == final and r.boundaries == 1
    # the harness then ran `sed -i s/again/AGAIN/` outside the session (no trace: FH-013), so the
    # disk differs from the replay by exactly that
    harness = final.replace("again", "AGAIN")
    assert hashlib.sha256(harness.encode()).hexdigest() == GT["disk_files"][NOTES]["sha256"]

    at = recover(CH, NOTES, Cutoff(line=la))
    assert at.status == "partial" and at.exists is True
    cause = f"external edit (edited_text_file at L{la}): beyond the snippet"
    assert at.state == lines + [Unk(cause, True)]
    assert at.ranges() == [{"kind": "known", "start": 1, "end": len(lines), "lines": len(lines), "cause": None},
                           {"kind": "gap", "start": len(lines) + 1, "end": None, "lines": None, "cause": cause}]
    assert render_text(at) == "\n".join(lines) + f"\n⟪gap: unknown number of lines - {cause}⟫"


def test_real_harness_file_attachment_and_a_read_anchor_the_whole_file():
    home = CH
    r = recover(home, "/tmp/ssift-rc/interactive/work/app.py")
    assert [(s.kind, s.what) for s in r.steps] == [
        ("risk", "possible-write"), ("anchor", "write"), ("boundary", "edited_text_file"), ("transform", "edit"),
        ("anchor", "read"), ("anchor", "harness-read")]
    # a risk before the file was first seen knows nothing of it; the replay is complete after
    assert (r.steps[0].known, r.steps[0].total, r.steps[0].complete) == (None, None, False)
    assert r.steps[5].detail == "whole file, 2 pieces" and r.steps[5].tool_use_id is None
    assert r.status == "complete" and r.risks_since_anchor == []
    assert r.text() == "APP_MODE = 'fast'\n"


def _captured(tmp_path: Path) -> Path:
    home = tmp_path / "cap"
    shutil.copytree(CAP, home)
    return home


def test_real_rewind_restore_code_puts_a_back_and_removes_b(tmp_path):
    home = _captured(tmp_path)
    main = home / "projects" / sanitize(CAP_WORK) / f"{CAP_SID}.jsonl"
    recs = records(main)
    ls_, snap = next((i, r) for i, r in reversed(list(enumerate(recs, 1))) if r.get("type") == "file-history-snapshot")
    backups = {f"{v['realParentDir']}/{k}": v for k, v in snap["snapshot"]["trackedFileBackups"].items()}
    a, b = f"{CAP_WORK}/a.txt", f"{CAP_WORK}/b.txt"

    ra = recover(home, a)
    assert [(s.kind, s.what) for s in ra.steps] == [
        ("anchor", "write"), ("transform", "edit"), ("risk", "rewound-write"), ("boundary", "edited_text_file"),
        ("boundary", "checkpoint-restore")]
    rw = ra.steps[2]
    assert (rw.line, rw.tool_use_id) == (ra.steps[1].line, ra.steps[1].tool_use_id)
    assert rw.detail == ("this change lies on a branch the conversation was rewound past: if the rewind chose "
                         "'Restore code', the client undid it")
    last = ra.steps[4]
    ba = backups[a]
    name = f"{ba['backupFileName']} (version {ba['version']})"
    assert (last.line, last.timestamp, last.segment, last.known, last.total) == (
        ls_, snap["snapshot"]["timestamp"], 2, 0, None)
    # the capture kept no file-history store: the backup is not on disk, the content a gap
    assert last.detail.startswith(f"the snapshot at L{ls_} ({snap['snapshot']['timestamp']}) still names backup "
                                  f"{name} of {ba['backupTime']}, made before the last change")
    assert last.detail.endswith("its content is unknown: the backup is not on disk (No such file or directory: "
                                "the client prunes its store)")
    assert (ra.status, ra.exists, ra.boundaries) == ("none", None, 2)
    assert ra.state == [Unk(f"put back to file-history backup {name} at L{ls_}; not on disk (No such file or "
                            "directory: the client prunes its store)", True)]

    rb = recover(home, b)
    assert [(s.kind, s.what) for s in rb.steps] == [("anchor", "write"), ("risk", "rewound-write"),
                                                   ("boundary", "checkpoint-absent")]
    assert backups[b]["backupFileName"] is None
    assert rb.steps[2].detail == (
        f"the file-history checkpoint at L{ls_} ({backups[b]['backupTime']}) holds no backup of it: the file did "
        "not exist then (deleted outside the transcript's view, or removed by a rewind that restored the code)")
    assert (rb.status, rb.exists, rb.state, rb.steps[2].total, rb.steps[2].complete) == ("deleted", False, [], 0, True)


def _put_blob(home: Path, name: str, data: bytes, when: str, skew: float = 0.0) -> Path:
    blob = home / "file-history" / CAP_SID / name
    blob.parent.mkdir(parents=True, exist_ok=True)
    blob.write_bytes(data)
    t = parse_ts(when).timestamp() + skew
    os.utime(blob, (t, t))
    return blob


def test_real_rewind_with_its_backup_on_disk_rebuilds_the_backups_content(tmp_path):
    # the capture kept no file-history/ store; the client writes the backup of a.txt's first
    # version there at backupTime (FH-025): put back here with the content the session's Write wrote
    home = _captured(tmp_path)
    main = home / "projects" / sanitize(CAP_WORK) / f"{CAP_SID}.jsonl"
    recs = records(main)
    snap = [r for r in recs if r.get("type") == "file-history-snapshot"][-1]["snapshot"]
    a = f"{CAP_WORK}/a.txt"
    ba = snap["trackedFileBackups"]["a.txt"]  # keyed relative to realParentDir
    first = uses(recs, "Write", a)[0]["input"]["content"]
    _put_blob(home, ba["backupFileName"], first.encode(), ba["backupTime"])
    r = recover(home, a)
    last = r.steps[-1]
    assert (last.kind, last.what, last.complete, last.known) == ("anchor", "checkpoint-restore", True,
                                                                  len(first.split("\n")))
    assert last.detail.endswith(f"content from file-history/{CAP_SID}/{ba['backupFileName']}: {len(first)} bytes")
    assert last.patch is None  # the state before it was a gap: no diff to show
    assert (r.status, r.exists, r.text()) == ("complete", True, first)

    # a blob of another generation (its mtime is not the recorded backupTime) is not that backup
    _put_blob(home, ba["backupFileName"], b"other\n", ba["backupTime"], skew=60)
    r = recover(home, a)
    assert r.steps[-1].kind == "boundary" and r.status == "none"
    assert r.steps[-1].detail.endswith("its content is unknown: the backup is the blob on disk is of another "
                                       "generation (its mtime is not the recorded backupTime)")


# -- sessions of real envelopes for shapes examples/ does not hold -----------------------------

SID = "22222222-2222-4222-8222-222222222222"
F = f"{WORK}/f.txt"


class Real:
    """A transcript made of files_basic's real records: its prompt (L3), a tool_use record (L9)
    and its tool_result record (L11) copied per call, ids, inputs and results replaced; instants
    one second apart from the real prompt's."""

    def __init__(self):
        recs = records(FB)
        self.t_use, self.t_res = recs[8], recs[10]
        self.recs = [copy.deepcopy(recs[2])]
        self.recs[0]["sessionId"] = SID
        self.t0 = parse_ts(self.recs[0]["timestamp"]).timestamp()

    def _stamp(self, r: dict) -> dict:
        prev = self.recs[-1]
        r["parentUuid"], r["uuid"], r["sessionId"] = prev["uuid"], f"{len(self.recs):08d}-0000-4000-8000-000000000000", SID
        import datetime as _dt
        r["timestamp"] = _dt.datetime.fromtimestamp(self.t0 + len(self.recs), _dt.timezone.utc).strftime(
            "%Y-%m-%dT%H:%M:%S.000Z")
        self.recs.append(r)
        return r

    def call(self, name: str, inp: dict, echo=None, text: str = "ok", is_error: bool | None = False,
             answered: bool = True) -> int:
        """Returns the result record's line (the use's when unanswered)."""
        tid = f"toolu_{len(self.recs):04d}"
        u = copy.deepcopy(self.t_use)
        u["message"]["content"] = [{"type": "tool_use", "id": tid, "name": name, "input": inp}]
        u["message"]["id"] = f"msg_{len(self.recs):04d}"
        self._stamp(u)
        if not answered:
            return len(self.recs)
        res = copy.deepcopy(self.t_res)
        blk = {"tool_use_id": tid, "type": "tool_result", "content": text}
        if is_error is not None:
            blk["is_error"] = is_error
        res["message"]["content"] = [blk]
        res.pop("toolUseResult", None)
        if echo is not None:
            res["toolUseResult"] = echo
        res["sourceToolAssistantUUID"] = u["uuid"]
        self._stamp(res)
        return len(self.recs)

    def bash(self, command: str, stdout: str = "", **echo) -> int:
        return self.call("Bash", {"command": command, "description": "x"},
                         {"stdout": stdout, "stderr": "", "interrupted": False, "isImage": False,
                          "noOutputExpected": False, **echo}, text=stdout or "(Bash completed with no output)")

    def write_(self, content: str) -> int:
        return self.call("Write", {"file_path": F, "content": content},
                         {"type": "create", "filePath": F, "content": content, "structuredPatch": [],
                          "originalFile": None, "userModified": False})

    def read(self, content: str, start: int = 1, num: int | None = None, total: int | None = None,
             **extra) -> int:
        n = len(content.split("\n"))
        return self.call("Read", {"file_path": F}, {"type": "text", "file": {
            "filePath": F, "content": content, "numLines": num if num is not None else n, "startLine": start,
            "totalLines": total if total is not None else n, **extra}})

    def edit(self, old: str, new: str, hunks: list, orig=None, name: str = "Edit", edits=None, **extra) -> int:
        inp = {"file_path": F, "old_string": old, "new_string": new, "replace_all": False}
        if edits is not None:
            inp = {"file_path": F, "edits": edits}
        return self.call(name, inp, {"filePath": F, "oldString": old, "newString": new, "originalFile": orig,
                                     "structuredPatch": hunks, "userModified": False, "replaceAll": False,
                                     **extra})

    def raw(self, r: dict) -> int:
        self.recs.append(r)
        return len(self.recs)

    def home(self, tmp_path: Path) -> Path:
        d = tmp_path / "h" / "projects" / sanitize(WORK)
        d.mkdir(parents=True, exist_ok=True)
        (d / f"{SID}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in self.recs))
        return tmp_path / "h"


def kinds(r) -> list[tuple[str, str]]:
    return [(s.kind, s.what) for s in r.steps]


def test_a_windowed_read_keeps_its_lines_and_names_the_rest_a_gap(tmp_path):
    # Read with offset/limit: no offline scenario in examples/ reads a window
    s = Real()
    ln = s.read("beta\ngamma", start=2, num=2, total=4)
    r = recover(s.home(tmp_path), F)
    cause = f"outside the windowed read at L{ln}"
    assert r.state == [Unk(cause), "beta", "gamma", Unk(cause)]
    assert r.steps[0].detail == "lines 2-3 of 4" and r.steps[0].kind == "anchor"
    assert (r.steps[0].known, r.steps[0].total, r.status) == (2, 4, "partial")


def test_a_second_window_fills_the_first_ones_gaps_when_they_agree(tmp_path):
    s = Real()
    s.read("beta", start=2, num=1, total=3)
    s.read("alpha", start=1, num=1, total=3)
    ln = s.read("gamma", start=3, num=1, total=3)
    r = recover(s.home(tmp_path), F)
    assert r.state == ["alpha", "beta", "gamma"] and r.status == "complete"
    # the content holds more lines than numLines says: only numLines are taken
    s = Real()
    ln = s.read("a\nb\nc", start=2, num=1, total=5)
    r = recover(s.home(tmp_path / "2"), F)
    assert r.state == [Unk(f"outside the windowed read at L{ln}"), "a"] + [Unk(f"outside the windowed read at L{ln}")] * 3


def test_a_window_that_disagrees_with_what_was_known_drops_it(tmp_path):
    s = Real()
    s.write_("a\nb\nc")
    ln = s.read("B", start=2, num=1, total=3)
    r = recover(s.home(tmp_path), F)
    cause = f"outside the windowed read at L{ln}"
    assert r.state == [Unk(cause), "B", Unk(cause)]
    # a window whose total differs from the known length is no extension of it either
    s = Real()
    s.write_("a\nb\nc")
    ln = s.read("b", start=2, num=1, total=4)
    r = recover(s.home(tmp_path / "2"), F)
    assert r.state == [Unk(f"outside the windowed read at L{ln}"), "b"] + [Unk(f"outside the windowed read at L{ln}")] * 2


def test_a_token_capped_read_is_a_window_and_a_one_line_file_cut_by_it_gives_nothing(tmp_path):
    # truncatedByTokenCap needs a file larger than the model's token budget: not in examples/
    s = Real()
    ln = s.read("a\nb", num=2, total=5, truncatedByTokenCap=True)
    r = recover(s.home(tmp_path), F)
    cause = f"outside the token-cap-truncated read at L{ln}"
    assert r.state == ["a", "b", Unk(cause), Unk(cause), Unk(cause)]
    assert r.steps[0].detail == "lines 1-2 of 5 (truncatedByTokenCap)"
    s = Real()
    ln = s.read("abc", num=1, total=1, truncatedByTokenCap=True)
    r = recover(s.home(tmp_path / "2"), F)
    assert r.state == [Unk(f"outside the token-cap-truncated read at L{ln}")] and r.status == "none"
    assert r.steps[0].detail == "lines 1-0 of 1 (truncatedByTokenCap)"
    # the same whole-looking read with truncatedByTokenCap false is a whole file
    s = Real()
    s.read("abc", num=1, total=1, truncatedByTokenCap=False)
    assert recover(s.home(tmp_path / "3"), F).text() == "abc"


def test_a_whole_read_that_differs_from_the_reconstruction_says_so_with_its_patch(tmp_path):
    # an external change the transcript does not show, then a Read: the harness in examples/
    # always announces its changes (edited_text_file)
    s = Real()
    s.write_("a\nb\n")
    s.read("a\nB\n")
    s.read("a\nB\n")
    r = recover(s.home(tmp_path), F)
    assert r.steps[1].detail == "whole file, 3 pieces - differs from the reconstruction (an unseen change)"
    assert r.steps[1].patch == diff("a\nb\n", "a\nB\n", F)
    assert (r.steps[2].detail, r.steps[2].patch) == ("whole file, 3 pieces", None)
    assert r.text() == "a\nB\n" and r.boundaries == 0


def test_an_edit_with_no_pre_image_on_a_window_is_placed_by_its_hunks(tmp_path):
    # the real hunk of files_basic L20 (hello.py's first edit), on a window of its line 2
    recs = records(FB)
    hunk = result_of(recs, uses(recs, "Edit", HELLO)[0]["id"])[1]["toolUseResult"]["structuredPatch"]
    s = Real()
    s.read("    return 'hello'", start=2, num=1, total=3)
    le = s.edit("'hello'", "'hello, world'", hunk)
    r = recover(s.home(tmp_path), F)
    assert kinds(r) == [("anchor", "read"), ("transform", "edit")]
    assert r.state[:3] == ["def hello():", "    return 'hello, world'", Unk(f"outside the windowed read at L{le - 2}")]
    assert r.steps[1].detail == "1 hunk(s) placed by line number"
    assert r.steps[1].patch == [f"--- a{F}\n", f"+++ b{F}\n", "@@ -1,2 +1,2 @@\n", " def hello():\n",
                                "-    return 'hello'\n", "+    return 'hello, world'\n"]


def test_a_hunk_whose_context_disagrees_is_a_conflict_and_still_placed(tmp_path):
    s = Real()
    s.read("x", start=1, num=1, total=3)
    s.edit("q", "Q", [{"oldStart": 1, "oldLines": 2, "newStart": 1, "newLines": 2, "lines": [" y", "-q", "+Q"]}])
    r = recover(s.home(tmp_path), F)
    assert kinds(r) == [("anchor", "read"), ("annotation", "conflict"), ("transform", "edit")]
    assert r.state[:2] == ["y", "Q"]
    # hunks in order shift the later ones by the lines the earlier added
    s = Real()
    s.read("a\nb\nc\nd", start=1, num=4, total=6)
    s.edit("b", "B", [{"oldStart": 2, "oldLines": 1, "newStart": 2, "newLines": 2, "lines": ["-b", "+B", "+B2"]},
                      {"oldStart": 4, "oldLines": 1, "newStart": 5, "newLines": 1, "lines": ["-d", "+D"]}])
    r = recover(s.home(tmp_path / "2"), F)
    assert r.state[:5] == ["a", "B", "B2", "c", "D"] and len(r.state) == 7
    assert kinds(r)[1:] == [("transform", "edit")] and r.steps[1].detail == "2 hunk(s) placed by line number"


def test_no_newline_markers_in_a_hunk(tmp_path):
    s = Real()
    s.read("a\nb", start=1, num=2, total=2)  # a file without a final newline, read whole
    s.edit("zz", "c", [{"oldStart": 2, "oldLines": 1, "newStart": 2, "newLines": 1,
                       "lines": ["-b", "\\ No newline at end of file", "+c"]}])
    r = recover(s.home(tmp_path), F)
    assert r.state == ["a", "c", ""]  # the edit added the final newline


def test_a_hunk_past_an_unknown_number_of_lines_loses_the_numbering(tmp_path):
    s = Real()
    s.bash("cat f.txt", stdout="x\ny")  # cat: leading/trailing unknown counts
    le = s.edit("y", "Y", [{"oldStart": 2, "oldLines": 1, "newStart": 2, "newLines": 1, "lines": ["-y", "+Y"]}],
                orig="")
    r = recover(s.home(tmp_path), F)
    assert r.state == [Unk(f"edit at L{le} landed where the line numbering is unknown", True)]
    s = Real()
    s.read("a", start=1, num=1, total=1)
    le = s.edit("zz", "b", ["not a hunk"])
    assert recover(s.home(tmp_path / "2"), F).state == [Unk(f"unreadable structuredPatch at L{le}", True)]


def test_an_edit_that_cannot_be_placed_is_a_boundary(tmp_path):
    s = Real()
    s.write_("a\n")
    le = s.edit("zzz", "y", [])
    r = recover(s.home(tmp_path), F)
    assert kinds(r)[-1] == ("boundary", "edit") and r.steps[-1].detail == "edit could not be placed"
    assert r.state == [Unk(f"Edit at L{le} could not be placed (no usable patch)", True)]


def test_multiedit_applies_each_replacement_in_turn_and_empty_old_creates(tmp_path):
    # MultiEdit is no longer offered by 2.1.258; older transcripts hold it
    s = Real()
    s.write_("a b a\n")
    s.edit("", "", [], name="MultiEdit", edits=[{"old_string": "a", "new_string": "x"},
                                               {"old_string": "b", "new_string": "y", "replace_all": True}])
    r = recover(s.home(tmp_path), F)
    assert r.text() == "x y a\n" and kinds(r)[-1] == ("transform", "multiedit")
    assert r.steps[-1].detail == "2 replacement(s) applied to the complete text"
    s = Real()
    s.write_("")
    s.edit("", "new\n", [])
    assert recover(s.home(tmp_path / "2"), F).text() == "new\n"


def test_an_edit_whose_pre_image_differs_is_a_rebase_and_stale_recovered_is_said(tmp_path):
    s = Real()
    s.write_("a\n")
    s.edit("b", "c", [], orig="b\n")
    s.edit("c", "d", [], orig=None, staleRecovered=True)
    r = recover(s.home(tmp_path), F)
    assert kinds(r) == [("anchor", "write"), ("annotation", "rebase"), ("transform", "edit"),
                        ("annotation", "stale-recovered"), ("boundary", "edit")]
    assert r.steps[1].detail == ("the edit's originalFile differs from the reconstruction: an unseen change "
                                 "happened before this edit")
    # staleRecovered without a pre-image: the rest of the file is unknown
    assert r.status == "none"


def test_a_rejected_call_changes_nothing_and_an_unanswered_one_makes_the_file_unknown(tmp_path):
    s = Real()
    s.write_("a\n")
    s.call("Edit", {"file_path": F, "old_string": "q", "new_string": "r"}, "Error: String to replace not found",
           text="<tool_use_error>String to replace not found in file.</tool_use_error>", is_error=True)
    r = recover(s.home(tmp_path), F)
    assert kinds(r)[-1] == ("noop", "rejected") and r.text() == "a\n"
    assert r.steps[-1].detail == "Edit failed: <tool_use_error>String to replace not found in file.</tool_use_error>"
    s.call("Write", {"file_path": F, "content": "b\n"}, answered=False)
    r = recover(s.home(tmp_path), F)
    ln = len(s.recs)
    assert kinds(r)[-1] == ("risk", "no-result")
    assert r.steps[-1].detail == "Write has no recorded result (interrupted?); it may have applied"
    assert r.state == [Unk(f"Write at L{ln} has no recorded result", True)]


def test_a_modified_since_read_rejection_from_the_echo_string(tmp_path):
    # the client's refusal (an mtime race between Read and Write) cannot be timed in the harness
    s = Real()
    s.write_("a\n")
    ln = s.call("Write", {"file_path": F, "content": "b\n"}, "Error: File has been modified since read, either by "
                "the user or by a linter. Read it again before attempting to write it.", text="", is_error=True)
    r = recover(s.home(tmp_path), F)
    assert kinds(r)[-1] == ("boundary", "modified-since-read") and r.exists is None
    assert r.steps[-1].detail == "the client refused the write: the file changed on disk since the last Read"
    assert r.state == [Unk(f"modified since read (rejection at L{ln})", True)]


def test_write_without_content_and_notebook_edit(tmp_path):
    s = Real()
    ln = s.call("Write", {"file_path": F}, {"type": "update", "filePath": F})
    r = recover(s.home(tmp_path), F)
    assert kinds(r) == [("boundary", "write")] and r.state == [Unk(f"Write at L{ln} carries no content", True)]
    s = Real()
    s.call("Write", {"file_path": F}, {"type": "update", "filePath": F, "content": "from echo\n"})
    r = recover(s.home(tmp_path / "2"), F)
    assert r.text() == "from echo\n" and r.steps[0].detail == "update: 10 chars"
    s = Real()
    s.call("NotebookEdit", {"notebook_path": F, "cell_id": "c1", "new_source": "x = 1"}, {"updated_file": "{}\n"})
    s.call("NotebookEdit", {"notebook_path": F, "cell_id": "c1", "new_source": "x = 1"}, {"new_source": "x"})
    r = recover(s.home(tmp_path / "3"), F)
    assert kinds(r) == [("anchor", "notebook-edit"), ("boundary", "notebook-edit")] and r.status == "none"


def test_shell_delete_move_touch_and_opaque_write(tmp_path):
    s = Real()
    s.write_("a\n")
    s.bash("rm f.txt")
    r = recover(s.home(tmp_path), F)
    assert kinds(r)[-1] == ("boundary", "delete") and (r.status, r.exists, r.state) == ("deleted", False, [])
    s.bash("touch f.txt")
    r = recover(s.home(tmp_path), F)
    assert kinds(r)[-1] == ("noop", "touch") and (r.state, r.exists) == (None, None)
    s = Real()
    s.write_("a\n")
    s.bash("mv f.txt g.txt")
    assert kinds(recover(s.home(tmp_path / "2"), F))[-1] == ("boundary", "delete")
    s = Real()
    s.write_("a\n")
    s.bash("touch f.txt")
    r = recover(s.home(tmp_path / "3"), F)
    assert r.text() == "a\n" and r.steps[-1].detail.startswith("touch (")
    s = Real()
    s.write_("a\n")
    ln = s.bash("echo x > f.txt")
    r = recover(s.home(tmp_path / "4"), F)
    assert kinds(r)[-1] == ("boundary", "shell-write") and r.shell_writes == 1 and r.exists is None
    assert r.state == [Unk(f"shell write by `>` at L{ln} (cwd-joined): opaque", True)]
    assert r.steps[-1].segment == 1 and r.steps[-1].detail == "> write (cwd-joined, operand 'f.txt')"


def test_a_shell_write_after_a_delete_is_no_longer_deleted(tmp_path):
    # `rm f; echo x > f`: the file exists again with content the transcript does not show (before:
    # the replay's exists stayed False and recover said 'deleted', exit 8)
    s = Real()
    s.write_("a\n")
    s.bash("rm f.txt")
    s.bash("echo x > f.txt")
    r = recover(s.home(tmp_path), F)
    assert kinds(r) == [("anchor", "write"), ("boundary", "delete"), ("boundary", "shell-write")]
    assert (r.status, r.exists, r.recorded) == ("none", None, True)


def test_a_quoted_heredoc_writes_then_appends_and_an_interrupted_one_is_opaque(tmp_path):
    s = Real()
    s.write_("old\n")
    s.bash("cat > f.txt <<'EOF'\nl1\nEOF")
    s.bash("cat >> f.txt <<'EOF'\nl2\nEOF")
    r = recover(s.home(tmp_path), F)
    assert kinds(r) == [("anchor", "write"), ("anchor", "heredoc-write"), ("transform", "heredoc-append")]
    assert r.text() == "l1\nl2\n" and r.steps[1].patch == diff("old\n", "l1\n", F)
    s = Real()
    s.bash("cat > f.txt <<'EOF'\nl1\nEOF", interrupted=True)
    r = recover(s.home(tmp_path / "2"), F)
    assert kinds(r) == [("boundary", "shell-write")]


def test_shell_reads_cat_confirms_and_sed_windows(tmp_path):
    s = Real()
    s.write_("a\nb\n")
    s.bash("cat f.txt", stdout="a\nb")
    r = recover(s.home(tmp_path), F)
    assert r.steps[-1].detail == "cat output confirms the reconstruction" and r.text() == "a\nb\n"
    s = Real()
    ln = s.bash("cat f.txt", stdout="a\nb")
    r = recover(s.home(tmp_path / "2"), F)
    cause = f"not visible in the `cat` output at L{ln} (the Bash tool trims stdout)"
    assert r.state == [Unk("leading blank lines, if any: " + cause, True), "a", "b",
                       Unk("trailing newline / blank lines: " + cause, True)]
    assert r.steps[-1].detail == "cat: 2 lines (ends unknown)" and r.steps[-1].kind == "anchor"
    s = Real()
    s.write_("a\nb\nc\n")
    s.bash("sed -n '2,3p' f.txt", stdout="b\nc")
    r = recover(s.home(tmp_path / "3"), F)
    assert r.text() == "a\nb\nc\n" and r.steps[-1].detail.endswith(": lines 2-3")
    s = Real()
    s.bash("cat f.txt", stdout="")
    assert kinds(recover(s.home(tmp_path / "4"), F)) == [("noop", "shell-read")]
    s = Real()
    s.bash("cat f.txt", stdout="a", backgroundTaskId="b1")
    assert recover(s.home(tmp_path / "5"), F).state is None


def test_a_stale_hint_naming_more_files_is_a_risk_for_every_file(tmp_path):
    # hand-made: needs a formatter run the offline sandbox does not carry
    s = Real()
    s.write_("a\n")
    s.bash("npx prettier --write .", staleReadFileStateHint="[3 files modified on disk since it was read: "
           "other.txt, more.txt, and 1 more. Call Read before editing.]")
    r = recover(s.home(tmp_path), F)
    assert ("risk", "possible-write") in kinds(r) and r.steps[-1].detail == (
        "staleReadFileStateHint names more files than it lists")
    assert r.status == "complete_at_risk"


def test_events_of_other_files_and_unresolved_operands(tmp_path):
    s = Real()
    s.write_("a\n")
    s.call("Write", {"file_path": f"{WORK}/other.txt", "content": "x"}, {"type": "create"})
    s.bash('rm "$X"')
    r = recover(s.home(tmp_path), F)
    assert kinds(r) == [("anchor", "write"), ("risk", "possible-write")]
    assert r.steps[1].detail.startswith("rm delete of unresolved operand ")
    # a directory removed around the file removes it
    s.bash(f"rm -rf {WORK}")
    assert recover(s.home(tmp_path), F).status == "deleted"
    # a file no event names: nothing recorded, the unresolved risks dropped
    r = recover(s.home(tmp_path), "/elsewhere/never.txt")
    assert (r.state, r.steps, r.recorded) == (None, [], False)


def test_a_checkpoint_that_agrees_keeps_the_reconstruction(tmp_path):
    s = Real()
    s.write_("mine\n")
    t = s.recs[-1]["timestamp"]
    h = "abcdef0123456789"
    s.raw({"type": "file-history-snapshot", "messageId": "m", "isSnapshotUpdate": False,
           "snapshot": {"messageId": "m", "timestamp": t, "trackedFileBackups": {
               F: {"backupFileName": f"{h}@v1", "version": 1, "backupTime": t}}}})
    home = s.home(tmp_path)
    blob = home / "file-history" / SID / f"{h}@v1"
    blob.parent.mkdir(parents=True)
    blob.write_text("mine\n")
    tt = parse_ts(t).timestamp()
    os.utime(blob, (tt, tt))
    r = recover(home, F)
    assert kinds(r) == [("anchor", "write")] and r.text() == "mine\n"
    blob.write_text("theirs\n")
    os.utime(blob, (tt, tt))
    r = recover(home, F)
    assert kinds(r)[-1] == ("boundary", "checkpoint-rebase") and r.exists is None and r.status == "none"
    # a blob of another generation says nothing
    os.utime(blob, (tt + 60, tt + 60))
    assert kinds(recover(home, F)) == [("anchor", "write")]


@pytest.mark.parametrize("typ", ["image", "pdf", "notebook"])
def test_a_read_without_text_content(tmp_path, typ):
    s = Real()
    ln = s.call("Read", {"file_path": F}, {"type": typ, "file": {"base64": "AA=="}})
    r = recover(s.home(tmp_path), F)
    assert kinds(r) == [("noop", "read")] and r.steps[0].detail == f"{typ} Read: no text content"
    assert r.state == [Unk(f"only a {typ} Read (L{ln}): no text content in the transcript", True)]


def test_file_unchanged_and_the_rendered_read_text(tmp_path):
    s = Real()
    s.write_("a\n")
    s.call("Read", {"file_path": F}, {"type": "file_unchanged", "file": {"filePath": F}})
    r = recover(s.home(tmp_path), F)
    assert kinds(r)[-1] == ("noop", "read") and r.text() == "a\n"
    # no echo (a workflow lane): the gutter-rendered text is read
    s = Real()
    s.call("Read", {"file_path": F}, None, text="1\tx\n2\ty")
    r = recover(s.home(tmp_path / "2"), F)
    assert r.text() == "x\ny" and r.steps[0].detail.startswith("whole file from the rendered Read text")
    s = Real()
    ln = s.call("Read", {"file_path": F, "offset": 3}, None, text="3\tx\n4\ty")
    r = recover(s.home(tmp_path / "3"), F)
    cause = f"outside the gutter-rendered Read at L{ln} (no echo)"
    assert r.state == [Unk(cause), Unk(cause), "x", "y", Unk(cause, True)]
    assert r.steps[0].detail == "rendered lines 3-4 (no echo; total unknown)"


def _blob(home: Path, name: str, text: str, when: str) -> None:
    blob = home / "file-history" / SID / name
    blob.parent.mkdir(parents=True, exist_ok=True)
    blob.write_text(text)
    t = parse_ts(when).timestamp()
    os.utime(blob, (t, t))


def test_a_snapshot_entry_without_realparentdir_is_joined_to_the_lanes_cwd(tmp_path):
    # FH-002: older builds key trackedFileBackups by a name relative to the cwd and write no
    # realParentDir (2.1.258 writes it: examples/captured); no pinned client writes the old form
    s = Real()
    s.write_("mine\n")
    t = s.recs[-1]["timestamp"]
    s.raw({"type": "file-history-snapshot", "messageId": "m", "isSnapshotUpdate": False,
           "snapshot": {"messageId": "m", "timestamp": t, "trackedFileBackups": {
               "f.txt": {"backupFileName": "0123456789abcdef@v1", "version": 1, "backupTime": t}}}})
    home = s.home(tmp_path)
    _blob(home, "0123456789abcdef@v1", "theirs\n", t)
    r = recover(home, F)
    assert kinds(r) == [("anchor", "write"), ("boundary", "checkpoint-rebase")]
    assert r.state == [Unk(f"file-history checkpoint 0123456789abcdef@v1 (L{len(s.recs)}) disagrees", True)]


def test_a_file_history_delta_line_is_a_checkpoint_of_its_tracking_path(tmp_path):
    # FH-004: a file-history-delta names one file (trackingPath) and its backup, with its own
    # timestamp; the real corpus's delta lines name no file this replay rebuilds with a blob
    s = Real()
    s.write_("mine\n")
    t = s.recs[-1]["timestamp"]
    s.raw({"type": "file-history-delta", "trackingPath": F, "timestamp": t,
           "backup": {"backupFileName": "fedcba9876543210@v2", "version": 2, "backupTime": t}})
    home = s.home(tmp_path)
    _blob(home, "fedcba9876543210@v2", "mine\n", t)
    assert kinds(recover(home, F)) == [("anchor", "write")]  # agrees: kept
    _blob(home, "fedcba9876543210@v2", "theirs\n", t)
    r = recover(home, F)
    assert kinds(r) == [("anchor", "write"), ("boundary", "checkpoint-rebase")]
    assert (r.steps[1].line, r.steps[1].timestamp) == (len(s.recs), t)


# -- whole replays for the rules the mutation run found unheld (benchmarks/README.md, mutation) ---

def _iso(t: float) -> str:
    import datetime as _dt
    return _dt.datetime.fromtimestamp(t, _dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def test_real_read_cut_before_its_result_keeps_what_was_known(tmp_path):
    """files_basic cut right after the Read of hello.py was asked for (a crash before the client
    wrote its result: the real records up to the tool_use, unchanged). A Read with no result
    changes nothing: the write and the edit stand, the step says it has no result (before, a
    replay that made the file unknown on an unanswered Read passed every test)."""
    recs = records(FB)
    w, (e1, _) = uses(recs, "Write", HELLO)[0], uses(recs, "Edit", HELLO)
    rd = uses(recs, "Read", HELLO)[0]
    lu = next(i for i, r in enumerate(recs, 1) if any(
        isinstance(b, dict) and b.get("id") == rd["id"] for b in (r.get("message") or {}).get("content") or []))
    lw, rw = result_of(recs, w["id"])
    le1, re1 = result_of(recs, e1["id"])
    content = w["input"]["content"]
    after1 = content.replace(e1["input"]["old_string"], e1["input"]["new_string"], 1)
    d = tmp_path / "h" / "projects" / FB.parent.name
    d.mkdir(parents=True)
    (d / FB.name).write_text("".join(ln + "\n" for ln in FB.read_text().splitlines()[:lu]))
    r = recover(tmp_path / "h", HELLO)
    n = len(content.split("\n"))
    assert [(row(s), s.detail, s.patch) for s in r.steps] == [
        ((0, "anchor", "write", lw, rw["timestamp"], 1, 0, n, n, True, w["id"]), f"create: {len(content)} chars",
         None),
        ((1, "transform", "edit", le1, re1["timestamp"], 1, 0, n, n, True, e1["id"]),
         "1 replacement(s) applied to the complete text", diff(content, after1, HELLO)),
        ((2, "risk", "no-result", lu, recs[lu - 1]["timestamp"], 2, 0, n, n, True, rd["id"]),
         "Read has no recorded result (interrupted?); it may have applied", None)]
    assert (r.path, r.status, r.exists, r.text(), r.risks_since_anchor) == (
        HELLO, "complete_at_risk", True, after1, [r.steps[2]])


def test_a_write_over_a_known_file_is_an_anchor_with_the_patch_from_what_was_known(tmp_path):
    # no offline scenario in examples/ Writes over a file it already knows (every Write there
    # creates): Real envelopes, the second Write's echo in the client's "update" shape
    s = Real()
    s.write_("a\nb\n")
    ln = s.call("Write", {"file_path": F, "content": "a\nB\nc\n"},
                {"type": "update", "filePath": F, "content": "a\nB\nc\n", "structuredPatch": [],
                 "originalFile": "a\nb\n", "userModified": False})
    r = recover(s.home(tmp_path), F)
    assert [(s_.kind, s_.what, s_.line, s_.detail, s_.patch) for s_ in r.steps] == [
        ("anchor", "write", ln - 2, "create: 4 chars", None),
        ("anchor", "write", ln, "update: 6 chars", diff("a\nb\n", "a\nB\nc\n", F))]
    assert (r.status, r.text()) == ("complete", "a\nB\nc\n")


def test_restore_code_over_a_complete_reconstruction_anchors_with_the_patch_back(tmp_path):
    # the captured rewind (examples/captured) reaches its restore through an edited_text_file
    # boundary, so the state before it is partial and no patch is shown; here (Real envelopes) the
    # reconstruction is complete when a later snapshot still names the backup of version 1
    s = Real()
    lw = s.write_("v1\n")
    t1 = s.recs[-1]["timestamp"]
    s.edit("v1", "v2", [], orig="v1\n")
    snap_t = _iso(parse_ts(s.recs[-1]["timestamp"]).timestamp() + 5)
    h = "0011223344556677"
    ls_ = s.raw({"type": "file-history-snapshot", "messageId": "m", "isSnapshotUpdate": False,
                 "snapshot": {"messageId": "m", "timestamp": snap_t, "trackedFileBackups": {
                     F: {"backupFileName": f"{h}@v1", "version": 1, "backupTime": t1}}}})
    home = s.home(tmp_path)
    _blob(home, f"{h}@v1", "v1\n", t1)
    r = recover(home, F)
    said = (f"the snapshot at L{ls_} ({snap_t}) still names backup {h}@v1 (version 1) of {t1}, made before the "
            "last change: the client found the file equal to it, so the changes since were undone (a rewind's "
            "'Restore code')")
    assert [(s_.kind, s_.what, s_.line, s_.timestamp, s_.detail, s_.patch) for s_ in r.steps][2:] == [
        ("anchor", "checkpoint-restore", ls_, snap_t, f"{said}; content from file-history/{SID}/{h}@v1: 3 bytes",
         diff("v2\n", "v1\n", F))]
    assert kinds(r)[:2] == [("anchor", "write"), ("transform", "edit")] and r.steps[0].line == lw
    assert (r.status, r.exists, r.text(), r.boundaries) == ("complete", True, "v1\n", 0)


def test_a_snapshot_naming_no_backup_at_the_changes_own_instant_says_nothing(tmp_path):
    # FH-003: a snapshot entry with no backup taken after the last change says the file did not
    # exist; one stamped at that change's own instant is not after it (the rule's boundary, and
    # restore's: a backup proves an undo only when strictly before the change). Real envelopes:
    # no transcript in examples/ stamps the two alike
    def run(dt: float, where: Path):
        s = Real()
        s.write_("mine\n")
        t = s.recs[-1]["timestamp"]
        bt = _iso(parse_ts(t).timestamp() + dt)
        ls_ = s.raw({"type": "file-history-snapshot", "messageId": "m", "isSnapshotUpdate": False,
                     "snapshot": {"messageId": "m", "timestamp": _iso(parse_ts(t).timestamp() + 2),
                                  "trackedFileBackups": {F: {"backupFileName": None, "version": 1,
                                                             "backupTime": bt}}}})
        return recover(s.home(where), F), ls_, bt
    r, _, _ = run(0, tmp_path / "same")
    assert (kinds(r), r.status, r.exists, r.text()) == ([("anchor", "write")], "complete", True, "mine\n")
    r, ls_, bt = run(1, tmp_path / "after")
    assert [(s_.kind, s_.what, s_.line, s_.detail) for s_ in r.steps][1:] == [
        ("boundary", "checkpoint-absent", ls_, f"the file-history checkpoint at L{ls_} ({bt}) holds no backup of it: "
         "the file did not exist then (deleted outside the transcript's view, or removed by a rewind that restored "
         "the code)")]
    assert (r.status, r.exists, r.state) == ("deleted", False, [])
