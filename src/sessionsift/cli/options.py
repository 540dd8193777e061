"""The target-resolution steps every command uses, over one Invocation (cli/invocation.py).

Roots (docs/cli.md "Data roots"): `--home DIR`, each provider's own root flag (`--claude-home`,
`--codex-home`, ...; providers/scope.py ROOTS), `--root NAME=DIR` (readers from outside the
package) and `--provider NAME` (repeatable) are fields of the Invocation every command receives;
nothing is read back from a global or from click's context.
"""

from __future__ import annotations

import dataclasses
import shlex
import sys
from pathlib import Path

from ..providers import deep_name
from ..providers.selection import DeepScope as Scope, deep_empty, deep_resolve, deep_root, deep_use_index
from ..errors import TargetError, UsageError
from .invocation import Invocation


def claude_root_arg(inv: Invocation) -> str | None:
    """The Claude Code root to name in a refetch command: its own flag or --root, else --home
    DIR/.claude (None: its environment variable or default finds it again)."""
    req = inv.root_request()
    if req.roots.get(deep_name()):
        return req.roots[deep_name()]
    return str(Path(inv.home) / ".claude") if inv.home else None


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
    "plan": "its plan files",
    "image": "its inline image blocks",
    "audit": "its attachment records",
    "recover": "its Read/Write/Edit stream",
}


def _why(inv: Invocation) -> str:
    return CLAUDE_ONLY_WHY.get(inv.command) or CLAUDE_ONLY_WHY.get(inv.command.split()[0], "Claude Code's own records")


def _named_roots(inv: Invocation) -> list[str]:
    """The root flags this command line named, as typed (`--codex-home`, `--root codex=...`)."""
    return [n for n in inv.named if n.endswith("-home") or n.startswith("--root ")]


def claude_choice(inv: Invocation):
    """Claude Code's data root for a command that reads only Claude Code, by the root rule
    (docs/cli.md "Data roots"): --claude-home, else --root claude-code=DIR, else --home DIR/.claude;
    with none of those and no root named at all, $CLAUDE_CONFIG_DIR > ~/.claude. When the command
    line names another provider's root only, Claude Code is not looked at, and a command that
    reads nothing else has no answer to give: refused (exit 2) with the flag that would include it
    -- never this machine's own home."""
    req = inv.root_request()
    if not req.looks_at(deep_name()):
        raise UsageError(f"`{inv.command}` reads only Claude Code, {_why(inv)}; this command line names only "
                         f"{', '.join(_named_roots(inv))}, so Claude Code is not looked at: pass --claude-home "
                         f"or --home DIR")
    explicit = req.roots.get(deep_name())
    choice = deep_root(explicit, home=req.home)
    if explicit and "--claude-home" not in inv.named:
        choice = dataclasses.replace(choice, source="--root")
    return choice


def make_scope(inv: Invocation, refuse: bool = True) -> Scope:
    """Claude Code's deep scope (the commands that read Claude Code's own surfaces; its root by
    `claude_choice`), narrowed by the command line's session filters. A target that names a
    session of another provider is refused with a one-line reason (exit 2). Other providers the
    command line names (`--home`, their flags) are not read: a note on stderr says so (and the
    header's `not_read`). `refuse=False`: the caller asks other providers itself (the error is
    raised as it is)."""
    targets = inv.targets
    try:
        choice = claude_choice(inv)
    except UsageError as exc:  # a target of the provider named says more than the root rule
        if refuse:
            _refuse_other_provider_session(inv, exc)
        raise
    try:
        scope = deep_resolve(targets, sessions_from=inv.session_list(), choice=choice)
    except TargetError as exc:
        if refuse:
            _refuse_other_provider_session(inv, exc)
        raise
    deep_use_index(scope, inv.index_off())
    n = inv.narrowing()
    if n is not None:
        from ..providers.scope import RootRequest, Selection, Survey, narrow

        sel = narrow(Selection(Survey([], RootRequest()), scope, []), n)
        scope.narrowed = sel.narrowed
    left = not_read(inv)
    if left:
        from ..render import err_line

        err_line(f"note: {left[0]['reason']}; not read: {', '.join(x['display'] for x in left)} "
                 f"(named by {', '.join(dict.fromkeys(x['named_by'] for x in left))})")
    return scope


def not_read(inv: Invocation) -> list[dict]:
    """The other providers this command line names a root for (their flag, `--root NAME=DIR`,
    or `--home DIR`, which names every one) that a command reading only Claude Code does not
    read: the answer is narrower than the question, so it says what it left out. A command
    given its sessions (TARGETs, --sessions-from) left nothing out: `[]`."""
    from ..providers import KNOWN
    from ..providers.scope import FLAGS

    if inv.targets or inv.sessions_from:
        return []
    req = inv.root_request()
    names = [n for n in KNOWN if not _deep(n) and (req.home or req.roots.get(n))]
    names += [n for n in req.roots if n not in KNOWN and req.roots.get(n)]
    if not names:
        return []
    reason = f"`{inv.command}` reads only Claude Code, {_why(inv)}"
    return [{"provider": n, "display": KNOWN.get(n, n), "reason": reason,
             "named_by": (FLAGS.get(n, f"--root {n}=...") if req.roots.get(n) else "--home")} for n in names]


def _deep(name: str) -> bool:
    """The provider reads through a deep Scope (``Provider.deep_scope``): the commands that read
    only that Scope read its sessions."""
    from ..providers import load

    return bool(getattr(load(name), "deep_scope", False))


def _lanes_in_paths(name: str) -> bool:
    from ..providers import load

    return bool(getattr(load(name), "lanes_in_paths", False))


def _refuse_other_provider_session(inv: Invocation, exc: Exception) -> None:
    other = _other_provider_session(inv)
    if other is None:
        return
    t, ref, display = other
    art = "an" if display[:1].lower() in "aeiou" else "a"
    raise TargetError(f"{t!r} is {art} {display} session ({ref.session_id}): `{inv.command}` reads Claude Code's own "
                      f"surfaces ({_why(inv)}) and cannot answer for a session of another provider") from exc


def _other_provider_session(inv: Invocation):
    from ..providers.scope import find_session, survey

    if not inv.targets:
        return None
    sv = survey(inv.root_request(), light=frozenset({deep_name()}))
    for t in inv.targets:
        for r in find_session(sv, t):
            if not _deep(r.provider):
                e = sv.entry(r.provider)
                return t, r, e.display if e else r.provider
    return None


def refuse_with_dataset(inv: Invocation) -> None:
    """`--dataset` answers from the dataset: a TARGET, --sessions-from or a data root flag on the
    same command line names this machine's files, which it does not read (exit 2)."""
    named = [n for n in inv.named if n.endswith("-home") or n.startswith("--root") or n == "--home"]
    if inv.targets:
        named.insert(0, "TARGET")
    if inv.sessions_from is not None:
        named.append("--sessions-from")
    if named:
        raise UsageError(f"--dataset answers over every machine of the dataset; {', '.join(named)} names this "
                         "machine's files, which it does not read",
                         hint="narrow with --provider, or use `sessionsift query SQL --dataset DATASET`")


def make_selection(inv: Invocation, subagents: bool = True, narrowed: bool = True):
    """Every provider's sessions named by the invocation's targets (providers.scope.select),
    narrowed by its session filters (`narrowed=False`: the command applies --since/--until to
    records itself and --limit to its rows); `subagents=False` (`--no-subagents`): without other
    providers' child sessions (Selection.main_only)."""
    from ..providers.scope import select, survey, narrow

    sv = survey(inv.root_request(), light=frozenset({deep_name()}))
    sel = select(sv, list(inv.targets), inv.session_list())
    sel.index_off = inv.index_off()
    if sel.claude is not None:
        deep_use_index(sel.claude, inv.index_off())
    n = inv.narrowing()
    if n is not None and narrowed:
        sel = narrow(sel, n)
    elif n is not None and n.project is not None:
        sel = narrow(sel, dataclasses.replace(n, since=None, until=None, limit=None,
                                              given=tuple(g for g in n.given if g.startswith("--project"))))
    return sel if subagents else sel.main_only()


def claude_scope(sel, empty: bool = False) -> Scope:
    """The Claude Code part of a selection as the deep model's Scope (an empty one when Claude
    Code was not looked at, its root is absent, or `empty`: the query can select none of its
    records)."""
    if sel.claude is not None and not empty:
        return sel.claude
    ce = sel.survey.entry(deep_name())
    path = ce.root.path if ce is not None and ce.root is not None and ce.root.path is not None else Path("-")
    src = _claude_source(ce.root.source) if ce is not None and ce.root is not None else "~/.claude"
    sc = deep_empty(path, src)
    if sel.claude is not None:
        sc.index_off = sel.claude.index_off
    return sc


def scope_header(inv: Invocation, scope: Scope) -> dict:
    out = {
        "claude_home": str(scope.home.path),
        "claude_home_source": scope.home.source,
        "sessions": len(scope.sessions),
        "not_read": not_read(inv),
    }
    if getattr(scope, "narrowed", None) is not None:
        out["narrowed"] = scope.narrowed.to_json()
    return out


def selection_header(sel) -> dict:
    """Header fields of a cross-provider answer: Claude Code's root (null when not looked at),
    the session count and every provider's root."""
    ce = sel.survey.entry(deep_name())
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
        **({"narrowed": sel.narrowed.to_json()} if sel.narrowed is not None else {}),
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
    # a provider whose subagents are lanes of a session's own paths counts no row for them
    other_kids = sum(k for c, k in zip(ok, kids) if k is not None and not _lanes_in_paths(c.provider))
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
        "provider": deep_name(),  # every row names its provider (other providers' rows do too)
        "session_id": lane.session_id,
        "lane": lane.display,
        "is_subagent": lane.is_subagent,
        "parent_session_id": lane.parent_session_id,
        "agent_id": lane.agent_id,
        "path": str(lane.path),
    }


def refetch(lane, line: int, home: str | None) -> str:
    """`home`: the Claude Code root to name (claude_root_arg of the invocation)."""
    return refetch_at(lane.session_id, str(lane.path), lane.is_subagent, line, home)


def refetch_at(session_id: str, path: str, is_subagent: bool, line: int | None, home: str | None) -> str | None:
    """The ready-to-run command that shows one record (None when there is no line); `home`: the
    Claude Code root to name (claude_root_arg of the invocation), None: none."""
    if line is None:
        return None
    target = shlex.quote(path) if is_subagent else session_id
    h = f" --claude-home {shlex.quote(str(home))}" if home else ""
    return f"sessionsift show {target} --line {line}{h}"
