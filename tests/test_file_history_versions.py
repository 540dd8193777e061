"""External writes read from file-history version jumps (docs/claims.md FH-015, FH-016): a jump
with no tool write of the file in the interval is an external write, reported as that interval; a
LOWER version is a new generation of the store, not a write, and the next jump counts from it.
Hand-made snapshot lines (the shape of tests/test_recover_edges.py's checkpoint test): a store
restarting its versions needs the history of an older session the offline harness does not keep."""
from __future__ import annotations

import hashlib

from sessionsift.files.shell import GRAMMAR
from sessionsift.providers.claude.files.collect import collect
from sessionsift.providers.claude.files.touches import external_writes
from tests.test_recover_edges import F, T, scope

H = hashlib.sha256(F.encode()).hexdigest()[:16]


def _snap(t: T, second: int, version: int) -> None:
    ts = f"2026-01-01T00:01:{second:02d}.000Z"
    t.raw({"type": "file-history-snapshot", "messageId": f"m{second}", "isSnapshotUpdate": False,
           "snapshot": {"messageId": f"m{second}", "timestamp": ts, "trackedFileBackups": {
               F: {"backupFileName": f"{H}@v{version}", "version": version, "backupTime": ts}}}})


def test_a_version_jump_without_a_tool_write_is_an_external_write_and_a_lower_version_is_none(tmp_path):
    t = T()
    t.user("go")
    _snap(t, 10, 1)
    _snap(t, 20, 2)   # 1 -> 2, nothing wrote it: external
    _snap(t, 30, 1)   # 2 -> 1: a new generation, not a write
    _snap(t, 40, 1)   # unchanged
    _snap(t, 50, 2)   # 1 -> 2 again, counted from the new generation: external
    t.call("Write", {"file_path": F, "content": "mine\n"}, "ok", {"type": "update", "filePath": F})
    for r in t.recs[-2:]:
        r["timestamp"] = "2026-01-01T00:01:55.000Z"
    _snap(t, 60, 3)   # 2 -> 3 with the session's own Write in the interval: not external
    lane_evs, _ = collect(scope(t.write(tmp_path)), True, grammar=GRAMMAR)
    got = [(w.path, w.op, w.interval, w.detail) for w in external_writes(lane_evs)]
    assert got == [
        (F, "external-write", ("2026-01-01T00:01:10.000Z", "2026-01-01T00:01:20.000Z"),
         "file-history version 1 -> 2 with no tool write in the interval"),
        (F, "external-write", ("2026-01-01T00:01:40.000Z", "2026-01-01T00:01:50.000Z"),
         "file-history version 1 -> 2 with no tool write in the interval")]
