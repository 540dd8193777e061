"""A search's byte scan started before discovery (issue 16): on the fast path of a needle search
without the index, two forked workers walk `<home>/projects` themselves (each project's
`*.jsonl` and each session's `subagents/*.jsonl`, split between them by the name's hash, which
forks of one process share) and look for the needle in every file they find, while this process
runs discovery and the walk.

A worker reports only the files that do *not* hold the needle (the plain outcomes of a selective
search: their size and line count, nothing parsed), each with the open file's stat taken before and
after its read (both equal, else it reports nothing for the file). The search (SearchRun.outcomes)
takes a report for one of its lanes only when that lane's own stat, taken after discovery, is
the same, the report's kind (main or subagent, and a main file's stem as the session id) gives
the same sidecar directory the scan would probe for saved tool outputs, and no matching saved
output was found there; every other lane (a file changed in between, one a worker did not see,
one that holds the needle) is scanned as before, and files the workers saw that discovery does
not list are ignored. So the answer is the one the plain scan gives for the files as they were
when the search stat'ed them (tests/test_search_prescan.py holds the two equal).
"""

from __future__ import annotations

import os

from . import prefilter as PF

_PARTS = 2


def stat_key(st) -> tuple:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def plan_key(p) -> tuple:
    """What a plain outcome of `_scan_lane` depends on besides the file and its lane."""
    from .api import PERSISTED

    return (tuple(p.needles) if p.needles is not None else None, p.needles_ci, p.regex, p.query.count_lines,
            bool(p.count_left_out and PERSISTED in p.left_out_kinds))


def eligible(p) -> bool:
    """A plan whose not-held files are plain outcomes: a needle, no index, no per-session cap."""
    q = p.query
    return (p.needles is not None and bool(p.needles) and not p.use_index and q.max_count is None
            and not q.sessions_only)


def scan_part(p, root: str, part: int, parts: int = _PARTS) -> dict:
    """{relative path: (stat key, size, lines, kind, saved)} for the files of part `part` (by the
    name's hash: every part must be computed by forks of one process, or in one) that
    do not hold the plan's needles. `kind` "m" (a project's `<stem>.jsonl`) or "s" (under
    `<session>/subagents/`); `saved`: a saved tool output under the sidecar directory such a
    lane would have matches (then the search scans the file itself)."""
    out: dict = {}
    persisted = plan_key(p)[4]
    rx = None
    if persisted:
        from .api import _rx

        rx = _rx(p.regex) if p.regex is not None else None
    needles, ci, cl = p.needles, p.needles_ci, p.query.count_lines
    sep = os.sep
    try:
        projects = [e.name for e in os.scandir(root) if e.is_dir()]
    except OSError:
        return out
    for proj in projects:
        pdir = root + sep + proj
        files = []
        try:
            with os.scandir(pdir) as it:
                for e in it:
                    n = e.name
                    if hash(n) % parts != part:
                        continue
                    try:
                        if n.endswith(".jsonl"):
                            if e.is_file(follow_symlinks=False):
                                files.append((proj + sep + n, "m", pdir + sep + n[:-6]))
                        elif e.is_dir(follow_symlinks=False):
                            sub = pdir + sep + n + sep + "subagents"
                            try:
                                with os.scandir(sub) as it2:
                                    for e2 in it2:
                                        if e2.name.endswith(".jsonl") and e2.is_file(follow_symlinks=False):
                                            files.append((proj + sep + n + sep + "subagents" + sep + e2.name, "s",
                                                          pdir + sep + n))
                            except OSError:
                                pass
                    except OSError:
                        continue
        except OSError:
            continue
        for rel, kind, sdir in files:
            path = root + sep + rel
            fst: list = []
            try:
                held, size, nl = PF.file_holds(path, needles, ci, cl, fst)
            except OSError:
                continue
            if held or len(fst) != 2:
                continue
            k = stat_key(fst[0])
            if k != stat_key(fst[1]):
                continue
            saved = False
            if persisted:
                from .api import _TOOL_RESULTS, _saved_matching

                saved = bool(_saved_matching(p, rx, sdir + _TOOL_RESULTS))
            out[rel] = (k, size, nl, kind, saved)
    return out


class Prescan:
    """The workers of one search, forked at construction (none when forking is not possible);
    `results()` joins them: {relative path: report} of the parts that came back, and the stat
    key of the directory they walked."""

    def __init__(self, p, root: str, forked: bool = True) -> None:
        self.key = plan_key(p)
        self.root = root
        self._workers: list = []
        self._done: dict | None = None
        if not forked:
            self._done = {}
            for i in range(_PARTS):
                self._done.update(scan_part(p, root, i))
            return
        from ..read.fanout import _Worker

        for i in range(_PARTS):
            self._workers.append(_Worker(lambda i=i: scan_part(p, root, i)))

    def results(self) -> dict:
        if self._done is None:
            done: dict = {}
            for w in self._workers:
                got = w.result()
                if got:
                    done.update(got)
            self._workers = []
            self._done = done
        return self._done

    def close(self) -> None:
        for w in self._workers:
            w.close()
        self._workers = []


def start(p, home) -> Prescan | None:
    """Workers for plan `p` over data root `home` (a --claude-home), or None when not worth it."""
    from ..read.fanout import can_fork

    if not eligible(p) or not can_fork():
        return None
    root = os.path.join(os.path.abspath(os.fspath(home)), "projects")
    return Prescan(p, root)
