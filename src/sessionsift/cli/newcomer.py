"""What a command says when it found nothing to answer from: which agents it looked for and where
(the coverage line, printed after), and how to point it at data -- `--home DIR`, a provider's own
root flag, or, to see it work, the bundled samples of a clone of the repository."""

from __future__ import annotations


def found_nothing(covs: list) -> bool:
    """No agent's data was found at all: every provider absent, not looked at, without an adapter or
    unreadable (a data root that exists but holds no session in scope is not this: the answer then
    says how many sessions it read)."""
    return not any(c.state == "ok" for c in covs)


def nothing_note(covs: list, example: str) -> str:
    """`found no session of any agent (looked for Claude Code, Codex CLI, ...: see the coverage
    line); point it at your agents' data with --home DIR ...; to see it work on the bundled samples
    (a clone of the repository): sessionsift <example> --home examples/home`."""
    from .output import esc

    looked = [c.display for c in covs if c.state != "not_looked"]
    unread = [c.display for c in covs if c.state in ("unreadable", "unknown_format")]
    what = ("looked for " + ", ".join(esc(d) for d in looked) if looked else "looked at no agent's data")
    bad = f"; could not read {', '.join(esc(d) for d in unread)}" if unread else ""
    return (f"found no session of any agent ({what}: the coverage line says where{bad}); point it at your agents' "
            "data with --home DIR or a provider's root (--claude-home DIR, --codex-home DIR, ...); to see it work "
            f"on the bundled samples (in a clone of the repository): sessionsift {example} --home examples/home")
