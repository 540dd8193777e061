"""`statusline` without click: what Claude Code runs after every turn (cli/__init__.py takes this
path for the plain arguments; cmd_statusline.py is the click command, for --help and anything
else). The figures: usage.statusline.answer; the line: usage.statusline.line, written through the
rendering path (escaped)."""

from __future__ import annotations

import sys


def _parse_hook(data: bytes) -> dict:
    import json  # the stdlib's: a few KB, and orjson's import costs ~10 ms (it brings dataclasses, uuid, ...)

    v = json.loads(data)
    if not isinstance(v, dict):
        raise ValueError("the statusLine input is not a JSON object")
    return v


def run(argv: list[str]) -> int | None:
    """`statusline [--claude-home DIR] [--no-cache] [--format text|json]`; None when the arguments
    are anything else (click then parses them and says what is wrong)."""
    home = None
    fmt = "text"
    use_cache = True
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--no-cache":
            use_cache = False
        elif a in ("--claude-home", "--format") and i + 1 < len(argv):
            if a == "--claude-home":
                home = argv[i + 1]
            elif argv[i + 1] in ("text", "json"):
                fmt = argv[i + 1]
            else:
                return None
            i += 1
        elif a.startswith("--claude-home="):
            home = a.split("=", 1)[1]
        else:
            return None
        i += 1
    return emit(home, fmt, use_cache)


def emit(home: str | None, fmt: str, use_cache: bool) -> int:
    from ..render import Out, err_line
    from ..usage.statusline import answer, line

    data = sys.stdin.buffer.read()
    try:
        hook = _parse_hook(data)
    except ValueError as exc:
        err_line(f"sessionsift: usage error: statusline reads Claude Code's statusLine JSON on stdin: {exc}")
        return 2
    a = answer(hook, home, use_cache=use_cache)
    out = Out(fmt, "statusline")
    out.header(claude_home=a["claude_home"], session_id=a["session_id"], cache=a["cache"])
    out.summary(**{k: v for k, v in a.items() if k != "claude_home"}, line=line(a))
    out.text(line(a))
    sys.stdout.flush()
    return 3 if a["problems"] else 0
