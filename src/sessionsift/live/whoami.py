"""`whoami`: the calling session, from what each client exports to its tool subprocesses.

Each provider looked at reads the environment (``Provider.whoami``): a variable naming the session
(Claude Code's ``CLAUDE_CODE_SESSION_ID``, Codex CLI's ``CODEX_THREAD_ID``; Gemini CLI and Crush
name it to hook commands only), or a marker that says which client runs the tool but names no
session. Never a guess from recency or process trees. When more than one client names a session
(one agent running inside another), the nearest client among this process's ancestors is the
caller; the others are listed.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Mapping

from ..providers.liveness import WhoamiClaim
from .world import path_of, units, world as make_world


@dataclass
class Claim:
    display: str
    claim: WhoamiClaim
    transcript: str | None = None
    """The session's file (or database) found among the sessions looked at; None when not found."""
    ref: object = None
    depth: int | None = None
    """How many processes up the nearest ancestor of this client is (None: none found)."""


@dataclass
class WhoamiResult:
    answer: Claim | None
    """The calling session (None: no client names one)."""
    claims: list[Claim] = field(default_factory=list)
    """Every client whose environment is present, in the order weighed (the answer first)."""
    lacking: dict[str, str] = field(default_factory=dict)
    """provider display -> why it cannot say (its reader offers no whoami, with the reason)."""
    not_looked: list[str] = field(default_factory=list)
    """Providers this answer did not look at (the command line named others only)."""

    @property
    def note(self) -> str:
        if self.answer is not None:
            return self.answer.claim.note
        told = [c.claim.note for c in self.claims]
        if told:
            return "; ".join(told)
        return ("cannot tell: no client's session variable is set (CLAUDE_CODE_SESSION_ID is exported only into a "
                "Claude Code Bash tool environment, CODEX_THREAD_ID into a Codex CLI shell tool's); no guess is made "
                "from recency or process trees")


def _ancestry() -> list[list[str]]:
    """The argv of each ancestor of this process, nearest first (empty when /proc cannot say)."""
    out = []
    pid = os.getpid()
    for _ in range(64):
        try:
            with open(f"/proc/{pid}/stat", "rb") as fh:
                raw = fh.read()
            ppid = int(raw[raw.rfind(b")") + 2:].split()[1])
        except (OSError, ValueError, IndexError):
            break
        if ppid <= 1:
            break
        try:
            with open(f"/proc/{ppid}/cmdline", "rb") as fh:
                argv = [os.fsdecode(a) for a in fh.read().split(b"\0")[:-1]]
        except OSError:
            argv = []
        out.append(argv)
        pid = ppid
    return out


def whoami(env: Mapping[str, str] | None, sel) -> WhoamiResult:
    env = os.environ if env is None else env
    us = units(sel)
    w = make_world(sel, us=us)
    by_id: dict[tuple[str, str], object] = {(u.name, u.ref.session_id): u.ref for u in us}
    for name, refs in w.refs.items():
        for r in refs:
            by_id.setdefault((name, r.session_id), r)
    claims: list[Claim] = []
    lacking: dict[str, str] = {}
    not_looked = [e.display for e in sel.survey.entries if not e.looked]
    anc = None
    for e in sel.survey.entries:
        if not e.looked or e.provider is None:
            continue
        try:
            c = e.provider.whoami(env, w)
        except Exception as exc:  # a reader's bug: say so, go on
            lacking[e.display] = f"its whoami failed: {type(exc).__name__}: {exc}"
            continue
        if c is None:
            why = getattr(e.provider, "lacks", {}).get("whoami")
            if why:
                lacking[e.display] = why
            continue
        cl = Claim(e.display, c)
        if c.session_id is not None:
            ref = by_id.get((e.name, c.session_id))
            cl.ref = ref
            cl.transcript = path_of(ref) if ref is not None else None  # type: ignore[arg-type]
            if anc is None:
                anc = _ancestry()
            cl.depth = next((i for i, argv in enumerate(anc) if argv and _is(e.provider, argv)), None)
        claims.append(cl)
    named = [c for c in claims if c.claim.session_id is not None]
    named.sort(key=lambda c: (c.depth is None, c.depth if c.depth is not None else 0))
    rest = [c for c in claims if c.claim.session_id is None]
    return WhoamiResult(named[0] if named else None, named + rest, lacking, not_looked)


def _is(prov, argv: list[str]) -> bool:
    try:
        return bool(prov.is_client_argv(argv))
    except Exception:
        return False
