"""recover / plan / image on HAND-MADE records, for shapes the real client cannot be made to
produce offline in our harness (each test says which). Real-client coverage lives in
tests/test_files_realclient.py."""
from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path

import pytest

from sessionsift.providers.claude.discover import resolve_targets, sanitize
from sessionsift.errors import UsageError
from sessionsift.files import image as image_q
from sessionsift.files.shell import GRAMMAR
from sessionsift.providers.claude.files import backups as _B, image as image_mod, plan as plan_mod, replay as _R
from sessionsift.providers.fileevents import Cutoff


def recover(scope, path, at=None):
    """Claude Code's replay of a file (providers/claude/files), Bash read by the shell grammar."""
    return _R.recover(scope, path, at, grammar=GRAMMAR)


def list_backups(scope, path):
    return _B.list_backups(scope, path, grammar=GRAMMAR)

SID = "11111111-1111-4111-8111-111111111111"
CWD = "/proj"
F = "/proj/f.txt"


class T:
    def __init__(self):
        self.recs = []
        self.n = 0

    def _base(self, typ, **kw):
        self.n += 1
        r = {"type": typ, "uuid": f"u{self.n}", "parentUuid": f"u{self.n - 1}" if self.n > 1 else None,
             "timestamp": f"2026-01-01T00:00:{self.n:02d}.000Z", "cwd": CWD, "sessionId": SID}
        r.update(kw)
        self.recs.append(r)
        return r

    def user(self, text):
        self._base("user", message={"role": "user", "content": text})

    def call(self, name, inp, result_text, echo=None, is_error=False, tid=None):
        tid = tid or f"toolu_{self.n}"
        self._base("assistant", message={"role": "assistant", "id": f"m{self.n}", "content": [
            {"type": "tool_use", "id": tid, "name": name, "input": inp}]})
        r = self._base("user", message={"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": tid, "content": result_text, "is_error": is_error}]})
        if echo is not None:
            r["toolUseResult"] = echo

    def attach(self, payload):
        self._base("attachment", attachment=payload)

    def raw(self, obj):
        self.recs.append(obj)

    def write(self, home: Path) -> Path:
        d = home / "projects" / sanitize(CWD)
        d.mkdir(parents=True, exist_ok=True)
        (d / f"{SID}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in self.recs))
        return home


def read_echo(content, start=1, num=None, total=None):
    n = len(content.split("\n"))
    return {"type": "text", "file": {"filePath": F, "content": content, "startLine": start,
                                      "numLines": num if num is not None else n, "totalLines": total or n}}


def scope(home):
    return resolve_targets([], home)


def test_modified_since_read_rejection_is_a_hard_boundary(tmp_path):
    # hand-made: the harness cannot time an mtime race between Read and Write reliably
    t = T()
    t.user("go")
    t.call("Read", {"file_path": F}, "1\ta\n2\t", read_echo("a\n"))
    t.call("Write", {"file_path": F, "content": "b\n"},
           "<tool_use_error>File has been modified since read, either by the user or by a linter. Read it again "
           "before attempting to write it.</tool_use_error>", "Error: File has been modified since read", True)
    r = recover(scope(t.write(tmp_path)), F)
    assert r.status == "none" and r.boundaries == 1
    assert [s.what for s in r.steps] == ["read", "modified-since-read"]
    at = recover(scope(tmp_path), F, Cutoff(line=3))
    assert at.text() == "a\n"


@pytest.mark.parametrize("sep", ["\t", "\u2192"])
def test_edited_text_file_gutter_tab_or_arrow(tmp_path, sep):
    # hand-made: 2.1.258 writes TAB only (FH-008); the arrow form is older
    t = T()
    t.user("go")
    t.call("Read", {"file_path": F}, "", read_echo("a\nb\nc\nd\n"))
    t.attach({"type": "edited_text_file", "filename": F, "snippet": f"2{sep}B\n3{sep}c"})
    r = recover(scope(t.write(tmp_path)), F)
    assert r.status == "partial"
    assert r.state[1:3] == ["B", "c"] and not isinstance(r.state[0], str)
    assert "edited_text_file" in r.state[0].cause


def test_windowed_read_then_edit_by_patch(tmp_path):
    t = T()
    t.user("go")
    t.call("Read", {"file_path": F, "offset": 2, "limit": 2}, "", read_echo("b\nc", start=2, num=2, total=5))
    t.call("Edit", {"file_path": F, "old_string": "c", "new_string": "C", "replace_all": False}, "ok",
           {"filePath": F, "oldString": "c", "newString": "C", "originalFile": None, "replaceAll": False,
            "userModified": False,
            "structuredPatch": [{"oldStart": 2, "oldLines": 3, "newStart": 2, "newLines": 3,
                                 "lines": [" b", "-c", "+C", " d"]}]})
    r = recover(scope(t.write(tmp_path)), F)
    assert r.status == "partial"
    assert r.state[1:4] == ["b", "C", "d"] and len(r.state) == 5
    rng = r.ranges()
    assert rng[0]["kind"] == "gap" and rng[0]["lines"] == 1 and rng[1] == {
        "kind": "known", "start": 2, "end": 4, "lines": 3, "cause": None}


def test_edit_original_file_is_a_pre_image(tmp_path):
    t = T()
    t.user("go")
    t.call("Edit", {"file_path": F, "old_string": "x", "new_string": "y", "replace_all": False}, "ok",
           {"filePath": F, "oldString": "x", "newString": "y", "originalFile": "x\nz\n", "replaceAll": False,
            "userModified": False, "structuredPatch": []})
    r = recover(scope(t.write(tmp_path)), F)
    assert r.text() == "y\nz\n" and r.status == "complete"


def test_stale_hint_names_the_file(tmp_path):
    # hand-made: needs a formatter (cargo fmt / black ...) that the offline sandbox does not carry
    t = T()
    t.user("go")
    t.call("Write", {"file_path": F, "content": "a\n"}, "ok", {"type": "create", "filePath": F, "content": "a\n"})
    t.call("Bash", {"command": "black ."}, "reformatted",
           {"stdout": "", "stderr": "", "interrupted": False, "isImage": False, "noOutputExpected": False,
            "staleReadFileStateHint": "[1 file modified on disk since it was read: f.txt. Call Read before editing.]"})
    r = recover(scope(t.write(tmp_path)), F)
    assert r.status == "none"
    assert [s.what for s in r.steps] == ["write", "possible-write", "stale-hint"]


def test_heredoc_and_clean_cat_anchor(tmp_path):
    t = T()
    t.user("go")
    ok = {"stderr": "", "interrupted": False, "isImage": False, "noOutputExpected": False}
    t.call("Bash", {"command": "cat > f.txt <<'EOF'\nl1\nl2\nEOF"}, "(Bash completed with no output)",
           {"stdout": "", **ok})
    t.call("Bash", {"command": "sed -i 's/l1/L1/' f.txt"}, "", {"stdout": "", **ok})
    t.call("Bash", {"command": "cat f.txt"}, "L1\nl2", {"stdout": "L1\nl2", **ok})
    r = recover(scope(t.write(tmp_path)), F)
    assert [s.what for s in r.steps] == ["heredoc-write", "shell-write", "shell-read"]
    assert r.status == "partial" and [x for x in r.state if isinstance(x, str)] == ["L1", "l2"]
    assert r.shell_writes == 1


def test_interrupted_cat_is_not_an_anchor(tmp_path):
    t = T()
    t.user("go")
    t.call("Bash", {"command": "cat f.txt"}, "partial",
           {"stdout": "partial", "stderr": "", "interrupted": True, "isImage": False, "noOutputExpected": False})
    r = recover(scope(t.write(tmp_path)), F)
    assert (r.status, r.state) == ("none", None)  # an interrupted read is no view of the file


def test_checkpoint_disagreement_rebases_without_merging(tmp_path):
    # hand-made: a checkpoint blob that differs from the reconstruction (an unseen external write)
    t = T()
    t.user("go")
    t.call("Write", {"file_path": F, "content": "mine\n"}, "ok", {"type": "create", "filePath": F})
    h = hashlib.sha256(F.encode()).hexdigest()[:16]
    t.raw({"type": "file-history-snapshot", "messageId": "m", "isSnapshotUpdate": False,
           "snapshot": {"messageId": "m", "timestamp": "2026-01-01T00:00:30.000Z", "trackedFileBackups": {
               F: {"backupFileName": f"{h}@v2", "version": 2, "backupTime": "2026-01-01T00:00:30.000Z"}}}})
    home = t.write(tmp_path)
    blob = home / "file-history" / SID / f"{h}@v2"
    blob.parent.mkdir(parents=True)
    blob.write_text("theirs\n")
    import os
    ts = 1767225630.0  # 2026-01-01T00:00:30Z
    os.utime(blob, (ts, ts))
    r = recover(scope(home), F)
    assert r.steps[-1].what == "checkpoint-rebase" and r.status == "none"
    assert "theirs" not in json.dumps([s.detail for s in r.steps])
    rows = list_backups(scope(home), F)
    assert rows and rows[0]["exists"] and rows[0]["generation_matches"] == ["2026-01-01T00:00:30.000Z"]


def test_no_record_counts_transcripts(tmp_path):
    t = T()
    t.user("go")
    r = recover(scope(t.write(tmp_path)), "/elsewhere/x")
    assert r.state is None and r.exists is None and r.transcripts == 1


def test_image_handles_and_ambiguity(tmp_path):
    # hand-made: pasting images needs a clipboard in the interactive client
    png1 = base64.b64encode(b"\x89PNG-one").decode()
    png2 = base64.b64encode(b"\x89PNG-two").decode()
    t = T()
    for data in (png1, png2, png1):
        t._base("user", message={"role": "user", "content": [
            {"type": "text", "text": "look [Image #1]"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": data}}]})
    home = t.write(tmp_path)
    ims = image_mod.images(scope(home))
    assert [im.locator for im in ims] == ["L3i1", "L2i1"]  # dedup keeps the latest occurrence
    assert ims[0].occurrences == ["main:L1i1", "main:L3i1"]
    with pytest.raises(UsageError, match="ambiguous"):
        image_q.select(ims, "1")
    assert image_q.select(ims, "L2i1")[0].data == b"\x89PNG-two"
    out = image_q.write_out(image_q.select(ims, "L2i1"), str(tmp_path / "o"))
    assert out[0][1].endswith(".png") and Path(out[0][1]).read_bytes() == b"\x89PNG-two"


def test_plan_slug_minted_at_compaction_and_dir_containment(tmp_path):
    # hand-made: a compaction-minted slug needs a long session
    t = T()
    t._base("system", subtype="compact_boundary", slug="brave-new-plan")
    t.user("go")
    home = t.write(tmp_path / "home")
    (home / "settings.json").write_text(json.dumps({"plansDirectory": "../outside"}))
    b = plan_mod.bind(scope(home))[0]
    assert b.source == "slug" and b.minted_at_compaction is True
    assert b.plan_path == str(home / "plans" / "brave-new-plan.md") and b.plan_exists is False
    assert any("escapes the project root" in n for n in b.notes)


def test_plan_mode_attachment_wins(tmp_path):
    t = T()
    t._base("user", message={"role": "user", "content": "x"}, slug="first-slug")
    t.attach({"type": "plan_mode", "reminderType": "full", "isSubAgent": False,
              "planFilePath": "/h/plans/other.md", "planExists": False})
    b = plan_mod.bind(scope(t.write(tmp_path)))[0]
    assert b.source == "plan_mode" and b.plan_path == "/h/plans/other.md" and b.plan_exists_recorded is False
