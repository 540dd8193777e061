"""`whoami`: the calling session, from `$CLAUDE_CODE_SESSION_ID` only (SUB-021, MISC-009).

The variable names the TOP-LEVEL session in every lane, including inside a subagent, whose own id
is withheld from the Bash environment. Nothing else is consulted: never recency, never a process
tree. Absent variable = "cannot tell".
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from ..discover import all_sessions

ENV = "CLAUDE_CODE_SESSION_ID"
_UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")


@dataclass
class Whoami:
    session_id: str | None
    source: str
    well_formed: bool | None
    transcript: str | None
    """The transcript under the data root, when found; None when not looked up or not found."""
    looked_in: str | None
    note: str


def whoami(home: Path | None, env: dict | None = None) -> Whoami:
    env = os.environ if env is None else env
    sid = env.get(ENV)
    if not sid:
        return Whoami(None, ENV, None, None, None,
                      f"cannot tell: ${ENV} is not set (it is exported only into a Claude Code Bash tool "
                      "environment); no guess is made from recency or process trees")
    ok = bool(_UUID.match(sid))
    path = None
    if home is not None and (home / "projects").is_dir():
        sess, _ = all_sessions(home, [])
        hit = [s for s in sess if s.session_id == sid]
        path = str(hit[0].path) if hit else None
    note = (f"from ${ENV}; inside a subagent this still names the top-level session (MISC-009)")
    if not ok:
        note += "; the value is not uuid-shaped"
    return Whoami(sid, ENV, ok, path, str(home) if home else None, note)
