"""worktrees scan / sweep on real git repositories with real worktrees made by git, and real live
processes. The real clients' own worktrees are in tests/test_worktrees_realclient.py."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from sessionsift.worktrees.decide import evidence
from sessionsift.worktrees.scan import scan
from sessionsift.worktrees.sweep import sweep
from tests.worktree_util import (Sleeper, add_worktree, by_path, claude_worktree, cli, commit, dead_pid, git,
                                 lock_like_claude, make_repo, rows, write_registry_row)


@pytest.fixture
def homes(tmp_path):
    ch = tmp_path / "claude-home"
    ch.mkdir()
    cx = tmp_path / "codex-home"
    cx.mkdir()
    return ch, cx


def _scan(repo, homes, **kw):
    return scan([str(repo)], claude_home=str(homes[0]), codex_home=str(homes[1]), **kw)


def _cat(rep) -> dict[str, str]:
    return {os.path.basename(w.path): w.category for w in rep.worktrees}


@pytest.fixture
def zoo(tmp_path):
    """One repository with a worktree in every state."""
    repo = make_repo(tmp_path / "repo")
    wts = {}
    wts["clean"] = claude_worktree(repo, "clean")
    lock_like_claude(repo, wts["clean"], "clean", dead_pid(), 1)
    wts["commit"] = claude_worktree(repo, "commit")
    commit(wts["commit"], "work.txt")
    lock_like_claude(repo, wts["commit"], "commit", dead_pid(), 1)
    wts["dirty"] = claude_worktree(repo, "dirty")
    (wts["dirty"] / "scratch.txt").write_text("not committed\n")
    wts["diverged"] = claude_worktree(repo, "diverged")
    commit(wts["diverged"], "branch-side.txt")
    wts["behind"] = claude_worktree(repo, "behind")
    wts["infra"] = add_worktree(repo, tmp_path / "infra", "nightly")
    git(repo, "worktree", "lock", "--reason", "nightly backup job: do not remove", wts["infra"])
    wts["noreason"] = claude_worktree(repo, "noreason")
    git(repo, "worktree", "lock", wts["noreason"])
    wts["mine"] = add_worktree(repo, tmp_path / "mine", "my-feature")
    commit(repo, "main-moved.txt")  # the main line moves after every worktree forked
    return repo, wts


def test_every_state_is_decided_from_git_facts(zoo, homes):
    repo, wts = zoo
    rep = _scan(repo, homes)
    assert _cat(rep) == {"clean": "removable", "commit": "unmerged", "dirty": "dirty", "diverged": "unmerged",
                         "behind": "removable", "infra": "custom-locked", "noreason": "custom-locked",
                         "mine": "not-session"}
    w = {os.path.basename(x.path): x for x in rep.worktrees}
    # divergence is the branch AND the main line having moved, flagged by name
    assert w["diverged"].diverged is True and w["diverged"].merge.ahead == 1 and w["diverged"].merge.behind == 1
    assert w["commit"].diverged is True  # its commit was made before main moved too
    assert w["behind"].diverged is False and w["behind"].merge.behind == 1
    assert {x.path for x in rep.diverged} == {str(wts["diverged"]), str(wts["commit"])}
    assert w["dirty"].status.untracked == 1 and w["dirty"].status.dirty is True
    assert w["clean"].lock.state == "client" and w["infra"].lock.state == "custom"
    assert w["infra"].lock.reason == "nightly backup job: do not remove"
    assert w["noreason"].lock.state == "custom" and w["noreason"].lock.reason == ""
    assert w["clean"].main_line.ref == "refs/heads/main" and w["clean"].main_line.source == "local main"
    assert w["clean"].size.bytes and w["clean"].size.bytes > 0 and w["clean"].size.files >= 2
    t = rep.tally()
    assert sum(t.values()) == len(rep.worktrees) == 8
    assert (t["removable"], t["unmerged"], t["dirty"], t["custom-locked"], t["not-session"]) == (2, 2, 1, 2, 1)
    # evidence: one row per predicate, in order, whatever decided
    ev = [r["check"] for r in __import__("sessionsift.worktrees.decide", fromlist=["x"]).evidence(w["clean"])]
    assert ev == ["registered", "custom-lock", "session", "alive", "merged", "clean", "holds-only-its-checkout"]


def test_each_decision_says_what_held_and_what_it_rests_on(zoo, homes):
    """The reason a person reads and the evidence rows `--format json` gives (docs/json.md): per
    worktree of the zoo, which predicate held, what each rests on, and the tally line."""
    from sessionsift.worktrees.decide import tally_line
    repo, wts = zoo
    rep = _scan(repo, homes)
    w = {os.path.basename(x.path): x for x in rep.worktrees}
    moved = "1 commit(s) not on refs/heads/main; the main line moved too (1 commit(s) since they forked): " \
            "DIVERGED, a person decides"
    assert {k: x.reason for k, x in w.items()} == {
        "clean": "a claude-code session, not alive by any signal, fully merged into refs/heads/main and clean",
        "behind": "a claude-code session, not alive by any signal, fully merged into refs/heads/main and clean",
        "commit": moved, "diverged": moved,
        "dirty": "uncommitted work: 1 untracked",
        "infra": "locked with a custom reason 'nightly backup job: do not remove': standing infrastructure",
        "noreason": "locked without a reason (not a client's lock): standing infrastructure",
        "mine": "nothing says an agent made it (no client lock, location or metadata)"}
    holds = {k: [(r["check"], r["holds"]) for r in evidence(x)] for k, x in w.items()}
    order = ["registered", "custom-lock", "session", "alive", "merged", "clean", "holds-only-its-checkout"]
    want = {"clean": [True, False, True, False, True, True, True], "behind": [True, False, True, False, True, True, True],
            "commit": [True, False, True, False, False, True, True],
            "diverged": [True, False, True, False, False, True, True],
            "dirty": [True, False, True, False, True, False, True], "infra": [True, True, False, False, True, True, True],
            "noreason": [True, True, True, False, True, True, True], "mine": [True, False, False, False, True, True, True]}
    assert holds == {k: list(zip(order, v)) for k, v in want.items()}
    det = {k: {r["check"]: r["detail"] for r in evidence(x)} for k, x in w.items()}
    assert {d["registered"] for d in det.values()} == {"git lists it as a worktree"}
    assert {d["alive"] for d in det.values()} == {"no signal says alive"}
    assert (det["infra"]["custom-lock"], det["clean"]["custom-lock"], det["mine"]["custom-lock"]) == (
        "custom lock reason 'nightly backup job: do not remove'", "claude-code's own generated lock reason", "not locked")
    assert det["mine"]["session"] == "no client lock, location or metadata says an agent made it"
    assert det["clean"]["session"].startswith("its lock reason is claude-code's own (session 'clean')")
    assert det["diverged"]["merged"] == "1 ahead / 1 behind refs/heads/main (local main); 1 without a patch-equivalent on it"
    assert det["behind"]["merged"] == "0 ahead / 1 behind refs/heads/main (local main)"
    assert det["dirty"]["clean"] == "0 tracked changes, 1 untracked, 0 ignored entries"
    assert det["clean"]["holds-only-its-checkout"] == \
        "nothing inside but its checkout and what git accounts for (2 entries walked)"
    assert tally_line(rep.tally()) == "8 scanned: 0 live, 2 custom-locked, 2 unmerged, 1 dirty, 2 removable, 1 not-session"


def test_an_operation_under_way_with_changed_tracked_files_is_dirty_and_says_both(tmp_path, homes):
    """A real cherry-pick stopped on a conflict in a merged worktree: CHERRY_PICK_HEAD is there and the
    conflicted file is a tracked change."""
    repo = make_repo(tmp_path / "repo")
    commit(repo, "both.txt", "base\n")
    git(repo, "checkout", "-q", "-b", "other")
    commit(repo, "both.txt", "other side\n")
    git(repo, "checkout", "-q", "main")
    commit(repo, "both.txt", "main side\n")
    wt = claude_worktree(repo, "m")
    git(wt, "cherry-pick", "other", check=False)
    (wt / "new.txt").write_text("x\n")
    (w,) = [x for x in _scan(repo, homes).worktrees if x.path == str(wt)]
    assert w.category == "dirty" and w.status.in_progress == ["CHERRY_PICK_HEAD"], w.reason
    assert w.reason == "uncommitted work: 1 changed tracked, 1 untracked, under way: CHERRY_PICK_HEAD"
    (clean,) = [r for r in evidence(w) if r["check"] == "clean"]
    assert clean == {"check": "clean", "holds": False,
                     "detail": "1 tracked changes, 1 untracked, 0 ignored entries, under way: CHERRY_PICK_HEAD"}


def test_text_tally_and_json_rows_account_for_every_worktree(zoo, homes):
    repo, wts = zoo
    base = ["--claude-home", str(homes[0]), "--codex-home", str(homes[1])]
    p = cli("worktrees", "sweep", str(repo), *base)
    assert p.returncode == 0, p.stderr
    assert "8 scanned: 0 live, 2 custom-locked, 2 unmerged, 1 dirty, 2 removable, 1 not-session" in p.stdout
    assert "dry run: nothing removed; --apply would remove 2 worktree(s)" in p.stdout
    assert "diverged - the branch and the main line both moved" in p.stdout
    assert all(Path(x).exists() for x in wts.values())
    j = rows(cli("worktrees", "sweep", str(repo), *base, "--format", "json").stdout)
    assert j[0]["kind"] == "header" and j[-1]["kind"] == "summary" and j[0]["command"] == "worktrees"
    wr = by_path(j)
    assert len(wr) == 8 == j[-1]["scanned"] == sum(j[-1]["tally"].values())
    assert {r["action"]["result"] for r in wr.values() if r["action"]} == {"would-remove"}
    assert sorted(p for p, r in wr.items() if r["action"]) == sorted([str(wts["clean"]), str(wts["behind"])])
    for r in wr.values():
        assert [e["check"] for e in r["evidence"]][:3] == ["registered", "custom-lock", "session"]
        assert r["category"] and r["reason"]
    assert {d["path"] for d in j[-1]["diverged"]} == {str(wts["diverged"]), str(wts["commit"])}


def test_apply_removes_exactly_the_removable_ones_and_a_rescan_agrees(zoo, homes):
    repo, wts = zoo
    before = _scan(repo, homes)
    res = sweep(before, apply=True)
    assert res.counts()["removed"] == 2 and res.counts()["failed"] == 0
    assert not wts["clean"].exists() and not wts["behind"].exists()
    for k in ("commit", "dirty", "diverged", "infra", "noreason", "mine"):
        assert wts[k].exists(), k
    # the custom lock is untouched, the branches of removed worktrees are kept
    assert "nightly backup job: do not remove" in git(repo, "worktree", "list", "--porcelain")
    assert "worktree-clean" in git(repo, "branch", "--list")
    after = _scan(repo, homes)
    t0, t1 = before.tally(), after.tally()
    assert t1["removable"] == 0 and sum(t1.values()) == sum(t0.values()) - 2
    assert {k: v for k, v in t1.items() if k != "removable"} == {k: v for k, v in t0.items() if k != "removable"}
    assert res.prunes and all(p.ran for p in res.prunes)
    # what the restore argv says brings the removed worktree back
    act = res.actions[str(wts["clean"])]
    subprocess.run(act.restore[0], check=True, capture_output=True)
    assert wts["clean"].is_dir() and git(wts["clean"], "rev-parse", "--abbrev-ref", "HEAD") == "worktree-clean"


def test_custom_lock_is_never_removed_even_when_clean_merged_and_dead(tmp_path, homes):
    repo = make_repo(tmp_path / "repo")
    wt = claude_worktree(repo, "standing")  # in the client's location, clean, merged, nothing alive
    git(repo, "worktree", "lock", "--reason", "scheduled job runner", wt)
    rep = _scan(repo, homes)
    assert _cat(rep) == {"standing": "custom-locked"}
    res = sweep(rep, apply=True)
    assert res.counts()["removed"] == 0 and wt.is_dir()
    assert "scheduled job runner" in git(repo, "worktree", "list", "--porcelain")


def _dead_session(tmp_path, name="s1"):
    repo = make_repo(tmp_path / "repo")
    wt = claude_worktree(repo, name)
    lock_like_claude(repo, wt, name, dead_pid(), 1)
    return repo, wt


def _only_positive(w) -> list[str]:
    return [f"{s.signal}:{s.source}" for s in w.signals if s.positive]


def test_blind_spot_session_detectable_only_by_cwd(tmp_path, homes):
    """Permanent regression (seed 003): a session whose only trace is its process's working
    directory - no session id anywhere, no registry row, a dead pid in its lock - reads as alive."""
    repo, wt = _dead_session(tmp_path)
    (wt / "sub").mkdir()
    with Sleeper(wt / "sub") as s:
        rep = _scan(repo, homes)
        w = rep.worktrees[0]
        assert w.category == "live", w.reason
        assert _only_positive(w) == ["cwd:/proc/<pid>/cwd"]
        assert s.pid in w.signals[0].pids
        res = sweep(rep, apply=True)
        assert res.counts()["removed"] == 0 and wt.is_dir()
    assert _scan(repo, homes).worktrees[0].category == "removable"


def test_blind_spot_session_detectable_only_through_the_harness_listing(tmp_path, homes):
    """Permanent regression (seed 003): a hand-started session whose process cwd drifted out of the
    worktree and whose argv carries no session id is caught only by the harness's own listing (a
    live registry row, pid and start time matching) - and must read as alive on that alone."""
    repo, wt = _dead_session(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    sid = str(uuid.uuid4())
    with Sleeper(elsewhere) as s:
        write_registry_row(homes[0], s.pid, sid, str(wt))
        rep = _scan(repo, homes)
        w = rep.worktrees[0]
        assert w.category == "live", w.reason
        assert _only_positive(w) == ["harness:claude-code registry"]
        assert sweep(rep, apply=True).counts()["removed"] == 0 and wt.is_dir()
    # the same row with its process gone is stale: the worktree is free
    w = _scan(repo, homes).worktrees[0]
    assert w.category == "removable", w.reason
    assert "stale" in next(s for s in w.signals if s.source == "claude-code registry").detail


def test_session_id_in_argv_keeps_a_codex_worktree(tmp_path, homes):
    """Codex marks its worktree with codex-thread.json in the worktree's git dir (the shape the real
    0.171.0 client writes, tests/test_worktrees_realclient.py); a live process whose argv carries
    that thread id keeps it, with nothing else to back it up."""
    repo = make_repo(tmp_path / "repo")
    wt = add_worktree(repo, homes[1] / "worktrees" / "ab12" / "repo")
    tid = str(uuid.uuid4())
    admin = Path(git(wt, "rev-parse", "--absolute-git-dir"))
    (admin / "codex-thread.json").write_text(f'{{"version":1,"ownerThreadId":"{tid}"}}')
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    with Sleeper(elsewhere, "resume", tid):
        w = _scan(repo, homes).worktrees[0]
        assert w.agent == "codex" and tid in w.session_ids
        assert w.category == "live" and _only_positive(w) == ["argv:/proc/<pid>/cmdline"]
    w = _scan(repo, homes).worktrees[0]
    assert w.category == "removable"
    rep = _scan(repo, homes)
    res = sweep(rep, apply=True)
    assert res.counts()["removed"] == 1 and not wt.exists()
    assert not (homes[1] / "worktrees" / "ab12").exists()  # the emptied codex parent went too


def test_live_lock_owner_keeps_and_a_reused_pid_does_not(tmp_path, homes):
    repo = make_repo(tmp_path / "repo")
    wt = claude_worktree(repo, "leased")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    with Sleeper(elsewhere) as s:
        from tests.worktree_util import start_ticks

        lock_like_claude(repo, wt, "leased", s.pid, start_ticks(s.pid))
        w = _scan(repo, homes).worktrees[0]
        assert w.category == "live" and _only_positive(w) == ["lock-owner:lock reason"]
        guard = f"pid {s.pid}: alive (start-time guard matched: {start_ticks(s.pid)} ticks since boot)"
        assert w.reason == f"alive by lock-owner ({guard})"
        assert [r for r in evidence(w) if r["check"] == "alive"] == [
            {"check": "alive", "holds": True, "detail": f"lock-owner: {guard}"}]
        git(repo, "worktree", "unlock", wt)
        lock_like_claude(repo, wt, "leased", s.pid, start_ticks(s.pid) - 100000)  # same pid, other start
        w = _scan(repo, homes).worktrees[0]
        assert w.category == "removable" and "reused" in w.signals[-1].detail


# --- listings: unreadable stops, absent is said -------------------------------------------------


def test_absent_listing_proceeds_and_says_so(tmp_path, homes):
    repo, wt = _dead_session(tmp_path)
    rep = _scan(repo, homes)
    cl = next(l for l in rep.listings if l.harness == "claude-code")
    assert cl.state == "absent" and "no Claude Code session ever registered" in cl.note
    assert rep.worktrees[0].category == "removable" and rep.stop_reason is None


def test_missing_home_with_client_worktrees_is_not_an_empty_listing(tmp_path, homes):
    repo, wt = _dead_session(tmp_path)
    rep = scan([str(repo)], claude_home=str(tmp_path / "no-such-home"), codex_home=str(homes[1]))
    assert rep.stop_reason and "does not exist" in rep.stop_reason
    assert rep.worktrees[0].category == "unverified"
    res = sweep(rep, apply=True)
    assert res.stopped and res.counts()["removed"] == 0 and wt.is_dir()


@pytest.mark.parametrize("how", ["not-a-directory", "malformed-row", "row-not-an-object"])
def test_unreadable_listing_stops_the_sweep(tmp_path, homes, how):
    repo, wt = _dead_session(tmp_path)
    sessions = homes[0] / "sessions"
    if how == "not-a-directory":
        sessions.write_text("a file where the registry directory should be\n")
    elif how == "malformed-row":
        sessions.mkdir()
        (sessions / "4242.json").write_text('{"pid": 4242, "sessionId": "torn')
    else:
        sessions.mkdir()
        (sessions / "4243.json").write_text('["pid", 4243]')
    p = cli("worktrees", "sweep", str(repo), "--apply", "--claude-home", str(homes[0]), "--codex-home", str(homes[1]))
    assert p.returncode == 3, (p.stdout, p.stderr)
    assert "SWEEP STOPPED, nothing removed" in p.stdout
    assert "1 scanned: 0 live, 0 custom-locked, 0 unmerged, 0 dirty, 0 removable, 1 unverified" in p.stdout
    assert wt.is_dir() and str(wt) in git(repo, "worktree", "list")
    (w,) = _scan(repo, homes).worktrees
    assert w.reason == "a harness listing was not read (unreadable, or not looked at): liveness is not proven either way"
    assert [r for r in evidence(w) if r["check"] == "alive"] == [
        {"check": "alive", "holds": None, "detail": "no signal says alive (some could not be taken)"}]


def _no_dac_prefix() -> tuple[str, ...]:
    if os.geteuid() != 0:
        return ()
    capsh = shutil.which("capsh")
    if not capsh:
        if os.environ.get("CI") == "true":
            pytest.fail("capsh missing: needed to test an unreadable listing as root")
        pytest.skip("capsh missing: root's override cannot be dropped to make a listing unreadable")
    return (capsh, "--drop=cap_dac_override,cap_dac_read_search", "--")


def test_listing_unreadable_by_permission_stops_the_sweep(tmp_path, homes):
    """Mode 000 on the registry directory, read by a process without root's override."""
    repo, wt = _dead_session(tmp_path)
    sessions = homes[0] / "sessions"
    sessions.mkdir()
    prefix = _no_dac_prefix()
    os.chmod(sessions, 0)
    try:
        args = ["-m", "sessionsift", "worktrees", "sweep", str(repo), "--apply", "--claude-home", str(homes[0]),
                "--codex-home", str(homes[1])]
        cmd = [*prefix, "-c", " ".join(map(_q, [sys.executable, *args]))] if prefix else [sys.executable, *args]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=str(Path(__file__).parents[1]))
    finally:
        os.chmod(sessions, 0o755)
    assert p.returncode == 3, (p.stdout, p.stderr)
    assert "SWEEP STOPPED, nothing removed" in p.stdout and "Permission denied" in p.stdout
    assert wt.is_dir()


def _q(s: str) -> str:
    import shlex

    return shlex.quote(s)


# --- main line ---------------------------------------------------------------------------------


def test_main_line_from_origin_head_and_unknown_without_one(tmp_path, homes):
    up = make_repo(tmp_path / "upstream")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", up, clone)
    wt = claude_worktree(clone, "c1")
    lock_like_claude(clone, wt, "c1", dead_pid(), 1)
    w = _scan(clone, homes).worktrees[0]
    assert w.main_line.source == "origin/HEAD" and w.main_line.ref == "refs/remotes/origin/main"
    assert w.category == "removable"
    # commits merged into the LOCAL main but not on origin's: held back (origin/HEAD is the main line)
    commit(wt, "local-only.txt")
    git(clone, "merge", "-q", "--ff-only", "worktree-c1")
    assert _scan(clone, homes).worktrees[0].category == "unmerged"
    # no origin, no main/master: unknown, held back
    odd = tmp_path / "odd"
    odd.mkdir()
    git(odd, "init", "-q", "-b", "trunk")
    commit(odd, "a.txt")
    wt2 = claude_worktree(odd, "o1")
    w2 = _scan(odd, homes).worktrees[0]
    assert w2.main_line.known is False and w2.category == "unknown" and "main line" in w2.reason
    assert w2.merge.error and w2.reason == f"merged? not known: {w2.merge.error}"
    assert [r for r in evidence(w2) if r["check"] == "merged"] == [
        {"check": "merged", "holds": None, "detail": w2.merge.error}]
    assert wt2.is_dir()


def test_directory_gone_session_is_removed_through_git(tmp_path, homes):
    repo, wt = _dead_session(tmp_path)
    shutil.rmtree(wt)
    rep = _scan(repo, homes)
    w = rep.worktrees[0]
    assert w.exists is False and w.category == "removable" and "already gone" in w.reason
    assert w.reason.endswith(" and clean (its directory is already gone: only git's record of it remains)")
    assert evidence(w)[-1] == {"check": "holds-only-its-checkout", "holds": True, "detail": "its directory is gone"}
    assert sweep(rep, apply=True).counts()["removed"] == 1
    assert git(repo, "worktree", "list", "--porcelain").count("worktree ") == 1


def test_unregistered_directory_in_a_client_location_is_reported_not_removed(tmp_path, homes):
    repo = make_repo(tmp_path / "repo")
    stray = repo / ".claude" / "worktrees" / "stray"
    stray.mkdir(parents=True)
    (stray / "file").write_text("x")
    rep = _scan(repo, homes)
    assert _cat(rep) == {"stray": "unregistered"}
    note = "a directory under <repo>/.claude/worktrees that the repository does not list as a worktree"
    assert rep.worktrees[0].reason == note
    assert evidence(rep.worktrees[0])[0] == {"check": "registered", "holds": False, "detail": note}
    assert sweep(rep, apply=True).counts()["removed"] == 0 and stray.is_dir()


def test_a_worktree_that_changed_after_the_scan_is_skipped(tmp_path, homes):
    repo, wt = _dead_session(tmp_path)
    rep = _scan(repo, homes)
    assert rep.worktrees[0].category == "removable"
    (wt / "late.txt").write_text("written after the scan\n")
    res = sweep(rep, apply=True)
    a = res.actions[str(wt)]
    assert a.result == "skipped" and "now dirty" in a.detail and wt.is_dir()


# --- hostile names -----------------------------------------------------------------------------

_RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def test_hostile_paths_branches_and_lock_reasons_print_as_one_escaped_line(tmp_path, homes):
    """Paths can carry newline, ESC and CR; a lock reason can carry anything (git stores it as
    given); a branch name cannot hold control characters (git's check-ref-format refuses them),
    but it can hold a bidi override - all of these reach the terminal escaped, one line each."""
    repo = make_repo(tmp_path / "repo")
    names = ["evil\nFORGED removable x", "esc\x1b[31mred\x1b[0m", "cr\rOVERWRITE"]
    made = []
    for i, n in enumerate(names):
        wt = add_worktree(repo, repo / ".claude" / "worktrees" / n, f"b{i}\u202eexe.txt")
        made.append(wt)
    git(repo, "worktree", "lock", "--reason", "custom\nFORGED-LOCK \x1b]0;pwn\x07", made[0])
    p = cli("worktrees", "scan", str(repo), "--claude-home", str(homes[0]), "--codex-home", str(homes[1]))
    assert p.returncode == 0, p.stderr
    assert not _RAW.findall(p.stdout), _RAW.findall(p.stdout)[:5]
    lines = p.stdout.splitlines()
    assert not any(l.startswith(("FORGED", "OVERWRITE")) for l in lines)
    heads = [l for l in lines if re.match(r"^(removable|custom-locked|unknown|live|not-session) ", l)]
    assert len(heads) == 3
    assert any("evil\\nFORGED" in l for l in heads) and any("esc\\e[31mred" in l for l in heads)
    assert any("cr\\rOVERWRITE" in l for l in heads) and all("\\u202e" in l for l in heads)
    assert any("custom\\nFORGED-LOCK \\e]0;pwn\\u0007" in l for l in lines)
    # JSON keeps the exact bytes
    j = by_path(rows(cli("worktrees", "scan", str(repo), "--claude-home", str(homes[0]), "--codex-home",
                         str(homes[1]), "--format", "json").stdout))
    assert set(j) == {str(m) for m in made}


def test_not_a_repository_is_a_target_error(tmp_path, homes):
    p = cli("worktrees", "scan", str(tmp_path), "--claude-home", str(homes[0]))
    assert p.returncode == 2 and p.stderr.startswith("sessionsift: error:") and "not inside a git" in p.stderr


def test_no_repo_named_finds_codex_worktrees_from_the_codex_home(tmp_path, homes):
    repo = make_repo(tmp_path / "repo")
    wt = add_worktree(repo, homes[1] / "worktrees" / "cd34" / "repo")
    rep = scan([], claude_home=str(homes[0]), codex_home=str(homes[1]))
    assert [r.path for r in rep.repos] == [str(repo)] and rep.repos[0].found_by == ["codex worktrees"]
    assert [w.path for w in rep.worktrees] == [str(wt)] and rep.worktrees[0].agent == "codex"
    # named scope: a codex worktree of another repository is counted as left out, not dropped
    other = make_repo(tmp_path / "other")
    rep2 = scan([str(other)], claude_home=str(homes[0]), codex_home=str(homes[1]))
    assert rep2.left_out == [str(wt)] and rep2.worktrees == []


def test_ignored_files_do_not_hold_a_worktree_but_are_named_before_they_go(tmp_path, homes):
    repo = make_repo(tmp_path / "repo")
    (repo / ".gitignore").write_text("build/\n.env\n")
    git(repo, "add", ".gitignore")
    git(repo, "commit", "-q", "-m", "ignore build output")
    wt = claude_worktree(repo, "built")
    lock_like_claude(repo, wt, "built", dead_pid(), 1)
    (wt / "build").mkdir()
    (wt / "build" / "out.bin").write_bytes(b"\0" * 4096)
    (wt / ".env").write_text("TOKEN=not-in-git\n")
    w = _scan(repo, homes).worktrees[0]
    assert w.category == "removable" and w.status.ignored == 2 and w.status.untracked == 0
    assert sorted(w.status.ignored_sample) == [".env", "build/"]
    p = cli("worktrees", "sweep", str(repo), "--claude-home", str(homes[0]), "--codex-home", str(homes[1]))
    assert "2 ignored entries go with it and cannot be brought back: " in p.stdout and "build/" in p.stdout


def test_home_names_both_harness_roots(tmp_path):
    """`--home DIR` (every other command's way to name all roots) was refused by worktrees scan
    and sweep ("No such option '--home'"). It names DIR/.claude and DIR/.codex; a harness flag
    given too wins for its harness. The worktree is made by git where Codex keeps its own."""
    home = tmp_path / "h"
    (home / ".claude").mkdir(parents=True)
    repo = make_repo(tmp_path / "repo")
    wt = add_worktree(repo, home / ".codex" / "worktrees" / "cd34" / "repo")
    for action in ("scan", "sweep"):
        p = cli("worktrees", action, "--home", str(home), "--format", "json")
        assert p.returncode == 0, p.stderr
        out = rows(p.stdout)
        h = out[0]
        assert (h["claude_home"], h["claude_home_source"]) == (str(home / ".claude"), "--home")
        assert (h["codex_home"], h["codex_home_source"]) == (str(home / ".codex"), "--home")
        assert list(by_path(out)) == [str(wt)] and by_path(out)[str(wt)]["agent"] == "codex"
    other = tmp_path / "other-codex"
    other.mkdir()
    h = rows(cli("worktrees", "scan", "--home", str(home), "--codex-home", str(other), "--format", "json").stdout)
    assert (h[0]["codex_home"], h[0]["codex_home_source"]) == (str(other), "--codex-home")
    assert h[0]["claude_home_source"] == "--home" and not by_path(h)


# --- what a removal would take with it ------------------------------------------------------------


def _ignoring_claude_worktrees(tmp_path):
    repo = make_repo(tmp_path / "repo")
    (repo / ".gitignore").write_text(".claude/worktrees/\n")
    git(repo, "add", ".gitignore")
    git(repo, "commit", "-q", "-m", "ignore the client's worktrees")
    outer = claude_worktree(repo, "outer")
    lock_like_claude(repo, outer, "outer", dead_pid(), 1)
    return repo, outer


def test_a_worktree_holding_another_registered_worktree_is_blocked_and_both_are_kept(tmp_path, homes):
    """A session started inside a session: the inner worktree sits under the outer one's ignored
    .claude/worktrees/, with a commit on main's side nowhere else and untracked work. git status
    of the outer shows only `!! .claude/`, and `git worktree remove` (no --force) deletes both.
    Before: the outer was removable and the sweep removed it with the inner inside (untracked file
    gone)."""
    repo, outer = _ignoring_claude_worktrees(tmp_path)
    inner = add_worktree(repo, outer / ".claude" / "worktrees" / "inner")  # detached: its commit has no branch
    sha = commit(inner, "only-here.txt")
    (inner / "untracked.txt").write_text("work in progress\n")
    rep = _scan(repo, homes)
    w = {x.path: x for x in rep.worktrees}
    o = w[str(outer)]
    assert o.status.dirty is False and o.status.ignored == 1 and o.merge.ahead == 0
    assert o.category == "holds-nested"
    assert o.contents.nested == [(str(inner), "a registered worktree")]
    assert str(inner) in o.reason and "removing it would remove what it holds" in o.reason
    res = sweep(rep, apply=True)
    assert res.counts()["removed"] == 0
    assert (inner / "untracked.txt").read_text() == "work in progress\n"
    assert git(inner, "rev-parse", "HEAD") == sha
    j = by_path(rows(cli("worktrees", "scan", str(repo), "--claude-home", str(homes[0]), "--codex-home",
                         str(homes[1]), "--format", "json").stdout))
    assert j[str(outer)]["category"] == "holds-nested"
    assert j[str(outer)]["contents"]["disposable"] is False
    assert j[str(outer)]["contents"]["nested"] == [{"path": str(inner), "what": "a registered worktree"}]
    assert [e["holds"] for e in j[str(outer)]["evidence"] if e["check"] == "holds-only-its-checkout"] == [False]


def test_a_nested_repository_or_another_repositorys_worktree_blocks_and_a_symlink_does_not(tmp_path, homes):
    """An independent repository (its own .git) under an ignored directory, and a worktree of a
    repository out of scope: each is history git remove would delete. A symlink to another
    worktree is not: git removes the link, never its target (the target is kept)."""
    repo, outer = _ignoring_claude_worktrees(tmp_path)
    own = make_repo(outer / ".claude" / "worktrees" / "scratch-repo")
    rep = _scan(repo, homes)
    o = {x.path: x for x in rep.worktrees}[str(outer)]
    assert o.category == "holds-nested"
    assert o.contents.nested == [(str(own), "a git repository or worktree (it has its own .git)")]
    shutil.rmtree(own)
    other = make_repo(tmp_path / "other")
    foreign = add_worktree(other, outer / ".claude" / "worktrees" / "foreign", "f")
    o = {x.path: x for x in _scan(repo, homes).worktrees}[str(outer)]
    assert o.category == "holds-nested" and [p for p, _ in o.contents.nested] == [str(foreign)]
    git(other, "worktree", "remove", foreign)
    keep = add_worktree(other, tmp_path / "kept", "k")
    (keep / "untracked.txt").write_text("kept\n")
    (outer / ".claude" / "worktrees").mkdir(parents=True, exist_ok=True)
    os.symlink(keep, outer / ".claude" / "worktrees" / "link")
    rep = _scan(repo, homes)
    o = {x.path: x for x in rep.worktrees}[str(outer)]
    assert o.category == "removable" and o.contents.disposable is True
    assert sweep(rep, apply=True).counts()["removed"] == 1
    assert not outer.exists() and (keep / "untracked.txt").read_text() == "kept\n"


def test_a_worktree_nested_after_the_scan_is_seen_right_before_the_removal(tmp_path, homes, monkeypatch):
    """The sweep's own rescan is seconds old when git removes: a worktree made inside in between
    is found by the walk taken right before `git worktree remove`."""
    from sessionsift.worktrees import sweep as S

    repo, outer = _ignoring_claude_worktrees(tmp_path)
    rep = _scan(repo, homes)
    assert {x.path: x for x in rep.worktrees}[str(outer)].category == "removable"
    real = S.read_listings
    made = []

    def late(roots):  # called by _remove after the rescan, before the walk and the removal
        if not made:
            made.append(add_worktree(repo, outer / ".claude" / "worktrees" / "late", "late"))
            (made[0] / "new.txt").write_text("new\n")
        return real(roots)

    monkeypatch.setattr(S, "read_listings", late)
    res = sweep(rep, apply=True)
    a = res.actions[str(outer)]
    assert a.result == "skipped" and "right before removal: removing it would remove" in a.detail
    assert (made[0] / "new.txt").read_text() == "new\n"


def test_an_unreadable_entry_inside_leaves_the_worktree_unknown(tmp_path, homes, monkeypatch):
    """HAND-MADE fault: these tests run as root, which reads every directory, so a directory
    that cannot be listed is injected into the walk's scandir. What it holds is not known: the
    worktree is not removable (before: removable, the walk did not exist)."""
    from sessionsift.worktrees import contents as C

    repo, outer = _ignoring_claude_worktrees(tmp_path)
    hidden = outer / ".claude" / "worktrees" / "sealed"
    hidden.mkdir(parents=True)
    real = os.scandir

    def scandir(p):
        if os.fspath(p) == str(hidden):
            raise PermissionError(13, "Permission denied")
        return real(p)

    monkeypatch.setattr(C.os, "scandir", scandir)
    rep = _scan(repo, homes)
    o = {x.path: x for x in rep.worktrees}[str(outer)]
    assert o.category == "unknown" and o.contents.disposable is None
    assert o.contents.unreadable == [(str(hidden), "Permission denied")]
    assert "what it holds is not known" in o.reason
    assert sweep(rep, apply=True).counts()["removed"] == 0 and hidden.is_dir()


def test_a_mount_point_inside_blocks_the_removal(tmp_path, homes):
    """A file system mounted under the worktree (a tmpfs here, in a mount namespace of its own):
    git remove would empty it. Needs root to mount: where unshare is refused the case cannot be
    made and the test says so."""
    repo, outer = _ignoring_claude_worktrees(tmp_path)
    mnt = outer / ".claude" / "worktrees" / "mnt"
    mnt.mkdir(parents=True)
    probe = subprocess.run(["unshare", "-m", "--propagation", "private", "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"cannot make a mount namespace here: {probe.stderr.decode(errors='replace')}")
    code = ("import os; from sessionsift.worktrees.scan import scan; from sessionsift.worktrees.sweep import sweep\n"
            "E = os.environ\n"
            "open(E['MNT'] + '/data.txt', 'w').write('on another fs')\n"
            "r = scan([E['REPO']], claude_home=E['CH'], codex_home=E['CX'])\n"
            "w = [x for x in r.worktrees if x.path == E['OUTER']][0]\n"
            "s = sweep(r, apply=True)\n"
            "print(w.category, w.contents.nested, s.counts()['removed'], os.path.exists(E['MNT'] + '/data.txt'))\n")
    env = dict(os.environ, MNT=str(mnt), REPO=str(repo), CH=str(homes[0]), CX=str(homes[1]), OUTER=str(outer),
               PY=sys.executable, CODE=code)
    p = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c",
                        'mount -t tmpfs tmpfs "$MNT" && exec "$PY" -c "$CODE"'],
                       capture_output=True, text=True, timeout=300, env=env)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == (f"holds-nested [({str(mnt)!r}, 'another file system is mounted here')] 0 True")


# --- whole verdicts: name, category, reason and every evidence row ----------------------------------


def _verdict(w) -> tuple[str, str, str, list[dict]]:
    return os.path.basename(w.path), w.category, w.reason, evidence(w)


def _rows_before_alive(name: str) -> list[dict]:
    return [{"check": "registered", "holds": True, "detail": "git lists it as a worktree"},
            {"check": "custom-lock", "holds": False, "detail": "claude-code's own generated lock reason"},
            {"check": "session", "holds": True,
             "detail": f"its lock reason is claude-code's own (session '{name}'); its path is in claude-code's "
                       "worktree location <repo>/.claude/worktrees/"}]


_MERGED_CLEAN_HOLDS_NOTHING = [
    {"check": "merged", "holds": True, "detail": "0 ahead / 0 behind refs/heads/main (local main)"},
    {"check": "clean", "holds": True, "detail": "0 tracked changes, 0 untracked, 0 ignored entries"}]


def test_a_session_alive_by_two_signals_is_live_and_names_both(tmp_path, homes):
    """A real process working inside the worktree that is also the pid its client lock names: two
    signals hold, and the reason and the alive row name each (before, a reason that ran the two
    together, or kept one, passed every test: only one-signal sessions were checked)."""
    from tests.worktree_util import start_ticks

    repo = make_repo(tmp_path / "repo")
    wt = claude_worktree(repo, "both")
    (wt / "sub").mkdir()
    with Sleeper(wt / "sub") as s:
        ticks = start_ticks(s.pid)
        lock_like_claude(repo, wt, "both", s.pid, ticks)
        (w,) = _scan(repo, homes).worktrees
        guard = f"pid {s.pid}: alive (start-time guard matched: {ticks} ticks since boot)"
        cwd = f"process(es) [{s.pid}] work inside it"
        assert _verdict(w) == (
            "both", "live", f"alive by cwd ({cwd}), lock-owner ({guard})",
            _rows_before_alive("both") + [
                {"check": "alive", "holds": True, "detail": f"cwd: {cwd}; lock-owner: {guard}"},
                *_MERGED_CLEAN_HOLDS_NOTHING,
                {"check": "holds-only-its-checkout", "holds": True,
                 "detail": "nothing inside but its checkout and what git accounts for (3 entries walked)"}])
        assert sweep(_scan(repo, homes), apply=True).counts()["removed"] == 0 and wt.is_dir()


def test_no_process_table_leaves_a_dead_merged_clean_session_unverified_and_kept(tmp_path, homes):
    """/proc with no process entries (an empty tmpfs mounted over it in a mount namespace of the
    test's own): the cwd and argv signals cannot be taken, every listing is read (absent), and the
    lock's pid is dead. Nothing says alive, but nothing can say dead either: unverified, with the
    signals that were not taken named, and the sweep removes nothing (before, a decision that
    skipped the not-taken signals made it removable and no test failed). Needs root to mount:
    where unshare is refused the case cannot be made and the test says so."""
    repo, wt = _dead_session(tmp_path)
    probe = subprocess.run(["unshare", "-m", "--propagation", "private", "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"cannot make a mount namespace here: {probe.stderr.decode(errors='replace')}")
    code = ("import base64, os, pickle; from sessionsift.worktrees.scan import scan\n"
            "from sessionsift.worktrees.sweep import sweep\n"
            "E = os.environ\n"
            "r = scan([E['REPO']], claude_home=E['CH'], codex_home=E['CX'])\n"
            "s = sweep(r, apply=True)\n"
            "print(base64.b64encode(pickle.dumps((r.listings_ok, r.worktrees, s.counts()['removed'],"
            " os.path.isdir(E['WT'])))).decode())\n")
    env = dict(os.environ, REPO=str(repo), WT=str(wt), CH=str(homes[0]), CX=str(homes[1]), PY=sys.executable,
               CODE=code, PYTHONPATH=str(Path(__file__).resolve().parents[1] / "src"))
    p = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c",
                        'mount -t tmpfs tmpfs /proc && exec "$PY" -c "$CODE"'],
                       capture_output=True, text=True, timeout=300, env=env)
    assert p.returncode == 0, p.stderr
    import base64
    import pickle

    from sessionsift.worktrees.decide import decide

    ok, (w,), removed, kept = pickle.loads(base64.b64decode(p.stdout))
    nope = "not taken: /proc has no process entries (not Linux?)"
    want = ("s1", "unverified", f"liveness is not proven either way: cwd {nope}; argv {nope}",
            _rows_before_alive("s1") + [
                {"check": "alive", "holds": None, "detail": "no signal says alive (some could not be taken)"},
                *_MERGED_CLEAN_HOLDS_NOTHING,
                {"check": "holds-only-its-checkout", "holds": True,
                 "detail": "nothing inside but its checkout and what git accounts for (2 entries walked)"}])
    assert (ok, _verdict(w), removed, kept) == (True, want, 0, True)
    # the scanned facts decided here again give the same verdict
    assert (os.path.basename(w.path), *decide(w, ok), evidence(w)) == want
