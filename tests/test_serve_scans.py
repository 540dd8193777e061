"""`serve`'s read-only views of `clean scan` and `worktrees scan`, in headless Chromium, against
the CLI's own JSON: the clean page over a copy of the real-client sample corpora
(examples/home), the worktrees page over a real git repository with worktrees git made (the
shapes `claude --worktree` makes, tests/worktree_util.py; the real clients' own worktrees are
tests/test_worktrees_realclient.py's). Both pages render without an error, show every row the
CLI prints with the same decision, and change nothing on disk: every file under the data root,
the repository (its .git too) and the data directory has the same bytes, mode and mtime after
the pages were read as before."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.serve_harness import REPO, Browser, env_for, serving
from tests.test_export_html import chromium  # noqa: F401 - the browser fixture
from tests.worktree_util import add_worktree, claude_worktree, commit, dead_pid, lock_like_claude, make_repo

pytest.importorskip("starlette")
pytest.importorskip("playwright")


def tree(*roots: Path) -> dict:
    """path -> (mode, size, mtime_ns, sha256) of everything under the roots (directories too)."""
    out = {}
    for r in roots:
        for d, dirs, files in os.walk(r):
            for n in dirs + files:
                p = os.path.join(d, n)
                st = os.lstat(p)
                h = None
                if os.path.isfile(p) and not os.path.islink(p):
                    with open(p, "rb") as f:
                        h = hashlib.sha256(f.read()).hexdigest()
                out[p] = (st.st_mode, st.st_size if h else None, st.st_mtime_ns, h)
    return out


def _json_rows(tmp: Path, status: int | None, *args: str) -> list[dict]:
    """status None: the one status the answer itself calls for -- 3 when its summary names a problem
    (a side file a real-client run earlier in the suite left outside the root, e.g. pi's bash log
    under /tmp, is in a footprint only where it exists), else 0."""
    p = subprocess.run([sys.executable, "-m", "sessionsift", *args, "--format", "json"], capture_output=True,
                       text=True, cwd=REPO, env=env_for(tmp), timeout=300)
    rows = [json.loads(x) for x in p.stdout.splitlines()]
    if status is None:
        summary = next(r for r in rows if r.get("kind") == "summary")
        status = 3 if summary.get("problems") else 0
    assert p.returncode == status, p.stderr
    return rows


def test_the_clean_page_is_clean_scan_and_changes_nothing(chromium, tmp_path):  # noqa: F811
    home = tmp_path / "corpus"
    shutil.copytree(REPO / "examples" / "home", home)  # the symlinked roots as copies
    srv = tmp_path / "srv"
    with serving(srv, "--home", str(home)) as s:
        b = Browser(chromium)
        try:
            page = b.page(s.base)
            page.goto(s.url)  # the sessions page: the listing is read (a reader may open a database)
            before = tree(home, srv)
            page.goto(s.base + "/clean")
            got = page.eval_on_selector_all(
                "#clean tbody tr", "trs => trs.map(tr => [tr.dataset.provider, tr.dataset.session, "
                "tr.querySelector('td.state').dataset.eligible, tr.querySelector('td.size').dataset.bytes, "
                "Array.from(tr.querySelectorAll('details.gate')).map(g => g.dataset.proven).join('')])")
            tally = page.eval_on_selector("#clean-tally", "p => Object.assign({}, p.dataset)")
            page.goto(s.base + "/clean?older_than=1d&waive_kept=1")
            assert page.locator("#clean tbody tr").count() == len(got)
            page.goto(s.base + "/clean?older_than=never-ever")
            assert "cannot read 'never-ever' as a duration" in page.text_content("#error")
            assert b.problems == [], b.problems
            after = tree(home, srv)
        finally:
            b.close()
    assert after == before
    out = _json_rows(tmp_path / "cli", None, "clean", "scan", "--home", str(home))
    want = [[r["provider"], r["session_id"], str(int(r["eligible"])),
             "" if r["size_bytes"] is None else str(r["size_bytes"]),
             "".join(str(int(r["gates"][k]["proven"])) for k in ("age", "activity", "kept"))]
            for r in out if r["kind"] == "session"]
    assert sorted(got) == sorted(want)
    assert len(got) == 68
    summ = next(r for r in out if r["kind"] == "summary")
    assert tally == {"candidates": str(summ["candidates"]), "eligible": str(summ["eligible"]),
                     "blocked": str(summ["blocked"]), "bytesHeld": str(summ["bytes_held"])}


def test_the_worktrees_page_is_worktrees_scan_and_changes_nothing(chromium, tmp_path):  # noqa: F811
    repo = make_repo(tmp_path / "repo")
    for name in ("clean", "commit", "dirty"):  # locked as Claude Code locks them, by a session gone
        lock_like_claude(repo, claude_worktree(repo, name), name, dead_pid(), 1)
    commit(repo / ".claude" / "worktrees" / "commit", "work.txt")
    (repo / ".claude" / "worktrees" / "dirty" / "scratch.txt").write_text("not committed\n")
    add_worktree(repo, tmp_path / "mine", "my-feature")
    commit(repo, "main-moved.txt")
    home = tmp_path / "home-root"
    (home / ".claude").mkdir(parents=True)  # the clients' homes exist: their listings are read (and absent)
    (home / ".codex").mkdir()
    srv = tmp_path / "srv"
    with serving(srv, "--home", str(home)) as s:
        b = Browser(chromium)
        try:
            page = b.page(s.base)
            page.goto(s.url)
            before = tree(repo, tmp_path / "mine", home, srv)
            page.goto(s.base + "/worktrees?repo=" + str(repo))
            got = dict(page.eval_on_selector_all("#worktrees tbody tr",
                                                 "trs => trs.map(tr => [tr.dataset.path, tr.dataset.category])"))
            tally = page.text_content("#wt-tally")
            page.goto(s.base + "/worktrees")  # no repository named, none in a client record
            assert "no repository in scope" in page.text_content("#none")
            page.goto(s.base + "/worktrees?repo=" + str(tmp_path / "nowhere"))
            assert "no such directory" in page.text_content("#error")
            assert b.problems == [], b.problems
            after = tree(repo, tmp_path / "mine", home, srv)
        finally:
            b.close()
    assert after == before
    out = _json_rows(tmp_path / "cli", 0, "worktrees", "scan", str(repo), "--home", str(home))
    want = {r["path"]: r["category"] for r in out if r["kind"] == "worktree"}
    assert got == want
    assert sorted(want.values()) == ["dirty", "not-session", "removable", "unmerged"]
    assert tally.startswith(next(r for r in out if r["kind"] == "summary")["tally_line"])


def test_the_worktrees_page_runs_nothing_a_hostile_repository_config_names(chromium, tmp_path):  # noqa: F811
    """A repository named in /worktrees?repo= may hold a config of its own that makes git run
    programs: `core.fsmonitor` (git status runs it), a filter driver's `clean` command (status runs
    it on a file whose stat changed), hooks. The config is written by git itself (`git config`); the
    programs are scripts that append their name to a marker file. Reading the page runs none of
    them, and the scan still answers for the repository (its worktree listed, clean)."""
    marker = tmp_path / "ran"
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    for name in ("fsmonitor", "clean", "smudge", "process", "hook"):
        (bin_ / name).write_text(f"#!/bin/sh\necho {name} >> '{marker}'\ncat\n")
        (bin_ / name).chmod(0o755)
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    for h in ("post-index-change", "reference-transaction", "post-checkout"):
        (hooks / h).write_text(f"#!/bin/sh\necho hook-{h} >> '{marker}'\n")
        (hooks / h).chmod(0o755)
    repo = make_repo(tmp_path / "repo")
    (repo / ".gitattributes").write_text("* filter=evil\n")
    commit(repo, "tracked.txt")
    wt = add_worktree(repo, tmp_path / "wt", "feature")
    from tests.worktree_util import git

    for k, v in (("core.fsmonitor", bin_ / "fsmonitor"), ("filter.evil.clean", bin_ / "clean"),
                 ("filter.evil.smudge", bin_ / "smudge"), ("core.hooksPath", hooks)):
        git(repo, "config", k, str(v))
    for f in (repo / "README", wt / "tracked.txt"):  # a stat change: status reads the content (clean filter)
        st = os.stat(f)
        os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))
    home = tmp_path / "home-root"
    (home / ".claude").mkdir(parents=True)
    srv = tmp_path / "srv"
    with serving(srv, "--home", str(home)) as s:
        b = Browser(chromium)
        try:
            page = b.page(s.base)
            page.goto(s.url)
            page.goto(s.base + "/worktrees?repo=" + str(repo))
            got = page.eval_on_selector_all(
                "#worktrees tbody tr", "trs => trs.map(tr => [tr.dataset.path, tr.querySelector('td.dirty').textContent])")
            assert b.problems == [], b.problems
        finally:
            b.close()
    assert not marker.exists(), marker.read_text()
    assert got == [[str(wt), "clean"]]
