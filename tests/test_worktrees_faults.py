"""Cross-linked worktrees (issue 24, item 2's fault injection widened): two repositories in one
sweep whose worktrees reach into each other -- a worktree of one registered inside the other's
ignored .claude/worktrees/, symlinks from each to the other (a cycle) and to itself (a loop), a
hard link to a file of a kept worktree -- on real git repositories with real worktrees made by
git. Only the worktree holding nothing but its checkout and links is removed; everything the
links reach, and the nested worktree's commit and untracked work, are there afterwards (judged
on a snapshot of every file taken before, not through sessionsift's model)."""
from __future__ import annotations

import os

import pytest

from sessionsift.worktrees.scan import scan
from sessionsift.worktrees.sweep import sweep
from tests.clean_util import snapshot
from tests.worktree_util import add_worktree, claude_worktree, commit, dead_pid, git, lock_like_claude, make_repo

FIG = {"repositories": 0, "worktrees": 0, "links": 0, "removed": 0, "blocked": 0, "files_checked": 0, "lost": 0}


@pytest.fixture
def homes(tmp_path):
    ch, cx = tmp_path / "claude-home", tmp_path / "codex-home"
    ch.mkdir()
    cx.mkdir()
    return ch, cx


def _repo(path):
    repo = make_repo(path)
    (repo / ".gitignore").write_text(".claude/worktrees/\n")
    git(repo, "add", ".gitignore")
    git(repo, "commit", "-q", "-m", "ignore the client's worktrees")
    return repo


def _outside(snap: dict[str, str], gone: str) -> dict[str, str]:
    """Files not inside the removed worktree and not git's own bookkeeping."""
    return {p: h for p, h in snap.items() if not p.startswith(gone + os.sep) and f"{os.sep}.git{os.sep}" not in p
            and not p.endswith(f"{os.sep}.git")}


def test_cross_linked_worktrees_of_two_repositories_lose_nothing(tmp_path, homes):
    a, b = _repo(tmp_path / "a"), _repo(tmp_path / "b")
    a1 = claude_worktree(a, "a1")  # clean, merged, its client dead: removable on its own
    lock_like_claude(a, a1, "a1", dead_pid(), 1)
    b1 = claude_worktree(b, "b1")
    lock_like_claude(b, b1, "b1", dead_pid(), 1)
    # b's worktree registered inside a1's ignored folder: a commit nowhere else, untracked work
    bx = add_worktree(b, a1 / ".claude" / "worktrees" / "bx")
    sha = commit(bx, "only-in-bx.txt")
    (bx / "untracked.txt").write_text("work in progress\n")
    links = b1 / ".claude" / "worktrees"
    links.mkdir(parents=True)
    os.symlink(a1, links / "to-a1")                                  # b1 -> a1
    os.symlink(b1, a1 / ".claude" / "worktrees" / "to-b1")           # a1 -> b1: a cycle
    os.symlink(b1, links / "loop")                                   # b1 -> b1: a loop
    os.link(bx / "untracked.txt", links / "hard-link-to-bx.txt")     # the same inode as bx's work
    before = snapshot(tmp_path)

    rep = scan([str(a), str(b)], claude_home=str(homes[0]), codex_home=str(homes[1]))
    w = {x.path: x for x in rep.worktrees}
    assert w[str(a1)].category == "holds-nested"
    assert w[str(a1)].contents.nested == [(str(bx), "a registered worktree")]
    assert w[str(b1)].category == "removable" and w[str(b1)].contents.disposable is True
    assert w[str(bx)].category != "removable"  # not a client's worktree, and it has work
    res = sweep(rep, apply=True)
    assert res.counts()["removed"] == 1 and res.actions[str(b1)].result == "removed"
    assert not b1.exists() and a1.is_dir()

    after = snapshot(tmp_path)
    kept = _outside(before, str(b1))
    lost = sorted(p for p, h in kept.items() if after.get(p) != h)
    assert lost == []
    assert (bx / "untracked.txt").read_text() == "work in progress\n" and git(bx, "rev-parse", "HEAD") == sha
    assert os.path.islink(a1 / ".claude" / "worktrees" / "to-b1")  # the link is a1's: kept, now dangling
    again = {x.path: x for x in scan([str(a), str(b)], claude_home=str(homes[0]), codex_home=str(homes[1])).worktrees}
    assert str(b1) not in again and again[str(a1)].category == "holds-nested"
    FIG["repositories"] += 2
    FIG["worktrees"] += len(rep.worktrees)
    FIG["links"] += 4
    FIG["removed"] += res.counts()["removed"]
    FIG["blocked"] += sum(1 for x in rep.worktrees if x.category == "holds-nested")
    FIG["files_checked"] += len(kept)
    FIG["lost"] += len(lost)


def test_figures(capsys):
    with capsys.disabled():
        print(f"\nworktrees cross-linked: {FIG['repositories']} repositories, {FIG['worktrees']} worktrees, "
              f"{FIG['links']} links (2 symlinks forming a cycle, a self-loop, a hard link), "
              f"{FIG['blocked']} blocked as holds-nested, {FIG['removed']} removed, "
              f"{FIG['files_checked']} files checked after, {FIG['lost']} lost")
    assert FIG["lost"] == 0 and FIG["removed"] == 1
