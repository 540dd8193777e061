"""Shell completion of session ids (docs/cli.md "Shell completion"): what a TARGET argument offers
when a person presses TAB -- the ids of the sessions of every provider looked at, newest first, each
with its provider and title, the roots named earlier on the line (`--home DIR`, a provider's own
flag) honoured as they are for the command."""

from __future__ import annotations

TARGET_PARAMS = ("targets", "target")
"""The argument names that take session targets (every command's TARGET)."""
MAX_ITEMS = 200


def _words() -> list[str]:
    """The command line being completed: click's completion scripts (bash, zsh, fish) pass it in
    $COMP_WORDS."""
    import os
    import shlex

    try:
        return shlex.split(os.environ.get("COMP_WORDS", ""))
    except ValueError:  # an unclosed quote in the word being typed
        return os.environ.get("COMP_WORDS", "").split()


def _roots(ctx) -> tuple[str | None, dict[str, str]]:
    """`--home` and the providers' own root flags (`Provider.home_flag`) as typed on the line."""
    from ..providers import registry

    home = None
    roots: dict[str, str] = {}
    flags = {cls.home_flag: name for name, cls in registry().items() if getattr(cls, "home_flag", None)}
    words = _words()
    for i, w in enumerate(words[:-1]):
        v = words[i + 1]
        if w == "--home":
            home = v
        elif w in flags:
            roots[flags[w]] = v
        elif w == "--root" and "=" in v:
            n, _, d = v.partition("=")
            roots[n] = d
    return home, roots


def session_ids(ctx, param, incomplete: str) -> list:
    """Session ids starting with `incomplete` (newest first), as click CompletionItems."""
    from click.shell_completion import CompletionItem

    from ..providers.scope import RootRequest, select, survey
    from ..export.source import pairs

    home, roots = _roots(ctx)
    try:
        refs = [ref for _p, ref in pairs(select(survey(RootRequest(roots=roots, home=home)), []))]
    except Exception:  # noqa: BLE001 - completion offers what it can; an error is not shown on TAB
        return []
    refs = [r for r in refs if r.session_id.startswith(incomplete)]
    refs.sort(key=lambda r: r.last_at or "", reverse=True)
    out = []
    for r in refs[:MAX_ITEMS]:
        what = " ".join(x for x in (r.provider, (r.title or "").replace("\n", " ")[:60]) if x)
        out.append(CompletionItem(r.session_id, help=what))
    return out


def attach(cmd) -> None:
    """Give every TARGET argument of `cmd` (and of its subcommands) session-id completion, unless it
    completes by itself."""
    import click

    for p in getattr(cmd, "params", []):
        if isinstance(p, click.Argument) and p.name in TARGET_PARAMS and p._custom_shell_complete is None:
            p._custom_shell_complete = session_ids
    for sub in (getattr(cmd, "commands", None) or {}).values():
        attach(sub)
