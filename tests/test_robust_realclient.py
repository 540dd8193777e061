"""Issue 10 on transcripts written by the REAL Claude Code client (tests/realclient/scenarios_robust.py),
run once per test session, in parallel, offline: heredoc writes and full views after a change, a
`--fork-session` fork, and a rewind with "Restore code and conversation".

Skips with the exact missing prerequisite (not root / no unshare / no npm ...), FAILS under CI=true.
"""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.realclient.common.host import prereq
from tests.realclient import scenarios_robust as SR


@pytest.fixture(scope="session")
def rr(tmp_path_factory) -> dict[str, dict]:
    root = tmp_path_factory.mktemp("robust-rc")
    return prereq(SR.run_all, root)


def run(gt: dict, *args: str, fmt: str = "json") -> tuple[int, list[dict] | bytes, bytes]:
    p = subprocess.run([sys.executable, "-m", "sessionsift", *args, "--claude-home", gt["config_dir"],
                        *(["--format", "json"] if fmt == "json" else [])], capture_output=True, timeout=120)
    assert b"Traceback" not in p.stderr, p.stderr.decode()
    if fmt == "json":
        return p.returncode, [json.loads(x) for x in p.stdout.splitlines() if x.strip()], p.stderr
    return p.returncode, p.stdout, p.stderr


def sha(gt: dict, name: str) -> str | None:
    d = gt["disk_files"].get(f"{gt['cwd']}/{name}")
    return d["sha256"] if d else None


# --- heredoc writes ---------------------------------------------------------------------------


def test_files_sees_every_heredoc_write(rr):
    """`cat <<'EOF' > f`, `python3 - <<'EOF' > f`, `tee f <<EOF`, `cat <<'EOF' | tee f`: the redirect
    (or the pipe) sits inside the heredoc node; `files` missed h1, h2 and h4 before."""
    gt = rr["robust_heredoc"]
    rc, rows, _ = run(gt, "files")
    ops = {Path(r["file"]).name: r["ops"] for r in rows if r["kind"] == "file"}
    assert rc == 0
    for name in ("h1.txt", "h2.txt", "h3.txt", "h4.txt", "h5.txt"):
        assert ops[name].get("shell:write") == 1, (name, ops.get(name))
    assert ops["v.txt"].get("shell:edit-in-place") == 1 and ops["v.txt"].get("shell:read") == 1
    assert ops["w.txt"].get("shell:append") == 1 and ops["w.txt"].get("shell:read") == 1


def test_recover_follows_heredoc_writes(rr):
    gt = rr["robust_heredoc"]
    w = gt["cwd"]
    # a quoted heredoc through cat (nested redirect) / through a pipe into tee: the file is known
    for name in ("h4.txt", "h5.txt"):
        rc, out, err = run(gt, "recover", "--file", f"{w}/{name}", fmt="text")
        assert rc == 0 and hashlib.sha256(out).hexdigest() == sha(gt, name), (name, err)
    # h1 was Read ("old h1") and then rewritten by the heredoc: before, recover printed the old
    # content as complete; now it is the new content (at risk: a python heredoc ran after it)
    rc, out, err = run(gt, "recover", "--file", f"{w}/h1.txt", fmt="text")
    assert rc == 5 and hashlib.sha256(out).hexdigest() == sha(gt, "h1.txt") and b"old h1" not in out
    # python writing h2 through a heredoc: named, content unknown (was: no record at all, exit 1)
    rc, rows, _ = run(gt, "recover", "--file", f"{w}/h2.txt")
    assert rc == 7 and rows[-1]["status"] == "none" and rows[-1]["shell_writes"] == 1


def test_a_full_view_after_a_change_is_an_anchor(rr):
    """`sed -i ... v.txt && cat v.txt`, `echo y >> w.txt && cat w.txt`: the cat prints the file
    after the change; before, the shell write left every line unknown."""
    gt = rr["robust_heredoc"]
    w = gt["cwd"]
    for name, lines in (("v.txt", ["ALPHA", "beta"]), ("w.txt", ["x", "y"])):
        rc, rows, _ = run(gt, "recover", "--file", f"{w}/{name}")
        sm = rows[-1]
        assert rc == 6 and sm["status"] == "partial" and sm["known_pieces"] >= 2, (name, sm)
        anchors = [r for r in rows if r["kind"] == "step" and r["what"] == "shell-read"]
        assert anchors and anchors[0]["step_kind"] == "anchor"
        assert sm["rendered"].split("\n")[:2] == lines, sm["rendered"]


def test_out_never_writes_a_file_of_gap_markers(rr, tmp_path):
    gt = rr["robust_heredoc"]
    out = tmp_path / "h2.restored"
    rc, rows, _ = run(gt, "recover", "--file", f"{gt['cwd']}/h2.txt", "--out", str(out))
    assert rc == 7 and not out.exists() and rows[-1]["out"] is None and rows[-1]["out_refused"]


# --- --fork-session ------------------------------------------------------------------------------


def _fork_ids(gt: dict) -> tuple[str, str]:
    parent = gt["session_id"]
    (fork,) = [s for s in gt["session_ids_on_disk"] if s != parent]
    return parent, fork


def test_list_shows_the_lineage(rr):
    gt = rr["robust_fork"]
    parent, fork = _fork_ids(gt)
    rc, rows, _ = run(gt, "list")
    by = {r["session_id"]: r for r in rows if r["kind"] == "session"}
    assert by[fork]["forked_from"]["session_id"] == parent and by[fork]["forked_from"]["copied_records"] > 0
    assert by[parent]["forks"] == [fork] and by[parent]["forked_from"] is None
    # the fork branched off after the parent's last record (the end_turn reply of P2)
    p_lines = (Path(gt["config_dir"]) / gt["project_dir"] / f"{parent}.jsonl").read_bytes().splitlines()
    at = json.loads(p_lines[by[fork]["forked_from"]["line"] - 1])
    assert at["uuid"] == by[fork]["forked_from"]["uuid"] and at["type"] == "assistant"
    # the fork alone still names its parent (the parent is out of scope)
    rc, rows, _ = run(gt, "list", fork)
    assert [r["forked_from"]["session_id"] for r in rows if r["kind"] == "session"] == [parent]


def test_copies_are_counted_once(rr):
    """Was: Write 6 for 4+1 calls in search, create=2 per file in `files`, the timeline printing
    the same line twice with no session id."""
    gt = rr["robust_fork"]
    parent, fork = _fork_ids(gt)
    writes = sum(1 for t in gt["tool_uses"] if t["name"] == "Write")
    assert writes == 5
    rc, rows, _ = run(gt, "search", "", "-t", "agent.tool.use", "--count-by", "tool")
    counts = {r["key"]: r["count"] for r in rows if r["kind"] == "count"}
    assert counts == {"Write": writes} and rows[-1]["copies_skipped"] == 4
    rc, rows, _ = run(gt, "files")
    ops = {Path(r["file"]).name: r["ops"] for r in rows if r["kind"] == "file"}
    assert all(o == {"create": 1} for o in ops.values()) and len(ops) == 5
    assert rows[-1]["copies"] == 4 and rows[-1]["ops"] == {"create": 5}
    rc, rows, _ = run(gt, "files", "--by", "timeline")
    copies = [r for r in rows if r["kind"] == "touch" and r["copy_of"]]
    assert len(copies) == 4 and {r["session_id"] for r in copies} == {fork}
    assert all(r["copy_of"]["session_id"] == parent for r in copies)
    rc, out, _ = run(gt, "files", "--by", "timeline", fmt="text")
    assert out.count(b"(copy of ") == 4 and out.count(fork[:8].encode()) == 5
    rc, rows, _ = run(gt, "stats")
    assert rows[-1]["tool_calls"] == {"Write": writes}
    lane = next(r for r in rows if r["kind"] == "lane" and r["session_id"] == fork)
    assert lane["forked_from"]["session_id"] == parent and lane["copied_records"] > 0
    rc, rows, _ = run(gt, "recover", "--file", f"{gt['cwd']}/f1.txt")
    assert [r["what"] for r in rows if r["kind"] == "step"] == ["write"]


@pytest.mark.parametrize("name,calls", [
    # P1 a.txt; P2 b.txt + Edit a.txt (rewound past, restoring code); P3 c.txt; the fork d.txt
    ("robust_rewind_fork", {"Write": 4, "Edit": 1}),
    # P1 f1 + f2 (rewound past: before the first prompt); P2 f3 + f4 on the new root; the fork writes none
    ("robust_rewind_root_fork", {"Write": 4}),
])
def test_a_fork_made_after_a_rewind_is_counted_once(rr, name, calls):
    """The fork copies only the live branch of the rewound session. Rewound to before its FIRST
    prompt, that branch starts at a later root of the parent, not at its first record: the fork
    was not recognised and its copies counted again (6 Write calls for 4)."""
    gt = rr[name]
    parent, fork = _fork_ids(gt)
    assert sum(1 for t in gt["tool_uses"] if t["name"] in calls and t["served"]) == sum(calls.values())
    rc, rows, _ = run(gt, "stats")
    assert rc == 0 and rows[-1]["tool_calls"] == calls
    lane = next(r for r in rows if r["kind"] == "lane" and r["session_id"] == fork)
    assert lane["forked_from"]["session_id"] == parent and lane["copied_records"] > 0
    rc, rows, _ = run(gt, "search", "", "-t", "agent.tool.use", "--count-by", "tool")
    assert rc == 0 and {r["key"]: r["count"] for r in rows if r["kind"] == "count"} == calls
    rc, rows, _ = run(gt, "files")
    ops = {Path(r["file"]).name: r["ops"] for r in rows if r["kind"] == "file"}
    assert rc == 0 and all(o.get("create") == 1 for o in ops.values()), ops  # each file created once
    assert len(ops) == calls["Write"] and rows[-1]["copies"] > 0
    rc, rows, _ = run(gt, "list")
    by = {r["session_id"]: r for r in rows if r["kind"] == "session"}
    assert by[fork]["forked_from"]["session_id"] == parent and by[parent]["forks"] == [fork]


# --- rewind with "Restore code and conversation" ----------------------------------------------------


def test_the_rewind_really_restored_the_code(rr):
    gt = rr["robust_rewind"]
    assert sha(gt, "b.txt") is None
    assert sha(gt, "a.txt") == hashlib.sha256(b"first version\n").hexdigest()


def test_a_file_created_only_in_the_abandoned_branch_is_not_there(rr):
    """Was: `complete`, `exists: true` with the abandoned branch's content."""
    gt = rr["robust_rewind"]
    rc, rows, _ = run(gt, "recover", "--file", f"{gt['cwd']}/b.txt")
    sm = rows[-1]
    assert rc == 8 and sm["status"] == "deleted" and sm["exists"] is False
    whats = [r["what"] for r in rows if r["kind"] == "step"]
    assert "rewound-write" in whats and whats[-1] == "checkpoint-absent"


def test_a_file_put_back_by_restore_code_is_rebuilt_from_the_backup_that_proves_it(rr, tmp_path):
    """Was `partial` (exit 6): the Edit of the abandoned branch was undone by 'Restore code', the
    client's edited_text_file snippet then kept one line. The P3 prompt's snapshot still names the
    backup made before that Edit (FH-015: a new backup only when the bytes differ), so the file is
    that backup's bytes: rebuilt complete, equal to disk."""
    gt = rr["robust_rewind"]
    a = f"{gt['cwd']}/a.txt"
    rc, rows, _ = run(gt, "recover", "--file", a)
    sm = rows[-1]
    steps = [r for r in rows if r["kind"] == "step"]
    assert rc == 0 and sm["status"] == "complete" and sm["exists"] is True, sm
    assert sm["sha256"] == sha(gt, "a.txt")
    restore = next(s for s in steps if s["what"] == "checkpoint-restore")
    assert restore["step_kind"] == "anchor" and "Restore code" in restore["detail"]
    rc, out, _ = run(gt, "recover", "--file", a, fmt="text")
    assert hashlib.sha256(out).hexdigest() == sha(gt, "a.txt")
    # the client prunes its store (FH-024): without the backup the gap is declared, never filled
    import shutil

    home = tmp_path / "cfg"
    shutil.copytree(gt["config_dir"], home, symlinks=True)
    blob = home / "file-history" / gt["session_id"] / restore["detail"].split("content from file-history/")[1].split(
        "/")[1].split(":")[0]
    blob.unlink()  # hand-made: the pruning the client does after 100 snapshots, done here at once
    rc, rows, _ = run({**gt, "config_dir": str(home)}, "recover", "--file", a)
    sm = rows[-1]
    gap = next(r for r in rows if r["kind"] == "step" and r["what"] == "checkpoint-restore")
    assert gap["step_kind"] == "boundary"
    assert "its content is unknown: the backup is not on disk" in gap["detail"], gap
    after = [r for r in rows if r["kind"] == "step"]
    after = after[after.index(gap) + 1:]
    if _p3_read_holds_the_file(gt, a):
        # 2.1.332 answers P3's Read of a.txt with the whole file (2.1.258: file_unchanged): that read
        # anchors the file again after the gap, so it is rebuilt complete, equal to disk
        assert [(s["what"], s["step_kind"]) for s in after] == [("read", "anchor")], after
        assert rc == 0 and sm["status"] == "complete" and sm["sha256"] == sha(gt, "a.txt"), sm
    else:
        assert rc != 0 and sm["status"] != "complete", sm


def _p3_read_holds_the_file(gt: dict, path: str) -> bool:
    """Whether the client's result of the session's last Read of ``path`` holds its content (a
    ``text`` result), not ``file_unchanged``: read from the transcript's raw lines."""
    tr = Path(gt["config_dir"]) / gt["project_dir"] / f"{gt['session_id']}.jsonl"
    kinds = []
    for line in tr.read_text().splitlines():
        rec = json.loads(line)
        res = rec.get("toolUseResult")
        if isinstance(res, dict) and (res.get("file") or {}).get("filePath") == path:
            kinds.append(res.get("type"))
    assert kinds, "no Read result of a.txt"
    return kinds[-1] == "text"


def test_a_rewound_prompt_that_was_answered_is_no_draft(rr):
    """Was labelled `user.unsent` (a draft): dropped from stats' user.message and `-t user.message`."""
    gt = rr["robust_rewind"]
    p2 = "[robust_rewind P2]"
    rc, rows, _ = run(gt, "search", p2, "-F", "-t", "user.message")
    hits = [r for r in rows if r["kind"] == "hit"]
    assert rc == 0 and len(hits) == 1 and hits[0]["labels"][0] == "user.message"
    assert hits[0]["survival"] == "abandoned"
    rc, rows, _ = run(gt, "stats")
    lane = next(r for r in rows if r["kind"] == "lane")
    assert lane["labels"].get("user.message") == 3 and "user.unsent" not in lane["labels"]
    assert lane["prompts"]["rewound"] == 1 and lane["prompts"]["unsent"] == 0


# --- a moved data root -----------------------------------------------------------------------------


def _moved(gt: dict, tmp_path: Path) -> dict:
    """The scenario's data root moved to a new path: every absolute path the client recorded under
    the old one is now absent (the old one is in this run's temp dir, so no residue can hold it)."""
    import shutil

    new = tmp_path / "restored-home" / "dot-claude"
    new.parent.mkdir(parents=True)
    shutil.copytree(gt["config_dir"], new, symlinks=True)
    shutil.rmtree(gt["config_dir"] + "-gone", ignore_errors=True)
    os.rename(gt["config_dir"], gt["config_dir"] + "-gone")
    return {**gt, "config_dir": str(new), "old_config_dir": gt["config_dir"]}


def test_a_moved_root_resolves_recorded_paths(rr, tmp_path):
    """plan_mode's `planFilePath` and a Bash output's `persistedOutputPath` are absolute paths
    under the data root the session ran with; under a moved root they resolve against the current
    one, with a note and the path checked."""
    gt = _moved(rr["robust_moved_plan"], tmp_path / "p")
    try:
        rc, rows, _ = run(gt, "plan")
        (b,) = [r for r in rows if r["kind"] == "plan"]
        assert b["plan_path"].startswith(gt["old_config_dir"]) and not os.path.exists(b["plan_path"])
        assert b["plan_exists"] is True and b["plan_path_checked"].startswith(gt["config_dir"] + "/plans/")
        assert any("resolved against the current data root" in n for n in b["notes"])
    finally:
        os.rename(gt["old_config_dir"] + "-gone", gt["old_config_dir"])
    gt = _moved(rr["robust_moved_output"], tmp_path / "o")
    try:
        rc, rows, _ = run(gt, "search", "MOVED-TAIL-4242", "-F", "--resolve-persisted", "-t", "agent.tool.result")
        hits = [r for r in rows if r["kind"] == "hit"]
        assert rc == 0 and len(hits) == 1 and rows[-1]["persisted_unresolved"] == []
        assert hits[0]["persisted_resolved"][0].startswith(gt["config_dir"] + "/projects/")
    finally:
        os.rename(gt["old_config_dir"] + "-gone", gt["old_config_dir"])


def test_a_fork_is_found_when_the_parent_flushed_its_first_reply_before_the_prompt():
    """Captured from the real client (examples/captured/README.md): the parent's first uuid-bearing
    line is its first reply, not the prompt the fork's copy starts with. Keyed on the first line's
    uuid the fork was not recognised and stats counted the copied Writes twice (6 for 4)."""
    home = Path(__file__).resolve().parents[1] / "examples" / "captured" / "reply-before-prompt"
    gt = {"config_dir": str(home)}
    rc, rows, _ = run(gt, "stats")
    assert rc == 0 and rows[-1]["tool_calls"] == {"Write": 4, "Edit": 1}
    rc, rows, _ = run(gt, "list")
    by = {r["session_id"]: r for r in rows if r["kind"] == "session"}
    fork, parent = "582e0a10-1fb7-43c5-8068-6dd07b287cf6", "43d862be-7c57-5677-87e1-3657469384d9"
    assert by[fork]["forked_from"]["session_id"] == parent and by[parent]["forks"] == [fork]


def test_lineage_is_read_from_the_index_once_indexed(rr, tmp_path, monkeypatch):
    """Issue 25: fork detection parsed every line of every family member on every run (a store of
    resumed and forked sessions: `stats` warm at 30x rg). The first `stats` (index on) indexes the
    family's members; every later answer reads their uuids, lines and offsets from the index: no
    transcript is read line by line for lineage (lineage._uuids is not called), and the forks -
    parent, branch line, every copied line and offset - equal those read from the files."""
    from sessionsift.providers.claude.cache.lanes import census_one
    from sessionsift.providers.claude.discover import resolve_targets
    from sessionsift.providers.claude.model import lineage
    from sessionsift.providers.claude.stats import stats

    for name in ("robust_fork", "robust_rewind_fork"):
        gt = rr[name]
        monkeypatch.setenv("SESSIONSIFT_INDEX_DIR", str(tmp_path / name))
        scope = resolve_targets([], Path(gt["config_dir"]))
        ref = lineage.find_forks(scope.sessions)  # nothing indexed yet: read from the files
        assert len(ref) == 1, (name, ref)
        first = stats(scope, census=census_one)
        read: list = []
        real = lineage._uuids
        monkeypatch.setattr(lineage, "_uuids", lambda p: read.append(p) or real(p))
        again = stats(scope, census=census_one)
        assert lineage.find_forks(scope.sessions) == ref
        assert read == [], (name, read)
        assert [ls.forked_from for ls in again.lanes] == [ls.forked_from for ls in first.lanes]
        assert sum(ls.forked_from is not None for ls in again.lanes) == 1
        monkeypatch.setattr(lineage, "_uuids", real)


def test_a_forks_census_is_kept_in_its_index(rr, tmp_path, monkeypatch):
    """A fork's census without its copies (stats.lane_stats_indexed) parsed the whole fork on every
    warm `stats` (a store of forks: 98% of its time, benchmarks/README.md 'issue 25'). Kept in the
    fork's index with the digest of the copied lines: the second `stats` computes none, and every
    lane's figures equal the first's and the scan's (index off)."""
    from sessionsift.providers.claude.cache import codec
    from sessionsift.providers.claude.cache.lanes import census_one
    from sessionsift.providers.claude import stats as S
    from sessionsift.providers.claude.discover import resolve_targets

    def figures(res):
        for ls in res.lanes:  # a lane answered from the data root's kept censuses decodes its
            if ls.per_msg_later is not None:  # per-message usage on need (stats.py dedupe_messages)
                ls.per_msg, ls.per_msg_later = ls.per_msg_later[1](), None
        return [(str(ls.lane.path), codec.stats_obj(ls), ls.forked_from) for ls in res.lanes]

    for name in ("robust_fork", "robust_rewind_fork"):
        gt = rr[name]
        monkeypatch.setenv("SESSIONSIFT_INDEX_DIR", str(tmp_path / f"k-{name}"))
        scope = resolve_targets([], Path(gt["config_dir"]))
        first = S.stats(scope, census=census_one)
        made: list = []
        real = S.lane_stats_indexed
        monkeypatch.setattr(S, "lane_stats_indexed", lambda ln, **k: made.append(ln.path) or real(ln, **k))
        again = S.stats(scope, census=census_one)
        assert made == [], (name, made)  # before: the fork parsed again
        assert figures(again) == figures(first)
        monkeypatch.setattr(S, "lane_stats_indexed", real)
        monkeypatch.setenv("SESSIONSIFT_NO_INDEX", "1")
        assert figures(S.stats(resolve_targets([], Path(gt["config_dir"])))) == figures(first)
        monkeypatch.delenv("SESSIONSIFT_NO_INDEX")


@pytest.mark.parametrize("name", ["robust_fork", "robust_rewind_fork", "robust_rewind_root_fork"])
def test_a_forks_census_is_answered_from_its_index(rr, tmp_path, name):
    """Issue 25: a census scanned every fork on every run ("a fork's copied records": the
    per-kind counts of its index include the copies), so a store of forks stayed at 10x rg warm.
    Read from the fork's per-record columns, skipping the copied offsets: the second census takes
    every lane from the index (none scanned), and every census form equals the scan's (index off),
    copies counted once, on the original."""
    gt = rr[name]
    env = dict(os.environ, SESSIONSIFT_INDEX_DIR=str(tmp_path / "idx"))
    forms = [["-t", "agent.tool.use", "--count-by", "tool"], ["--count-by", "label"], ["--count-by", "session"],
             ["--count-by", "day"], ["-c"], ["-t", "user.message", "--count"]]

    def census(args, *more):
        p = subprocess.run([sys.executable, "-m", "sessionsift", "search", "", *args, *more, "--claude-home",
                            gt["config_dir"], "--format", "json"], capture_output=True, timeout=120, env=env)
        assert p.returncode == 0, p.stderr.decode()
        rows = [json.loads(x) for x in p.stdout.splitlines() if x.strip()]
        return [r for r in rows if r["kind"] == "count"], rows[-1]

    for args in forms:
        census(args)  # the first: every lane indexed as it is read
        counts, sm = census(args)
        ref, rsm = census(args, "--no-index")
        assert counts == ref, args
        assert sm["copies_skipped"] == rsm["copies_skipped"] and sm["hits"] == rsm["hits"], args
        assert sm["index"]["scanned"] == 0 and sm["index"]["scanned_why"] is None, (args, sm["index"])
    assert rsm["copies_skipped"] > 0  # the fork's copies were there to be skipped
