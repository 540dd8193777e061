"""The sweep's predicates, in order; the first that holds decides (in this order: is it even a
session, is its lock custom, does anything say it is alive, and only then merged and clean).

| category | holds when |
|---|---|
| `unregistered` | a directory in a client's worktree location that its repository does not list as a worktree (or whose repository is gone): git cannot remove it, a person decides |
| `custom-locked` | locked with a reason that is not a client's generated one (or with no reason): standing infrastructure, never removed by default |
| `not-session` | nothing says an agent made it (no client lock, not in a client's worktree location, no client metadata): a person's own worktree |
| `live` | any liveness signal is positive (or cannot prove the session dead) |
| `unverified` | a harness listing could not be read, or a signal could not be taken (no /proc): nothing not already proven live is decided |
| `unknown` | a fact the decision needs could not be taken (main line unknown, git failed) |
| `unmerged` | HEAD has commits the main line lacks (`diverged` too when the main line also moved) |
| `dirty` | tracked changes, untracked entries, or a rebase/merge/cherry-pick/bisect under way |
| `holds-nested` | its directory holds another registered worktree, a git repository or a mount point (often under an ignored directory, which `git worktree remove` deletes): removing it would remove them |
| `unknown` | also: an entry inside could not be read, so what removal would take is not known |
| `removable` | a session, not custom-locked, not alive by any signal, fully merged, clean, and holding nothing but its checkout and what git accounts for |
"""

from __future__ import annotations

from .contents import describe

CATEGORIES = ("live", "custom-locked", "unmerged", "dirty", "removable",
              "holds-nested", "not-session", "unknown", "unverified", "unregistered")
CORE = ("live", "custom-locked", "unmerged", "dirty", "removable")


def decide(w, listings_ok: bool) -> tuple[str, str]:
    """(category, reason) for a scanned worktree `w` (scan.Worktree)."""
    if not w.registered:
        return "unregistered", w.registration_note or "its repository does not list it as a worktree"
    if w.lock.state == "custom":
        r = w.lock.reason
        return "custom-locked", (f"locked with a custom reason {r!r}: standing infrastructure" if r
                                 else "locked without a reason (not a client's lock): standing infrastructure")
    if w.agent is None:
        return "not-session", "nothing says an agent made it (no client lock, location or metadata)"
    pos = [s for s in w.signals if s.positive]
    if pos:
        return "live", "alive by " + ", ".join(f"{s.signal} ({s.detail})" for s in pos)
    if not listings_ok:
        return "unverified", "a harness listing was not read (unreadable, or not looked at): liveness is not proven either way"
    blind = [s for s in w.signals if s.positive is None]
    if blind:
        return "unverified", "liveness is not proven either way: " + "; ".join(
            f"{s.signal} {s.detail}" for s in blind)
    if w.merge.error is not None or w.merge.ahead is None:
        return "unknown", f"merged? not known: {w.merge.error}"
    if w.merge.ahead > 0:
        tail = f"; the main line moved too ({w.merge.behind} commit(s) since they forked): DIVERGED, a person decides" \
            if w.diverged else ""
        return "unmerged", f"{w.merge.ahead} commit(s) not on {w.main_line.ref}{tail}"
    if w.exists and w.status.dirty is None:
        return "unknown", f"clean? not known: {w.status.error}"
    if w.exists and w.status.dirty:
        parts = []
        if w.status.tracked:
            parts.append(f"{w.status.tracked} changed tracked")
        if w.status.untracked:
            parts.append(f"{w.status.untracked} untracked")
        if w.status.in_progress:
            parts.append("under way: " + ", ".join(w.status.in_progress))
        return "dirty", "uncommitted work: " + ", ".join(parts)
    if w.exists and w.contents.disposable is not True:
        return ("holds-nested" if w.contents.nested else "unknown"), describe(w.contents)
    note = "" if w.exists else " (its directory is already gone: only git's record of it remains)"
    return "removable", f"a {w.agent} session, not alive by any signal, fully merged into {w.main_line.ref} " \
                        f"and clean{note}"


def tally(categories: list[str]) -> dict[str, int]:
    out = {c: 0 for c in CATEGORIES}
    for c in categories:
        out[c] += 1
    return out


def tally_line(t: dict[str, int]) -> str:
    n = sum(t.values())
    parts = [f"{t[c]} {c}" for c in CORE] + [f"{t[c]} {c}" for c in CATEGORIES if c not in CORE and t[c]]
    return f"{n} scanned: " + ", ".join(parts)


def evidence(w) -> list[dict]:
    """One row per predicate, in decision order, whatever decided: what held and what it rests on."""
    lk = w.lock
    blind = any(s.positive is None for s in w.signals)
    pos = [s for s in w.signals if s.positive]
    st = w.status
    rows = [
        {"check": "registered", "holds": w.registered,
         "detail": "git lists it as a worktree" if w.registered else (w.registration_note or "")},
        {"check": "custom-lock", "holds": lk.state == "custom",
         "detail": {"none": "not locked", "client": f"{lk.client}'s own generated lock reason",
                    "custom": f"custom lock reason {lk.reason!r}"}[lk.state]},
        {"check": "session", "holds": w.agent is not None,
         "detail": "; ".join(w.made_by) or "no client lock, location or metadata says an agent made it"},
        {"check": "alive", "holds": True if pos else (None if blind or not w.signals else False),
         "detail": ("; ".join(f"{s.signal}: {s.detail}" for s in pos) if pos else
                    "no signal says alive" + (" (some could not be taken)" if blind else "")
                    if w.signals else "signals not taken")},
        {"check": "merged", "holds": None if w.merge.ahead is None else w.merge.ahead == 0,
         "detail": (w.merge.error if w.merge.ahead is None else
                    f"{w.merge.ahead} ahead / {w.merge.behind} behind {w.main_line.ref} ({w.main_line.source})"
                    + (f"; {w.merge.ahead_unique} without a patch-equivalent on it" if w.merge.ahead else ""))},
        {"check": "clean", "holds": None if st.dirty is None else not st.dirty,
         "detail": (st.error if st.dirty is None else
                    f"{st.tracked} tracked changes, {st.untracked} untracked, {st.ignored} ignored entries"
                    + (f", under way: {', '.join(st.in_progress)}" if st.in_progress else ""))},
        {"check": "holds-only-its-checkout", "holds": w.contents.disposable if w.exists else True,
         "detail": describe(w.contents) if w.exists else "its directory is gone"},
    ]
    return rows
