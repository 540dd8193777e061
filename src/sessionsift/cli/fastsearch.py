"""`search`'s fast path: the plain command lines of a one-off search, parsed without click (whose
import is ~50 ms before the scan could start) and run through the very function the
click command runs (search_run.run), so the output and the exit status are the same bytes.

Recognised (any order, each option at most once): `search PATTERN [-c|--count] [--no-index]
[--claude-home DIR|--claude-home=DIR] [--format text|json|--format=...] [--count-by KEY]`, with
any number of `-t/--type LABEL` and `-T/--type-not LABEL` (a census: `search '' -t user.message
-c`). Anything else -- another
option, a second positional (a target), a PATTERN that starts with `-`, an option value that
starts with `-` or is empty, a repeated option, a --claude-home click would refuse (an existing
file, an unreadable directory) -- returns None and click parses the line as always.
tests/test_cli_fastsearch.py holds the two paths' stdout, stderr and exit status equal on many
command lines.

`stats` has the same kind of path (`_parse_stats`): `stats [--claude-home DIR] [--format
text|json] [--no-index] [--no-subagents]`, run through stats_run.run (tests/test_cli_faststats.py).
"""

from __future__ import annotations

import os
import stat
from typing import Callable

_FLAGS = {"-c": "count", "--count": "count", "--no-index": "no_index"}
_VALUED = {"--claude-home": "claude_home", "--format": "fmt", "--count-by": "count_by"}
_MULTI = {"-t": "include", "--type": "include", "-T": "exclude", "--type-not": "exclude"}
"""Repeatable label selectors (a census: `search '' -t user.message -c`), each `-t VALUE` or
`--type=VALUE`; their meaning (providers/claude/kinds.py) is search_run's, as on click."""
_COUNT_BY = ("label", "tool", "attachment", "session", "project", "day", "model", "pairing")


def parse(args: list[str]) -> Callable[[], int] | None:
    """The run of command line `args` (after the program name, without --traceback), or None
    when it is not one this path answers."""
    if args[:1] == ["stats"]:
        return _parse_stats(args)
    if len(args) < 2 or args[0] != "search":
        return None
    got: dict[str, object] = {}
    multi: dict[str, list[str]] = {"include": [], "exclude": []}
    pattern: str | None = None
    i = 1
    n = len(args)
    while i < n:
        a = args[i]
        i += 1
        key = _FLAGS.get(a)
        if key is not None:
            if key in got:
                return None
            got[key] = True
            continue
        name, eq, value = a.partition("=")
        mkey = _MULTI.get(a) or (_MULTI.get(name) if eq and name.startswith("--") else None)
        if mkey is not None:
            if not eq:
                if i >= n:
                    return None
                value = args[i]
                i += 1
            if not value or value.startswith("-"):
                return None
            multi[mkey].append(value)
            continue
        key = _VALUED.get(name) if name.startswith("--") else None
        if key is not None:
            if not eq:
                if i >= n:
                    return None
                value = args[i]
                i += 1
                if value.startswith("-"):
                    return None  # click's reading of such a value is its own business
            if key in got or not value:
                return None
            got[key] = value
            continue
        if a.startswith("-") or pattern is not None:
            return None
        pattern = a
    if pattern is None:
        return None
    fmt = got.get("fmt", "text")
    if fmt not in ("text", "json"):
        return None
    count_by = got.get("count_by")
    if count_by is not None and (count_by not in _COUNT_BY or got.get("count")):
        return None  # click's usage errors are its own
    home = got.get("claude_home")
    if home is not None and not _dir_ok(str(home)):
        return None

    def run() -> int:
        from .search_run import SearchArgs, run as search_run

        inv = _invocation("search", home, fmt, bool(got.get("no_index")))
        return search_run(inv, SearchArgs(args=(pattern,), include=tuple(multi["include"]),
                                          exclude=tuple(multi["exclude"]), count=bool(got.get("count")),
                                          count_by=count_by))

    return run


_STATS_FLAGS = {"--no-index": "no_index", "--no-subagents": "no_subagents"}
_STATS_VALUED = {"--claude-home": "claude_home", "--format": "fmt"}


def _parse_stats(args: list[str]) -> Callable[[], int] | None:
    """`stats [--claude-home DIR] [--format text|json] [--no-index] [--no-subagents]` (any order,
    each at most once, `--opt=VALUE` too) run through stats_run.run, the click command's body;
    None for any other line (a target, another option, a repeat, a value click would refuse)."""
    got: dict[str, object] = {}
    i = 1
    n = len(args)
    while i < n:
        a = args[i]
        i += 1
        key = _STATS_FLAGS.get(a)
        if key is not None:
            if key in got:
                return None
            got[key] = True
            continue
        name, eq, value = a.partition("=")
        key = _STATS_VALUED.get(name)
        if key is None:
            return None
        if not eq:
            if i >= n:
                return None
            value = args[i]
            i += 1
            if value.startswith("-"):
                return None
        if key in got or not value:
            return None
        got[key] = value
    fmt = got.get("fmt", "text")
    if fmt not in ("text", "json"):
        return None
    home = got.get("claude_home")
    if home is not None and not _dir_ok(str(home)):
        return None

    def run() -> int:
        from .stats_run import run as stats_run

        inv = _invocation("stats", home, fmt, bool(got.get("no_index")))
        return stats_run(inv, bool(got.get("no_subagents")), False, False)

    return run


def _invocation(command: str, home, fmt: str, no_index: bool):
    """The Invocation click would build for these options (cli/invocation.py)."""
    from ..providers import deep_name
    from .invocation import Invocation

    named = (("--claude-home",) if home else ()) + (("--no-index",) if no_index else ())
    return Invocation(command=command, fmt=fmt, roots=((deep_name(), str(home)),) if home else (),
                      no_index=no_index, named=named)


def _dir_ok(path: str) -> bool:
    """Whether click.Path(file_okay=False) takes `path` as it is: absent, or present and not a
    regular file, and readable."""
    try:
        st = os.stat(path)
    except OSError:
        return True
    except ValueError:  # a NUL in the path: whatever click says about it, it says it
        return False
    return not stat.S_ISREG(st.st_mode) and os.access(path, os.R_OK)
