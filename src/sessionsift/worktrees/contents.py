"""What removing a worktree's directory would take with it, besides its own checkout.

`git worktree remove` deletes everything under the worktree's directory that git status does not
call modified or untracked, ignored entries included - and a directory git ignores may hold
another registered worktree (a session started inside a session: `<wt>/.claude/worktrees/<x>`),
an independent repository with commits nowhere else, or another file system mounted there. None
of those is proven disposable by the outer worktree being clean and merged, so each one found
blocks the removal (decide.py `holds-nested`), and an entry that cannot be read leaves the
answer unknown (never read as "nothing there").

The walk is one pass of `os.scandir` from the worktree's directory: symlinks are never followed
(git removes the link, not its target), the worktree's own top-level `.git` is not entered, a
directory holding a `.git` entry is reported and not entered, a directory on another device is
reported and not entered.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field


@dataclass
class Contents:
    nested: list[tuple[str, str]] = field(default_factory=list)
    """(path, what it is) of every registered worktree, repository or mount point inside."""
    unreadable: list[tuple[str, str]] = field(default_factory=list)
    """(path, why) of entries that could not be read: what they hold is unknown."""
    walked: int = 0
    error: str | None = None
    """The walk was not taken (`not taken`, or the directory itself could not be read)."""

    @property
    def disposable(self) -> bool | None:
        """True: nothing inside but the checkout and files git accounts for; False: something
        that is not; None: not known (not walked, or entries unreadable)."""
        if self.nested:
            return False
        if self.error is not None or self.unreadable:
            return None
        return True

    def to_json(self) -> dict:
        return {"disposable": self.disposable, "nested": [{"path": p, "what": w} for p, w in self.nested],
                "unreadable": [{"path": p, "why": w} for p, w in self.unreadable], "walked": self.walked,
                "error": self.error}


LIMIT = 20
"""At most this many nested or unreadable entries are named (the walk still decides on all)."""


def walk(path: str, registered: set[str]) -> Contents:
    """Every nested worktree, repository or mount point under `path`. `registered`: the real
    paths of every worktree (main ones too) git lists for the repositories in scope - one
    whose `.git` file is gone is still found by its path."""
    out = Contents()
    try:
        top = os.lstat(path)
    except OSError as exc:
        out.error = f"{path}: {exc.strerror}"
        return out
    dev = top.st_dev
    real_top = os.path.realpath(path)
    stack = [path]
    more = 0
    while stack:
        d = stack.pop()
        try:
            with os.scandir(d) as it:
                ents = list(it)
        except OSError as exc:
            if d == path:
                out.error = f"{path}: {exc.strerror}"
                return out
            if len(out.unreadable) < LIMIT:
                out.unreadable.append((d, exc.strerror or str(exc)))
            else:
                more += 1
            continue
        if d != path and any(e.name == ".git" for e in ents):
            out.nested.append((d, "a git repository or worktree (it has its own .git)"))
            continue
        for e in ents:
            out.walked += 1
            if d == path and e.name == ".git":
                continue
            try:
                st = e.stat(follow_symlinks=False)
            except OSError as exc:
                if len(out.unreadable) < LIMIT:
                    out.unreadable.append((e.path, exc.strerror or str(exc)))
                else:
                    more += 1
                continue
            if not e.is_dir(follow_symlinks=False):
                continue
            if st.st_dev != dev:
                out.nested.append((e.path, "another file system is mounted here"))
                continue
            if os.path.realpath(e.path) in registered and os.path.realpath(e.path) != real_top:
                out.nested.append((e.path, "a registered worktree"))
                continue
            stack.append(e.path)
    if more:
        out.unreadable.append(("...", f"{more} more unreadable entries"))
    out.nested.sort()
    return out


def describe(c: Contents) -> str:
    """One line: what it holds that is not proven disposable, or why that is not known."""
    if c.nested:
        shown = "; ".join(f"{p} ({what})" for p, what in c.nested[:5])
        return f"removing it would remove what it holds: {shown}" + (
            f"; and {len(c.nested) - 5} more" if len(c.nested) > 5 else "")
    if c.error is not None:
        return f"what it holds is not known: {c.error}"
    if c.unreadable:
        shown = "; ".join(f"{p}: {why}" for p, why in c.unreadable[:5])
        return f"what it holds is not known: {len(c.unreadable)} entr(y/ies) could not be read ({shown})"
    return f"nothing inside but its checkout and what git accounts for ({c.walked} entries walked)"
