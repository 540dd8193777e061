#!/usr/bin/env python3
"""Merge the verbatim SessionStart(compact) hook into a Claude Code settings.json.

    python hooks/install_verbatim_hook.py --settings ~/.claude/settings.json [--python /abs/python]

Fills settings.snippet.json's placeholders (@PYTHON@: an interpreter that can `import sessionsift`,
default: this one; @HOOKS@: this directory), then APPENDS its matcher group to
`hooks.SessionStart`. Nothing is removed: other keys and hooks are kept, a group that already runs
verbatim_slice_hook.py is replaced only with --replace, and the previous file is saved beside it
as `settings.json.bak-<unix time>` before writing. Prints what it did.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
MARK = "verbatim_slice_hook.py"


def snippet(python: str, extra: list[str] | None = None) -> dict:
    raw = (HERE / "settings.snippet.json").read_text(encoding="utf-8")
    raw = raw.replace("@PYTHON@", python).replace("@HOOKS@", str(HERE))
    snip = json.loads(raw)
    for g in snip["hooks"]["SessionStart"]:
        for h in g["hooks"]:
            h["command"] += "".join(f" {x}" for x in (extra or []))
    return snip


def merge(settings: dict, snip: dict, replace: bool = False) -> tuple[dict, str]:
    hooks = settings.setdefault("hooks", {})
    groups = hooks.setdefault("SessionStart", [])
    ours = [g for g in groups if any(MARK in str(h.get("command", "")) for h in g.get("hooks", []))]
    if ours and not replace:
        return settings, "already installed (use --replace to rewrite it)"
    for g in ours:
        groups.remove(g)
    groups.extend(snip["hooks"]["SessionStart"])
    return settings, ("replaced" if ours else "installed")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--settings", required=True, help="settings.json to update (created if missing)")
    ap.add_argument("--python", default=sys.executable, help="absolute path of a python with sessionsift")
    ap.add_argument("--replace", action="store_true", help="rewrite an existing verbatim hook group")
    ap.add_argument("--window", type=int, default=None, help="slice size passed to every slot (< 10000)")
    ap.add_argument("--budget", type=int, default=None, help="verbatim budget passed to every slot")
    a = ap.parse_args(argv)
    if not os.path.isabs(a.python):
        ap.error("--python must be an absolute path (hooks run with the client's PATH)")
    p = Path(a.settings).expanduser()
    cur = {}
    if p.exists():
        cur = json.loads(p.read_text(encoding="utf-8") or "{}")
        shutil.copy2(p, p.with_name(f"{p.name}.bak-{int(time.time())}"))
    extra = (["--window", str(a.window)] if a.window else []) + (["--budget", str(a.budget)] if a.budget else [])
    new, what = merge(cur, snippet(a.python, extra), a.replace)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps(new, indent=2) + "\n", encoding="utf-8")
    print(f"{p}: verbatim SessionStart(compact) hook {what}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
