"""`worktrees scan`, `worktrees sweep` (docs/worktrees.md)."""

from __future__ import annotations

import shlex

import click

from .exit import ExitStatus
from .output import Out, esc


def e(s) -> str:
    """Escape for a terminal, including undecodable file-name bytes (shown as \\xNN)."""
    if isinstance(s, str):
        try:
            s.encode("utf-8")
        except UnicodeEncodeError:
            s = s.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return esc(s)


def _size(n: int | None) -> str:
    if n is None:
        return "size ?"
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


def _options(f):
    from .invocation import targeting

    f = click.option("--no-size", is_flag=True, help="Do not measure each worktree's size on disk.")(f)
    f = targeting(targets=None)(f)
    f = click.argument("repos", nargs=-1, type=click.Path())(f)
    return f


def _roots(inv):
    """(claude_home, codex_home, home) for the scan: the harness roots of the command line."""
    inv.refuse("--provider", "--since", "--until", "--project", "--sessions-from",
               why="lists the worktrees of the repositories, not sessions")
    return harness_roots(inv)


def harness_roots(inv):
    """(claude_home, codex_home, home) as the command line named them (serve's worktrees page too)."""
    from ..worktrees import harness as H

    req = inv.root_request()
    return req.roots.get(H.in_repo()), req.roots.get(H.in_home()), inv.home


@click.group("worktrees")
def worktrees_cmd():
    """Agent git worktrees: what exists, who made it, whether anything says it is alive, and
    which can be removed with nothing lost (docs/worktrees.md).

    Example: sessionsift worktrees scan ~/src/myrepo

    Example: sessionsift worktrees sweep ~/src/myrepo --apply
    """


@worktrees_cmd.command("scan")
@_options
def scan_cmd(inv, repos, no_size):
    """Every linked worktree of REPO (any path inside a repository; none = the repositories the
    clients' own records name), with size, branch, HEAD, dirty state, commits not on the main
    line, lock, agent and session, the liveness signals and one decision each.

    Example: sessionsift worktrees scan . --format json
    """
    from ..worktrees.scan import scan

    claude_home, codex_home, home = _roots(inv)
    rep = scan(list(repos), claude_home, codex_home, measure_size=not no_size, home=home)
    return _emit(rep, None, inv.fmt, "scan")


@worktrees_cmd.command("sweep")
@_options
@click.option("--apply", is_flag=True, help="Remove the removable worktrees (default: dry run).")
def sweep_cmd(inv, repos, no_size, apply):
    """Remove (git worktree remove, then prune) only the worktrees that are agent sessions, not
    custom-locked, not alive by any signal, clean and fully merged. Dry run unless --apply; stops
    without removing anything if a harness listing of running sessions cannot be read.

    Example: sessionsift worktrees sweep . --apply
    """
    from ..worktrees.scan import scan
    from ..worktrees.sweep import sweep

    claude_home, codex_home, home = _roots(inv)
    rep = scan(list(repos), claude_home, codex_home, measure_size=not no_size, home=home)
    res = sweep(rep, apply=apply)
    return _emit(rep, res, inv.fmt, "sweep")


def worktree_row(w, action) -> dict:
    from ..worktrees import harness as H
    from ..worktrees.decide import evidence

    st = w.status
    return {
        "path": w.path, "repo": w.repo or None, "registered": w.registered, "admin_dir": w.admin_dir,
        "exists": w.exists, "head": w.head, "branch": w.branch, "detached": w.detached, "prunable": w.prunable,
        "lock": w.lock.to_json(), "agent": w.agent, "agent_kind": w.agent_kind, "client_name": w.client_name,
        "made_by": w.made_by, "session_ids": [{"id": k, "source": v} for k, v in w.session_ids.items()],
        **H.metadata_fields(w),
        "size_bytes": w.size.bytes, "files": w.size.files, "size_note": w.size.note,
        "dirty": st.dirty, "status": {"tracked": st.tracked, "untracked": st.untracked, "ignored": st.ignored,
                                      "in_progress": st.in_progress, "sample": st.sample,
                                      "ignored_sample": st.ignored_sample, "error": st.error},
        "main_line": w.main_line.to_json(), "ahead": w.merge.ahead, "behind": w.merge.behind,
        "ahead_unique": w.merge.ahead_unique, "diverged": w.diverged, "merge_error": w.merge.error,
        "contents": w.contents.to_json(),
        "signals": [s.to_json() for s in w.signals], "live": w.live if w.signals else None,
        "category": w.category, "reason": w.reason, "evidence": evidence(w), "problems": w.problems,
        "action": action.to_json() if action is not None else None,
    }


def _emit(rep, res, fmt: str, what: str) -> int:
    from ..worktrees import decide as D

    out = Out(fmt, "worktrees")
    ro = rep.roots
    out.header(action=what, scope=rep.scope, claude_home=None if ro.claude is None else str(ro.claude),
               claude_home_source=ro.claude_source, codex_home=None if ro.codex is None else str(ro.codex),
               codex_home_source=rep.roots.codex_source, apply=bool(res and res.applied))
    for r in rep.repos:
        out.row("repo", r.to_json())
        ml = r.main_line
        out.text(f"repository {e(r.path)}  main line: "
                 + (f"{e(ml.ref)} @ {ml.sha[:12]} ({e(ml.source)})" if ml.known else e(ml.source))
                 + (f"  ERROR: {e(r.error)}" if r.error else ""))
    order = {c: i for i, c in enumerate(D.CATEGORIES)}
    for w in sorted(rep.worktrees, key=lambda w: (order[w.category], w.repo, w.path)):
        act = res.actions.get(w.path) if res else None
        out.row("worktree", worktree_row(w, act))
        _text_worktree(out, w, act)
    t = rep.tally()
    assert sum(t.values()) == len(rep.worktrees)
    if rep.diverged:
        out.text("")
        out.text("diverged - the branch and the main line both moved; flagged for a person, never resolved here:")
        for w in rep.diverged:
            out.text(f"  {e(w.name)} at {e(w.path)}: {w.merge.ahead} commit(s) not on {e(w.main_line.ref)}, "
                     f"which gained {w.merge.behind} since they forked")
    out.text("")
    for l in rep.listings:
        if not l.looked:
            out.text(f"harness listing {l.harness}: {e(l.state)}")
            continue
        out.text(f"harness listing {l.harness}: {e(l.state)} at {e(l.path)} ({l.entries} entries, {l.live} live)"
                 + (f" - {e(l.note)}" if l.note else ""))
        for p, why in l.unreadable[:5]:
            out.text(f"  unreadable: {e(p)}: {e(why)}")
    pt = rep.procs
    out.text(f"processes: {len(pt.procs)} read" + (f", {pt.uninspectable} whose cwd could not be inspected"
                                                   if pt.uninspectable else "")
             if pt.available else f"processes: not read ({e(pt.error)})")
    for p, why in rep.problems:
        out.text(f"problem: {e(p)}: {e(why)}")
    if rep.left_out:
        out.text(f"left out: {len(rep.left_out)} codex worktree(s) of repositories not named, e.g. {e(rep.left_out[0])}")
    if not rep.repos and not rep.worktrees:
        out.text("no repository in scope" + ("" if rep.scope.startswith("named") else
                                             ": no client record names one; name REPO to scan it"))
    out.text(D.tally_line(t))
    stop = rep.stop_reason
    summary = dict(scanned=len(rep.worktrees), tally=t, tally_line=D.tally_line(t),
                   diverged=[{"path": w.path, "branch": w.branch, "ahead": w.merge.ahead, "behind": w.merge.behind}
                             for w in rep.diverged],
                   listings=[l.to_json() for l in rep.listings], processes=pt.to_json(),
                   problems=[{"path": p, "why": why} for p, why in rep.problems], left_out=rep.left_out,
                   repos=len(rep.repos))
    if res is None:
        summary["sweep_would_stop"] = stop
        if stop:
            out.text(f"a sweep would stop: {e(stop)}")
    else:
        c = res.counts()
        summary.update(applied=res.applied, stopped=res.stopped, results=c,
                       prunes=[p.to_json() for p in res.prunes])
        if res.stopped:
            out.text(f"SWEEP STOPPED, nothing removed: {e(res.stopped)}")
        elif not res.applied:
            out.text(f"dry run: nothing removed; --apply would remove {c['would-remove']} worktree(s)")
        else:
            out.text(f"removed {c['removed']}, failed {c['failed']}, skipped {c['skipped']} (changed since the scan)")
            for p in res.prunes:
                out.text(f"prune {e(p.repo)}: {e(p.detail)}")
    out.summary(**summary)
    bad = bool(rep.problems or stop or any(r.error for r in rep.repos)
               or (res is not None and (res.stopped or res.counts()["failed"])))
    if not rep.worktrees:
        return ExitStatus.INCOMPLETE if bad else ExitStatus.NO_MATCH
    return ExitStatus.INCOMPLETE if bad else ExitStatus.OK


def _text_worktree(out: Out, w, act) -> None:
    lk = w.lock
    lock = {"none": "unlocked", "client": f"client lock (pid {lk.pid})",
            "custom": f"custom lock {e(lk.reason)!s}" if lk.reason else "locked without a reason"}[lk.state]
    who = f"{w.agent} {w.agent_kind or ''} {e(w.client_name) if w.client_name else ''}".strip() if w.agent else "no agent"
    head = (w.head or "?")[:12]
    where = (f"{e(w.branch) if w.branch else 'detached'} @ {head}" if w.registered else "not a git worktree")
    out.text(f"{w.category:<14} {e(w.path)}  [{where}]  "
             f"{_size(w.size.bytes)}  {who}; {lock}")
    out.text(f"  why: {e(w.reason)}")
    if w.session_ids:
        out.text("  sessions: " + ", ".join(e(s) for s in w.session_ids))
    if w.signals:
        out.text("  signals: " + " · ".join(
            f"{s.signal}{'' if s.signal in ('cwd', 'argv', 'lock-owner') else ' ' + s.source}="
            f"{'yes' if s.positive else '?' if s.positive is None else 'no'}" for s in w.signals))
        for s in w.signals:
            if s.positive or s.positive is None:
                out.text(f"    {s.signal}: {e(s.detail)}")
    if w.status.ignored and w.category == "removable":
        out.text(f"  note: {w.status.ignored} ignored entr{'y' if w.status.ignored == 1 else 'ies'} go with it and "
                 "cannot be brought back: " + ", ".join(e(x) for x in w.status.ignored_sample)
                 + (" ..." if w.status.ignored > len(w.status.ignored_sample) else ""))
    if act is not None:
        out.text(f"  sweep: {act.result}" + (f" - {e(act.detail)}" if act.result not in ("would-remove", "removed")
                                              else ""))
        if act.result in ("would-remove", "removed") and act.restore:
            out.text("  restore: " + e(" && ".join(shlex.join(c) for c in act.restore)))
