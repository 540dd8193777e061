"""Shared option bundles and the target-resolution step every multi-target command uses.

Roots (docs/cli.md "Data roots"): `--claude-home` (a parameter of every command), `--home DIR`,
`--codex-home`, `--gemini-home`, `--opencode-home`, `--crush-home`, `--root NAME=DIR` (readers
from outside the package) and, on the cross-provider commands, `--provider NAME` (repeatable).
All but `--claude-home` are stored in the click context (`ctx.meta`) rather than passed to each
command function: `root_request()` reads them back. click is imported only where an option is
declared or the context is read: `search`'s fast path (cli/fastsearch.py) parses its command line
without click and hands its roots over through `set_fast_meta`.
"""

from __future__ import annotations

import dataclasses
import shlex
import sys
from pathlib import Path
from typing import Any, Callable

from ..providers.claude.discover import Scope, claude_home as _claude_home, resolve_targets
from ..errors import TargetError, UsageError

_META = "sessionsift.roots"

ROOT_FLAGS: tuple[tuple[str, str, str], ...] = (
    ("codex", "--codex-home", "Codex CLI data root (default: $CODEX_HOME, else ~/.codex)."),
    ("gemini-cli", "--gemini-home", "Gemini CLI data root: the .gemini dir itself (default: $GEMINI_CLI_HOME/.gemini, else ~/.gemini)."),
    ("opencode", "--opencode-home", "opencode data dir or database (default: $OPENCODE_DB, else $XDG_DATA_HOME/opencode, else ~/.local/share/opencode)."),
    ("crush", "--crush-home", "Crush global data dir (default: $CRUSH_GLOBAL_DATA, else $XDG_DATA_HOME/crush, else ~/.local/share/crush)."),
    ("pi", "--pi-home", "pi agent dir (holding sessions/) or a session dir (default: $PI_CODING_AGENT_SESSION_DIR, else $PI_CODING_AGENT_DIR, else ~/.pi/agent)."),
    ("qwen-code", "--qwen-home", "Qwen Code dir holding projects/ (default: $QWEN_RUNTIME_DIR, else $QWEN_HOME, else ~/.qwen)."),
)


def _store(key: str):
    def cb(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
        if value not in (None, (), ""):
            meta = ctx.meta.setdefault(_META, {})
            if key in ("provider", "root"):
                meta.setdefault(key, []).extend(value)
            else:
                meta[key] = value
        return value
    return cb


def _no_index(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    from ..index import config

    (config.disable if value else config.enable)()
    return value


def common_options(f: Callable[..., Any]) -> Callable[..., Any]:
    import click

    f = click.option("--no-index", is_flag=True, expose_value=False, callback=_no_index, is_eager=True,
                     help="Scan the transcripts: neither use nor update the index (docs/index.md).")(f)
    f = click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
                     show_default=True, help="Output format (json = JSON Lines, docs/json.md).")(f)
    f = click.option("--root", "root", multiple=True, expose_value=False, callback=_store("root"),
                     metavar="NAME=DIR", help="Data root of provider NAME (any reader, also one installed from outside).")(f)
    for name, flag, help_ in reversed(ROOT_FLAGS):
        f = click.option(flag, name.replace("-", "_") + "_root", type=click.Path(file_okay=False), default=None,
                         expose_value=False, callback=_store(name), help=help_)(f)
    f = click.option("--home", "home", type=click.Path(file_okay=False), default=None, expose_value=False,
                     callback=_store("home"),
                     help="Look for every provider's data under DIR (DIR/.claude, DIR/.codex, DIR/.gemini, "
                          "DIR/.local/share/opencode, DIR/.local/share/crush, DIR/.pi/agent, DIR/.qwen); providers are looked at only "
                          "where a root is named once any root is.")(f)
    f = click.option("--claude-home", type=click.Path(file_okay=False), default=None, callback=_store("claude-code"),
                     help="Claude Code data root (default: --home DIR/.claude, else a non-empty $CLAUDE_CONFIG_DIR, else ~/.claude).")(f)
    return f


def provider_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """`--provider NAME` (repeatable): the cross-provider commands only."""
    import click

    return click.option("--provider", "provider", multiple=True, expose_value=False, callback=_store("provider"),
                        metavar="NAME", help="Only these providers (repeatable): claude-code, codex, gemini-cli, "
                                             "opencode, crush, pi, qwen-code, or an installed outside reader.")(f)


def scope_options(f: Callable[..., Any]) -> Callable[..., Any]:
    import click

    f = click.option("--sessions-from", type=str, default=None,
                     help="Restrict the scope to the session ids listed in FILE (or - for stdin); "
                          "an empty list is an empty scope.")(f)
    return f


def dataset_option(f: Callable[..., Any]) -> Callable[..., Any]:
    """`--dataset DATASET`: answer over every machine of a synced dataset instead of this machine's
    own files (usage, stats, list, search; docs/dataset.md)."""
    import click

    return click.option("--dataset", "dataset", default=None, metavar="DATASET",
                        help="Answer over every machine of a dataset `sync` wrote (a folder or s3://bucket/prefix), "
                             "with DuckDB; no data root is read.")(f)


_FAST_META: dict | None = None
"""The roots of a command line parsed without click (cli/fastsearch.py), else None."""


def set_fast_meta(meta: dict | None) -> None:
    """What `root_request()` and the other readers of the command line's roots see when no click
    context runs (the fast path): the same keys `_store` puts in `ctx.meta`."""
    global _FAST_META
    _FAST_META = meta


def _ctx():
    """The running click context, or None (also when click was never imported: the fast path)."""
    click = sys.modules.get("click")
    return click.get_current_context(silent=True) if click is not None else None


def _meta() -> dict:
    ctx = _ctx()
    if ctx is None:
        return _FAST_META if _FAST_META is not None else {}
    return ctx.meta.get(_META, {})


def root_request():
    """The roots named on this command line, as the library's RootRequest."""
    from ..providers.scope import RootRequest, canonical_name

    m = _meta()
    roots: dict[str, str] = {}
    for name, _flag, _h in (("claude-code", "--claude-home", ""),) + ROOT_FLAGS:
        if m.get(name):
            roots[name] = m[name]
    for spec in m.get("root", []):
        name, sep, d = spec.partition("=")
        if not sep or not name or not d:
            raise UsageError(f"--root wants NAME=DIR, got {spec!r}")
        roots[canonical_name(name)] = d
    return RootRequest(roots=roots, home=m.get("home"), only=tuple(m.get("provider", ())))


def claude_root_arg(explicit: str | None = None) -> str | None:
    """The Claude Code root to name in a refetch command: --claude-home, else --home DIR/.claude."""
    if explicit:
        return explicit
    h = _meta().get("home")
    return str(Path(h) / ".claude") if h else None


def read_session_list(spec: str | None) -> list[str] | None:
    if spec is None:
        return None
    if spec == "-":
        text = sys.stdin.read()
    else:
        try:
            with open(spec, encoding="utf-8") as fh:
                text = fh.read()
        except OSError as exc:
            raise UsageError(f"cannot read --sessions-from {spec}: {exc.strerror}")
    ids = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        ids.append(line.split()[0])
    return ids


CLAUDE_ONLY_WHY = {
    "index": "its transcripts: the index covers Claude Code's only",
    "status": "its live state (the session registry, the transcript tail)",
    "wait": "its live state (the session registry, the transcript tail)",
    "agents": "its subagent lanes and registry",
    "whoami": "its session registry",
    "verbatim": "its compaction summaries",
    "plan": "its plan files",
    "image": "its inline image blocks",
    "audit": "its attachment records",
    "recover": "its Read/Write/Edit stream",
}


def _command() -> str:
    """This command's name as typed after the program (`status`, `audit reinjection`)."""
    ctx = _ctx()
    if ctx is None:
        if _FAST_META is not None and _FAST_META.get("command"):
            return _FAST_META["command"]
        return "this command"
    return " ".join(ctx.command_path.split()[1:]) or ctx.info_name or "this command"


def _named_roots() -> list[str]:
    """The root flags this command line named, as typed (`--codex-home`, `--root codex=...`)."""
    m = _meta()
    out = [flag for name, flag, _h in ROOT_FLAGS if m.get(name)]
    out += [f"--root {spec.partition('=')[0]}=..." for spec in m.get("root", [])]
    return out


def claude_choice(claude_home: str | None):
    """Claude Code's data root for a command that reads only Claude Code, by the root rule
    (docs/cli.md "Data roots"): --claude-home, else --root claude-code=DIR, else --home DIR/.claude;
    with none of those and no root named at all, $CLAUDE_CONFIG_DIR > ~/.claude. When the command
    line names another provider's root only, Claude Code is not looked at, and a command that
    reads nothing else has no answer to give: refused (exit 2) with the flag that would include it
    -- never this machine's own home."""
    req = root_request()
    if not claude_home and not req.looks_at("claude-code"):
        cmd = _command()
        why = CLAUDE_ONLY_WHY.get(cmd) or CLAUDE_ONLY_WHY.get(cmd.split()[0], "Claude Code's own records")
        raise UsageError(f"`{cmd}` reads only Claude Code, {why}; this command line names only "
                         f"{', '.join(_named_roots())}, so Claude Code is not looked at: pass --claude-home "
                         f"or --home DIR")
    explicit = claude_home or req.roots.get("claude-code")
    choice = _claude_home(explicit, home=req.home)
    if not claude_home and explicit:
        choice = dataclasses.replace(choice, source="--root")
    return choice


def make_scope(targets: tuple[str, ...], claude_home: str | None, sessions_from: str | None = None) -> Scope:
    """Claude Code's deep scope (the commands that read Claude Code's own surfaces; its root by
    `claude_choice`). A target that names a session of another provider is refused with a
    one-line reason (exit 2). Other providers the command line names (`--home`, their flags) are
    not read: a note on stderr says so (and the header's `not_read`)."""
    try:
        choice = claude_choice(claude_home)
    except UsageError as exc:  # a target of the provider named says more than the root rule
        _refuse_other_provider_session(targets, exc)
        raise
    try:
        scope = resolve_targets(targets, sessions_from=read_session_list(sessions_from), choice=choice)
    except TargetError as exc:
        _refuse_other_provider_session(targets, exc)
        raise
    ctx = _ctx()
    if ctx is not None and (targets or sessions_from):  # the question named its sessions: none is left out
        ctx.meta.setdefault(_META, {})["targeted"] = True
    left = not_read()
    if left:
        from ..render import err_line

        err_line(f"note: {left[0]['reason']}; not read: {', '.join(x['display'] for x in left)} "
                 f"(named by {', '.join(dict.fromkeys(x['named_by'] for x in left))})")
    return scope


def not_read() -> list[dict]:
    """The other providers this command line names a root for (their flag, `--root NAME=DIR`,
    or `--home DIR`, which names every one) that a command reading only Claude Code does not
    read: the answer is narrower than the question, so it says what it left out. A command
    given its sessions (TARGETs, --sessions-from) left nothing out: `[]`."""
    from ..providers import KNOWN

    if _meta().get("targeted"):
        return []
    req = root_request()
    names = [n for n in KNOWN if n != "claude-code" and (req.home or req.roots.get(n))]
    names += [n for n in req.roots if n not in KNOWN and req.roots.get(n)]
    if not names:
        return []
    cmd = _command()
    why = CLAUDE_ONLY_WHY.get(cmd) or CLAUDE_ONLY_WHY.get(cmd.split()[0], "Claude Code's own records")
    reason = f"`{cmd}` reads only Claude Code, {why}"
    flag = {name: f for name, f, _h in ROOT_FLAGS}
    return [{"provider": n, "display": KNOWN.get(n, n), "reason": reason,
             "named_by": (flag.get(n, f"--root {n}=...") if req.roots.get(n) else "--home")} for n in names]


def _refuse_other_provider_session(targets: tuple[str, ...], exc: Exception) -> None:
    other = _other_provider_session(targets)
    if other is None:
        return
    t, ref, display = other
    cmd = _command()
    why = CLAUDE_ONLY_WHY.get(cmd) or CLAUDE_ONLY_WHY.get(cmd.split()[0], "Claude Code's own records")
    art = "an" if display[:1].lower() in "aeiou" else "a"
    raise TargetError(f"{t!r} is {art} {display} session ({ref.session_id}): `{cmd}` reads Claude Code's own "
                      f"surfaces ({why}) and cannot answer for a session of another provider") from exc


def _other_provider_session(targets: tuple[str, ...]):
    from ..providers.scope import find_session, survey

    if not targets:
        return None
    sv = survey(root_request(), light=frozenset({"claude-code"}))
    for t in targets:
        for r in find_session(sv, t):
            if r.provider != "claude-code":
                e = sv.entry(r.provider)
                return t, r, e.display if e else r.provider
    return None


def refuse_with_dataset(targets=(), sessions_from: str | None = None) -> None:
    """`--dataset` answers from the dataset: a TARGET, --sessions-from or a data root flag on the
    same command line names this machine's files, which it does not read (exit 2)."""
    m = _meta()
    named = [flag for name, flag, _h in (("claude-code", "--claude-home", ""),) + ROOT_FLAGS if m.get(name)]
    named += ["--home"] * bool(m.get("home")) + ["--root"] * bool(m.get("root"))
    if targets:
        named.insert(0, "TARGET")
    if sessions_from is not None:
        named.append("--sessions-from")
    if named:
        raise UsageError(f"--dataset answers over every machine of the dataset; {', '.join(named)} names this "
                         "machine's files, which it does not read",
                         hint="narrow with --provider, or use `sessionsift query SQL --dataset DATASET`")


def make_selection(targets: tuple[str, ...], sessions_from: str | None = None, subagents: bool = True):
    """Every provider's sessions named by `targets` (providers.scope.select); `subagents=False`
    (`--no-subagents`): without other providers' child sessions (Selection.main_only)."""
    from ..providers.scope import select, survey

    sv = survey(root_request(), light=frozenset({"claude-code"}))
    sel = select(sv, list(targets), read_session_list(sessions_from))
    return sel if subagents else sel.main_only()


def claude_scope(sel, empty: bool = False) -> Scope:
    """The Claude Code part of a selection as the deep model's Scope (an empty one when Claude
    Code was not looked at, its root is absent, or `empty`: the query can select none of its
    records)."""
    if sel.claude is not None and not empty:
        return sel.claude
    from ..providers.claude.discover import HomeChoice

    ce = sel.survey.entry("claude-code")
    path = ce.root.path if ce is not None and ce.root is not None and ce.root.path is not None else Path("-")
    src = _claude_source(ce.root.source) if ce is not None and ce.root is not None else "~/.claude"
    return Scope(HomeChoice(path, src))  # type: ignore[arg-type]


def scope_header(scope: Scope) -> dict:
    return {
        "claude_home": str(scope.home.path),
        "claude_home_source": scope.home.source,
        "sessions": len(scope.sessions),
        "not_read": not_read(),
    }


def selection_header(sel) -> dict:
    """Header fields of a cross-provider answer: Claude Code's root (null when not looked at),
    the session count and every provider's root."""
    ce = sel.survey.entry("claude-code")
    root = ce.root if ce is not None else None
    return {
        "claude_home": str(root.path) if root is not None and root.path is not None else None,
        "claude_home_source": _claude_source(root.source) if root is not None else None,
        # one unit in every header and summary (docs/json.md): top-level sessions, subagents and
        # helper sessions apart (null: not counted)
        "sessions": sel.top_level(),
        "subagents": sel.subagents_total(),
        "helper_sessions": sum(sel.helper_counts().values()) if sel.subagents else None,
        "roots": [{"provider": e.name, "root": None if e.root is None or e.root.path is None else str(e.root.path),
                   "root_source": None if e.root is None else e.root.source} for e in sel.survey.entries],
    }


def _claude_source(src: str) -> str:
    return "~/.claude" if src == "default" else src


def problems_json(problems: list) -> list[dict]:
    return [{"path": p.path, "why": p.why} for p in problems]


# -- coverage ---------------------------------------------------------------------------------


def coverage_json(covs: list) -> list[dict]:
    return [c.to_json() for c in covs]


def session_split(refs) -> dict:
    """A summary's session figures over the SessionRefs it answered for, in the unit of every
    header (docs/json.md): ``sessions`` top-level, ``child_sessions`` other providers' child
    sessions (rows of their own: subagents and helper sessions) apart."""
    kids = sum(1 for r in refs if r.parent_session_id is not None)
    return {"sessions": len(refs) - kids, "child_sessions": kids}


def sessions_unit(n: int, covs: list) -> str:
    """``n`` sessions of a selection in the coverage line's unit: ``36 sessions (+7 subagents)``
    (sessions = top-level, subagents apart: Claude Code's lanes, other providers' child sessions).
    ``n`` counts every selected session file/row (other providers' child sessions and helper
    sessions included, Claude Code's lanes not): when it is not the coverage's total, it is
    printed as it is."""
    ok = [c for c in covs if c.state == "ok"]
    word = lambda k, w: f"{k} {w}{'' if k == 1 else 's'}"  # noqa: E731
    if any(c.sessions is None for c in ok):
        return word(n, "session")
    top = sum(c.sessions for c in ok)
    kids = [getattr(c, "subagents", None) for c in ok]
    helps = sum(getattr(c, "helpers", None) or 0 for c in ok)
    other_kids = sum(k for c, k in zip(ok, kids) if k is not None and c.provider != "claude-code")
    if n != top + other_kids + helps:
        return word(n, "session")
    subs = sum(k for k in kids if k is not None)
    tail = f", +{word(helps, 'helper session')}" if helps else ""
    if any(k is None for k in kids):  # a count not taken: a lower bound, never a smaller fact
        return word(top, "session") + f" (+{subs} subagents or more: some could not be counted{tail})"
    inner = (f"+{word(subs, 'subagent')}" if subs else "") + (tail if subs else tail[2:])
    return word(top, "session") + (f" ({inner})" if inner else "")


def coverage_line(covs: list) -> str:
    """`coverage: Claude Code 8 sessions · Codex CLI 3 · Gemini CLI absent (no /x/.gemini) · ...`"""
    from .output import esc

    parts = []
    unit = False
    for c in covs:
        if c.state == "ok":
            k = getattr(c, "subagents", None)
            h = getattr(c, "helpers", None)
            extra = ([f"+{k} subagent{'' if k == 1 else 's'}"] if k else []) + (
                [f"+{h} helper session{'' if h == 1 else 's'}"] if h else [])
            parts.append(f"{esc(c.display)} {c.sessions}" + ("" if unit else (" session" if c.sessions == 1 else " sessions"))
                         + (f" ({', '.join(extra)})" if extra else ""))
            unit = True
        elif c.state == "no_adapter":
            parts.append(f"{esc(c.display)} no adapter")
        else:
            label = {"absent": "absent", "unreadable": "unreadable", "unknown_format": "unknown format",
                     "not_looked": "not looked"}[c.state]
            parts.append(f"{esc(c.display)} {label}" + (f" ({esc(c.reason)})" if c.reason else ""))
    return "coverage: " + " · ".join(parts)


# -- lane fields and refetch commands (every command that prints Claude Code records) --


def display_name(provider: str) -> str:
    """A provider's name as people read it (`Codex CLI`), for text; JSON keeps `provider` (`codex`)."""
    from ..providers import KNOWN

    return KNOWN.get(provider, provider)


def lane_fields(lane) -> dict:
    return {
        "provider": "claude-code",  # every row names its provider (other providers' rows do too)
        "session_id": lane.session_id,
        "lane": lane.display,
        "is_subagent": lane.is_subagent,
        "parent_session_id": lane.parent_session_id,
        "agent_id": lane.agent_id,
        "path": str(lane.path),
    }


def refetch(lane, line: int, home: str | None) -> str:
    return refetch_at(lane.session_id, str(lane.path), lane.is_subagent, line, home)


def refetch_at(session_id: str, path: str, is_subagent: bool, line: int | None, home: str | None) -> str | None:
    """The ready-to-run command that shows one record (None when there is no line)."""
    if line is None:
        return None
    target = shlex.quote(path) if is_subagent else session_id
    home = claude_root_arg(home)
    h = f" --claude-home {shlex.quote(str(home))}" if home else ""
    return f"sessionsift show {target} --line {line}{h}"
