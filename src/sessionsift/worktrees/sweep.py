"""`worktrees sweep`: remove, with git's own commands, exactly the worktrees scan calls removable.

Dry-run unless `apply`. With `apply`:
1. If any harness listing could not be read the sweep stops before removing anything and says
   why (it does not finish on an assumption for anything not yet verified).
2. Each repository with removable worktrees is scanned again (no sizes), so every decision
   rests on facts taken seconds before; a worktree whose category or HEAD changed is skipped.
3. Right before each removal the processes are read once more (signals 1 and 2), and the
   worktree's directory is walked once more: one that now holds another worktree, a repository
   or a mount point (or an entry that cannot be read) is skipped (contents.py).
4. `git worktree unlock` (only a client's own stale lock; never a custom one), then
   `git worktree remove` WITHOUT --force, so git itself refuses anything modified or
   untracked; if the removal fails the lock is put back with its original reason.
5. An emptied `$CODEX_HOME/worktrees/<id>/` parent is removed (rmdir: only when empty).
6. `git worktree prune` runs once per repository, only when its own dry run would prune
   nothing but worktrees this sweep removed; otherwise it is skipped and the others named.

Branches are kept: a removed worktree's branch (merged) stays, and each row carries the argv
that brings the worktree back (`git worktree add`; the client's stale lock is not put back: it
named a process that is gone). Files git ignores
(build output, node_modules, .env ...) are deleted by `git worktree remove` and cannot be
brought back; scan counts them (`ignored`) so a person can see them first.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from . import gitcmd as G
from . import harness as H
from . import contents as C
from . import procs as P
from .scan import ScanReport, Worktree, _signals, read_listings, scan


@dataclass
class Action:
    path: str
    repo: str
    result: str
    """`would-remove` (dry run) | `removed` | `failed` | `skipped` (changed since the scan) |
    `not-run` (the sweep stopped)."""
    detail: str = ""
    steps: list[str] = field(default_factory=list)
    restore: list[list[str]] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"path": self.path, "repo": self.repo, "result": self.result, "detail": self.detail,
                "steps": self.steps, "restore": self.restore}


@dataclass
class Prune:
    repo: str
    ran: bool
    detail: str

    def to_json(self) -> dict:
        return {"repo": self.repo, "ran": self.ran, "detail": self.detail}


@dataclass
class SweepResult:
    report: ScanReport
    applied: bool
    stopped: str | None
    actions: dict[str, Action] = field(default_factory=dict)
    prunes: list[Prune] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        out = {k: 0 for k in ("would-remove", "removed", "failed", "skipped", "not-run")}
        for a in self.actions.values():
            out[a.result] += 1
        return out


def restore_argv(w: Worktree) -> list[list[str]]:
    add = ["git", "-C", w.repo, "worktree", "add"]
    if w.branch and not w.detached:
        cmds = [add + [w.path, w.branch]]
    else:
        cmds = [add + ["--detach", w.path, w.head or "HEAD"]]
    return cmds


def sweep(report: ScanReport, apply: bool = False) -> SweepResult:
    res = SweepResult(report, apply, report.stop_reason)
    removable = [w for w in report.worktrees if w.category == "removable"]
    if res.stopped:
        for w in removable:
            res.actions[w.path] = Action(w.path, w.repo, "not-run", f"sweep stopped: {res.stopped}")
        return res
    if not apply:
        for w in removable:
            res.actions[w.path] = Action(w.path, w.repo, "would-remove", w.reason, restore=restore_argv(w))
        return res
    by_repo: dict[str, list[Worktree]] = {}
    for w in removable:
        by_repo.setdefault(w.repo, []).append(w)
    for repo, items in sorted(by_repo.items()):
        r = report.roots
        fresh = scan([repo], claude_home=None if r.claude is None else str(r.claude),
                     codex_home=None if r.codex is None else str(r.codex),
                     measure_size=False, workers=2)
        if fresh.stop_reason:
            res.stopped = fresh.stop_reason
            for w in removable:
                res.actions.setdefault(w.path, Action(w.path, w.repo, "not-run", f"sweep stopped: {fresh.stop_reason}"))
            return res
        now = {w.path: w for w in fresh.worktrees}
        removed_ids: set[str] = set()
        for w in sorted(items, key=lambda w: w.path):
            f = now.get(w.path)
            if f is None:
                res.actions[w.path] = Action(w.path, repo, "skipped", "no longer listed by its repository")
                continue
            if f.category != "removable" or f.head != w.head:
                res.actions[w.path] = Action(w.path, repo, "skipped",
                                             f"changed since the scan: now {f.category} ({f.reason})"
                                             + ("" if f.head == w.head else f"; HEAD {w.head} -> {f.head}"))
                continue
            try:
                res.actions[w.path] = a = _remove(f, fresh)
            except _Stop as stop:
                res.stopped = str(stop)
                for x in removable:
                    res.actions.setdefault(x.path, Action(x.path, x.repo, "not-run", f"sweep stopped: {stop}"))
                return res
            if a.result == "removed" and f.admin_dir:
                removed_ids.add(os.path.basename(f.admin_dir))
        res.prunes.append(_prune(repo, removed_ids))
    return res


def _remove(w: Worktree, fresh: ScanReport) -> Action:
    a = Action(w.path, w.repo, "failed", restore=restore_argv(w))
    cl, cl_rows, cx, cx_threads = read_listings(fresh.roots)
    for lst in (cl, cx):
        if not lst.readable:
            raise _Stop(f"the {lst.harness} listing of running sessions at {lst.path} became {lst.state}"
                        if lst.looked else lst.stop_reason)
    table = P.snapshot()
    sig = _signals(w, table, cl, cl_rows, cx, cx_threads)
    if any(s.positive or s.positive is None for s in sig):
        a.result = "skipped"
        a.detail = "alive right before removal: " + "; ".join(s.detail for s in sig if s.positive or s.positive is None)
        return a
    if w.exists:
        held = C.walk(w.path, fresh.registered)
        if held.disposable is not True:
            a.result = "skipped"
            a.detail = "right before removal: " + C.describe(held)
            return a
    unlocked = False
    if w.lock.state == "client":
        try:
            G.run(w.repo, "worktree", "unlock", w.path)
            unlocked = True
            a.steps.append("git worktree unlock")
        except G.GitError as exc:
            a.detail = f"unlock failed: {exc}"
            return a
    try:
        G.run(w.repo, "worktree", "remove", w.path)
        a.steps.append("git worktree remove")
    except G.GitError as exc:
        a.detail = f"git refused the removal: {exc}"
        if unlocked:
            try:
                G.run(w.repo, "worktree", "lock", "--reason", w.lock.reason or "", w.path)
                a.steps.append("git worktree lock (put back)")
            except G.GitError as exc2:
                a.detail += f"; putting the lock back failed too: {exc2}"
        return a
    a.result = "removed"
    a.detail = w.reason
    parent = os.path.dirname(w.path)
    wdir = H.worktree_dir(w.agent, fresh.roots.of(w.agent))  # a client's per-worktree parent dirs
    if wdir is not None and P.inside(os.path.realpath(parent), os.path.realpath(wdir)) \
            and os.path.realpath(parent) != os.path.realpath(wdir):
        try:
            os.rmdir(parent)
            a.steps.append("rmdir the emptied codex worktree parent")
        except OSError:
            pass
    return a


class _Stop(Exception):
    pass


_PRUNE_LINE = re.compile(r"^Removing worktrees/(.+?): ", re.M)


def _prune(repo: str, removed_ids: set[str]) -> Prune:
    try:
        dry = G.run(repo, "worktree", "prune", "--dry-run", "--verbose")
    except G.GitError as exc:
        return Prune(repo, False, f"prune dry run failed: {exc}")
    would = set(_PRUNE_LINE.findall(G.text(dry.stdout + dry.stderr)))
    others = sorted(would - removed_ids)
    if others:
        return Prune(repo, False, "skipped: it would also prune worktree records this sweep did not decide: "
                                  + ", ".join(others))
    try:
        G.run(repo, "worktree", "prune")
    except G.GitError as exc:
        return Prune(repo, False, f"prune failed: {exc}")
    return Prune(repo, True, "git worktree prune" + (f" ({len(would)} record(s))" if would else ": nothing left to prune"))
