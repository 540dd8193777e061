"""Which providers an answer looks at, where, what each contributed, and which sessions a
target names across providers.

The rule (docs/cli.md "Data roots"): when the caller names ANY root (a provider's own root, or
``home`` = ``--home DIR``), a provider without a root of its own is not looked at: its coverage
is ``not_looked`` with a reason naming the flag that would include it -- never a 0, and never
this machine's home. With no root named at all, every provider resolves its own flag > env var >
default. ``only`` (``--provider``, repeatable) narrows further; a provider whose reader cannot be
loaded is ``no_adapter``. Coverage is computed from what the survey found, never written out.
"""

from __future__ import annotations

import os
import unicodedata
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Mapping

from ..errors import TargetError, UsageError
from . import KNOWN, builtins_only, load, load_failures, registry
from .base import Coverage, Discovery, Problem, Provider, Root, SessionRef

ROOTS: dict[str, tuple[str, str]] = {
    "claude-code": ("--claude-home", "Claude Code data root (default: --home DIR/.claude, else a non-empty "
                                     "$CLAUDE_CONFIG_DIR, else ~/.claude)."),
    "codex": ("--codex-home", "Codex CLI data root (default: $CODEX_HOME, else ~/.codex)."),
    "gemini-cli": ("--gemini-home", "Gemini CLI data root: the .gemini dir itself (default: "
                                    "$GEMINI_CLI_HOME/.gemini, else ~/.gemini)."),
    "opencode": ("--opencode-home", "opencode data dir or database (default: $OPENCODE_DB, else "
                                    "$XDG_DATA_HOME/opencode, else ~/.local/share/opencode)."),
    "crush": ("--crush-home", "Crush global data dir (default: $CRUSH_GLOBAL_DATA, else $XDG_DATA_HOME/crush, "
                              "else ~/.local/share/crush)."),
    "pi": ("--pi-home", "pi agent dir (holding sessions/) or a session dir (default: $PI_CODING_AGENT_SESSION_DIR, "
                        "else $PI_CODING_AGENT_DIR, else ~/.pi/agent)."),
    "qwen-code": ("--qwen-home", "Qwen Code dir holding projects/ (default: $QWEN_RUNTIME_DIR, else $QWEN_HOME, "
                                "else ~/.qwen)."),
    "copilot-cli": ("--copilot-home", "GitHub Copilot CLI state dir, holding session-state/ (default: $COPILOT_HOME, "
                                      "else ~/.copilot)."),
    "kilo-code": ("--kilo-home", "Kilo Code data dir (default: $KILO_DB, else $XDG_DATA_HOME/kilo, else "
                                 "~/.local/share/kilo)."),
}
"""Each built-in provider's root flag and its help (every command takes them: cli/invocation.py),
also for one whose reader is not installed. A new built-in reader adds its row here."""

FLAGS: dict[str, str] = {name: flag for name, (flag, _h) in ROOTS.items()}
"""The CLI flag of each built-in provider's root."""

ALIASES = {"claude": "claude-code", "gemini": "gemini-cli", "codex-cli": "codex", "qwen": "qwen-code",
           "copilot": "copilot-cli", "kilo": "kilo-code"}


def flag_of(name: str) -> str:
    return FLAGS.get(name) or f"--root {name}=DIR"


def names() -> list[str]:
    """Every provider an answer names: the built-in ones (KNOWN order), then outside readers
    that loaded, then outside entry points that failed to load."""
    out = list(KNOWN)
    if builtins_only():
        return out  # the built-in readers alone: no module imported to name them
    out += [n for n in registry() if n not in out]
    out += [n for n in load_failures() if n not in out]
    return out


def canonical_name(name: str) -> str:
    n = ALIASES.get(name, name)
    valid = names()
    if n not in valid:
        raise UsageError(f"unknown provider {name!r}; known: {', '.join(valid)}")
    return n


@dataclass(frozen=True)
class RootRequest:
    """What the caller named on the command line."""

    roots: Mapping[str, str] = field(default_factory=dict)
    """provider name -> root directory (its own flag, or ``--root NAME=DIR``)."""
    home: str | None = None
    """``--home DIR``: every provider's default relative path under DIR."""
    only: tuple[str, ...] = ()
    """``--provider``: the providers asked for (empty = all)."""
    index_off: bool | str | None = None
    """Why the index is off (``--no-index``; None: on unless SESSIONSIFT_NO_INDEX says so): handed
    to a discovery that keeps what it peeked at (index/kept.py Peeks)."""

    @property
    def any_root(self) -> bool:
        return bool(self.home) or any(self.roots.values())

    def looks_at(self, name: str) -> bool:
        """Whether provider ``name`` is looked at under the root rule: it has a root of its own,
        ``--home`` names one for every provider, or no root is named at all (then it resolves its
        own env var > default)."""
        return bool(self.roots.get(name)) or bool(self.home) or not self.any_root


@dataclass
class Entry:
    """One provider in an answer."""

    name: str
    display: str
    provider: Provider | None
    root: Root | None
    coverage: Coverage
    sessions: list[SessionRef] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    @property
    def looked(self) -> bool:
        return self.coverage.state not in ("not_looked", "no_adapter")


@dataclass
class Survey:
    entries: list[Entry]
    request: RootRequest

    def entry(self, name: str) -> Entry | None:
        for e in self.entries:
            if e.name == name:
                return e
        return None

    def coverage(self) -> list[Coverage]:
        """Each provider's coverage in the unit every answer uses (Selection.coverage): top-level
        sessions, subagents apart (Claude Code's lanes as its full discovery listed them, null
        after a light one; another provider's child sessions)."""
        out = []
        for e in self.entries:
            c = e.coverage
            if c.state == "ok":
                kids: int | None = sum(1 for r in e.sessions if r.is_subagent)
                if e.name == CLAUDE:
                    kids = None if any(r.extra.get("light") or "lanes" not in r.extra for r in e.sessions) else \
                        sum(len(r.extra["lanes"]) - 1 for r in e.sessions)
                c = replace(c, sessions=sum(1 for r in e.sessions if r.parent_session_id is None), subagents=kids,
                            helpers=sum(1 for r in e.sessions if r.helper is not None))
            elif c.state == "absent":
                c = replace(c, subagents=0, helpers=0)
            out.append(c)
        return out

    def problems(self) -> list[Problem]:
        return [p for e in self.entries for p in e.problems]

    def incomplete(self) -> bool:
        """Something in scope could not be read (the answer is a lower bound)."""
        return any(e.coverage.state in ("unreadable", "unknown_format") for e in self.entries) or bool(self.problems())

    def provider(self, name: str) -> Provider | None:
        e = self.entry(name)
        return e.provider if e else None


def _display(name: str, cls: type[Provider] | None) -> str:
    return getattr(cls, "display", None) or KNOWN.get(name) or name


def _cov(name: str, display: str, state, reason: str | None, root: Root | None = None) -> Coverage:
    return Coverage(name, display, state, 0 if state == "absent" else None, reason,
                    None if root is None or root.path is None else str(root.path),
                    None if root is None else root.source)


def survey(req: RootRequest, env: Mapping[str, str] | None = None, *,
           light: frozenset[str] = frozenset()) -> Survey:
    """Resolve every provider's root by the rule above and discover its sessions.

    ``light``: providers whose discovery may skip per-session facts beyond ids and paths (the
    caller reads those sessions through its own deeper path), where the reader supports it.
    """
    env = os.environ if env is None else env
    only = {canonical_name(n) for n in req.only}
    for n in req.roots:
        canonical_name(n)
    lazy = builtins_only()
    reg = {} if lazy else registry()
    failed = {} if lazy else load_failures()
    entries: list[Entry] = []
    for name in names():
        if lazy and ((only and name not in only) or not req.looks_at(name)):
            # a built-in reader not looked at is not imported: its display name and flag are
            # KNOWN's and FLAGS' (tests/test_provider_registry.py holds its class to them)
            display = KNOWN[name]
            entries.append(Entry(name, display, None, None, _cov(name, display, "not_looked", (
                "not in --provider" if only and name not in only else f"pass {FLAGS[name]} or --home DIR"))))
            continue
        cls = load(name) if lazy else reg.get(name)
        if lazy and cls is None:
            failed = load_failures()
        display = _display(name, cls)
        flag = getattr(cls, "home_flag", None) or flag_of(name)
        if only and name not in only:
            entries.append(Entry(name, display, None, None, _cov(name, display, "not_looked",
                                                                 "not in --provider")))
            continue
        if cls is None:
            why = failed.get(name) or "no reader installed"
            entries.append(Entry(name, display, None, None, _cov(name, display, "no_adapter", why)))
            continue
        prov = cls()
        explicit = req.roots.get(name)
        if not req.looks_at(name):
            entries.append(Entry(name, display, prov, None, _cov(
                name, display, "not_looked", f"pass {flag} or --home DIR")))
            continue
        try:
            root = prov.locate(explicit=explicit or None, home=req.home, env=env)
        except Exception as exc:  # a reader's bug must not take the answer down: say so
            entries.append(Entry(name, display, prov, None, _cov(
                name, display, "unreadable", f"locating its root failed: {type(exc).__name__}: {exc}")))
            continue
        try:
            kw: dict = {"index_off": req.index_off} if _takes(prov, "index_off") else {}
            if name in light and _takes_facts(prov):
                d: Discovery = prov.discover(root, facts=False, **kw)  # type: ignore[call-arg]
            else:
                d = prov.discover(root, **kw)
        except Exception as exc:
            entries.append(Entry(name, display, prov, root, _cov(
                name, display, "unreadable", f"reader failed: {type(exc).__name__}: {exc}", root)))
            continue
        entries.append(Entry(name, display, prov, root, d.coverage, list(d.sessions), list(d.problems)))
    return Survey(entries, req)


def _takes_facts(prov: Provider) -> bool:
    return _takes(prov, "facts")


def _takes(prov: Provider, name: str) -> bool:
    import inspect

    try:
        return name in inspect.signature(prov.discover).parameters
    except (TypeError, ValueError):
        return False


# -- targets across providers ------------------------------------------------------------------


@dataclass
class Selection:
    """The sessions an answer covers: Claude Code's through its deep ``Scope`` (its own
    commands keep the deep model), every other provider's as SessionRefs."""

    survey: Survey
    claude: object | None
    """``sessionsift.providers.claude.discover.Scope`` of the Claude sessions selected (None: Claude not looked at
    or its root absent/unreadable)."""
    refs: list[SessionRef]
    """Selected sessions of every provider but Claude Code, in survey order."""
    children: frozenset = frozenset()
    """``(provider, session_id)`` of the child sessions (subagents) in ``refs`` only because a
    target named their parent: a named session includes its subagents, as a Claude Code session
    includes its lanes. Commands that answer for one session (``show``) leave them out."""
    subagents: bool = True
    """False (``--no-subagents``): the answer leaves subagents out -- other providers' child
    sessions are not in ``refs`` and no provider's subagents are counted (coverage: null)."""
    narrowed: "Narrowed | None" = None
    """What ``--since``/``--until``/``--project``/``--limit`` left out (None: not narrowed)."""
    targeted: bool = False
    """Sessions were named (targets or ``--sessions-from``): the answer is not the whole home."""
    index_off: str | None = None
    """Why the index is off for this answer (``--no-index``, SESSIONSIFT_NO_INDEX), None: on."""

    @property
    def deep_provider(self) -> str:
        """The provider whose sessions :attr:`claude` holds as its deep Scope (not in :attr:`refs`)."""
        return CLAUDE

    def session_refs(self) -> list[SessionRef]:
        """Every session in the answer as a SessionRef, every provider alike: Claude Code's (its deep
        Scope's sessions, as light refs: main transcript, project dir, root) first, then the
        others' in survey order."""
        out: list[SessionRef] = []
        if self.claude is not None:
            home = getattr(getattr(self.claude, "home", None), "path", None)
            for s in self.claude.sessions:  # type: ignore[attr-defined]
                out.append(SessionRef(CLAUDE, s.session_id, [s.path],
                                      extra={"project_dir": str(s.project_dir), "light": True,
                                             **({"root": str(home)} if home is not None else {})}))
        return out + list(self.refs)

    def counts(self) -> dict[str, int]:
        """Every session file/row in the answer per provider, child sessions included (Claude
        Code's lanes are not sessions of their own)."""
        out: dict[str, int] = {}
        if self.claude is not None:
            out["claude-code"] = len(self.claude.sessions)  # type: ignore[attr-defined]
        for r in self.refs:
            out[r.provider] = out.get(r.provider, 0) + 1
        return out

    def main_only(self) -> "Selection":
        """This selection without subagents (``--no-subagents``): other providers' child sessions
        dropped, as Claude Code's commands leave its subagent lanes out."""
        return replace(self, refs=[r for r in self.refs if r.parent_session_id is None], children=frozenset(),
                       subagents=False)

    def subagent_counts(self) -> dict[str, int | None]:
        """Subagents per provider, counted apart from its sessions: Claude Code's subagent lanes
        (``subagents/*.jsonl``, workflow agents), every other provider's child sessions (a
        SessionRef with ``parent_session_id``). None where a subagents directory could not be
        listed (not a 0). Computed once per selection."""
        got = self.__dict__.get("_subagents")
        if got is not None:
            return got
        out: dict[str, int | None] = {}
        if self.claude is not None:
            n: int | None = 0
            listed = getattr(self.claude, "listed_lanes", None) or {}  # what this answer's walk listed
            for s in self.claude.sessions:  # type: ignore[attr-defined]
                lanes = listed.get(s.session_id)
                if lanes is None:
                    lanes = s.subagent_lanes()
                if s.problems:  # (the path is built only when there is a problem to match it to)
                    bad = str(s.sidecar_dir / "subagents")
                    if any(p.path == bad for p in s.problems):
                        n = None
                        continue
                if n is not None:
                    n += len(lanes)
            out["claude-code"] = n
        for r in self.refs:
            if r.is_subagent:
                out[r.provider] = (out.get(r.provider) or 0) + 1
        self.__dict__["_subagents"] = out
        return out

    def helper_counts(self) -> dict[str, int]:
        """Helper sessions per provider (``SessionRef.helper``: not agents, not sessions)."""
        out: dict[str, int] = {}
        for r in self.refs:
            if r.helper is not None:
                out[r.provider] = out.get(r.provider, 0) + 1
        return out

    def top_level(self) -> int:
        """Top-level sessions in the answer (every provider): the unit of ``sessions`` in every
        header and summary (docs/json.md)."""
        n = len(self.claude.sessions) if self.claude is not None else 0  # type: ignore[attr-defined]
        return n + sum(1 for r in self.refs if r.parent_session_id is None)

    def subagents_total(self) -> int | None:
        """Subagents in the answer in coverage's unit (Claude Code's lanes, other providers'
        child sessions that are agents); None when not counted (``--no-subagents``, a subagents
        directory that could not be listed)."""
        if not self.subagents:
            return None
        got = self.subagent_counts()
        if any(v is None for v in got.values()):
            return None
        return sum(v for v in got.values() if v is not None)

    def child_sessions(self) -> int:
        """Other providers' child sessions in ``refs`` (subagents and helpers: rows of their
        own, unlike Claude Code's lanes)."""
        return sum(1 for r in self.refs if r.parent_session_id is not None)

    def coverage(self) -> list[Coverage]:
        """Each provider's coverage in one unit: ``sessions`` its top-level sessions in this
        answer, ``subagents`` its subagents (Claude Code's lanes, other providers' child
        sessions) apart; ``subagents`` null with ``--no-subagents`` or where it could not be
        counted."""
        top: dict[str, int] = {}
        if self.claude is not None:
            top["claude-code"] = len(self.claude.sessions)  # type: ignore[attr-defined]
        for r in self.refs:
            if r.parent_session_id is None:
                top[r.provider] = top.get(r.provider, 0) + 1
        kids = self.subagent_counts() if self.subagents else {}
        helps = self.helper_counts() if self.subagents else {}
        named = self.counts()
        out = []
        for e in self.survey.entries:
            c = e.coverage
            k = kids.get(e.name, 0) if self.subagents else None
            h = helps.get(e.name, 0) if self.subagents else None
            if c.state == "ok":
                c = replace(c, sessions=top.get(e.name, 0), subagents=k, helpers=h)
            elif c.state == "absent" and named.get(e.name):  # a session file named by path, outside the root
                c = replace(c, state="ok", sessions=top.get(e.name, 0), subagents=k, helpers=h,
                            reason=f"named by path; the root holds none ({c.reason})")
            elif c.state == "absent":
                c = replace(c, subagents=0 if self.subagents else None, helpers=0 if self.subagents else None)
            out.append(c)
        return out

    def problems(self) -> list[Problem]:
        ps = list(self.survey.problems())
        if self.claude is not None:
            seen = {(p.path, p.why) for p in ps}
            ps += [p for p in self.claude.problems if (p.path, p.why) not in seen]  # type: ignore[attr-defined]
        return ps

    def incomplete(self) -> bool:
        return bool(self.problems()) or any(c.state in ("unreadable", "unknown_format") for c in self.coverage())

    def total(self) -> int:
        return sum(self.counts().values())


CLAUDE = "claude-code"


@dataclass(frozen=True)
class Narrowing:
    """The session filters every command takes (``--since``/``--until``/``--project``/
    ``--limit``), applied to a Selection by :func:`narrow`."""

    since: "datetime | None" = None
    until: "datetime | None" = None
    project: str | None = None
    """A directory (the session's project is it or under it) or, with no path separator, the
    name of the project directory."""
    limit: int | None = None
    """At most this many top-level sessions, the most recently active first."""
    given: tuple[str, ...] = ()
    """The options as given, e.g. ``("--since 2d", "--project api")``, for the header."""

    @classmethod
    def parse(cls, *, since: str | None = None, until: str | None = None, project: str | None = None,
              limit: int | None = None) -> "Narrowing":
        from ..timefmt import parse_bound

        s = parse_bound(since) if since else None
        u = parse_bound(until, end=True) if until else None
        if s is not None and u is not None and s > u:
            raise UsageError(f"--since {since} is after --until {until}: the window is empty")
        proj = None
        if project:
            proj = project if not _is_path_like(project) else _plain(Path(project).expanduser())
        given = tuple(f"{k} {v}" for k, v in (("--since", since), ("--until", until), ("--project", project),
                                                ("--limit", limit)) if v is not None)
        return cls(s, u, proj, limit, given)

    def project_matches(self, project: str | None) -> bool:
        if self.project is None:
            return True
        if not project:
            return False
        if os.sep in self.project:
            p = _plain(Path(project))
            return p == self.project or p.startswith(self.project.rstrip(os.sep) + os.sep)
        return os.path.basename(os.path.normpath(project)) == self.project

    def in_window(self, first, last) -> bool:
        """Whether a session active from `first` to `last` (datetimes; either may be None, then
        the other stands for both) overlaps the window."""
        first = first or last
        last = last or first
        if self.since is not None and last < self.since:
            return False
        if self.until is not None and first > self.until:
            return False
        return True


@dataclass
class Narrowed:
    """What :func:`narrow` left out, for the answer's header (an answer narrower than the
    question says so)."""

    given: tuple[str, ...]
    kept: int
    left_out: int
    undated: int
    """Sessions left out because no instant of theirs is known (not even a file time)."""
    unplaced: int
    """Sessions left out by ``--project`` because they record no project."""

    def to_json(self) -> dict:
        return {"filters": list(self.given), "sessions_kept": self.kept, "sessions_left_out": self.left_out,
                "left_out_undated": self.undated, "left_out_no_project": self.unplaced}

    def text(self) -> str:
        extra = []
        if self.undated:
            extra.append(f"{self.undated} with no known instant")
        if self.unplaced:
            extra.append(f"{self.unplaced} recording no project")
        return (f"narrowed by {' '.join(self.given)}: {self.kept} session{'' if self.kept == 1 else 's'} kept, "
                f"{self.left_out} left out" + (f" (of them {', '.join(extra)})" if extra else ""))


def _is_path_like(t: str) -> bool:
    return t in (".", "..") or os.sep in t or t.startswith("~")


def _facts_of(sv: Survey, ref: SessionRef) -> SessionRef:
    """The ref with its project and instants, where discovery left them out (a light listing)."""
    if ref.project is not None and ref.last_at is not None:
        return ref
    prov = sv.provider(ref.provider)
    full = getattr(prov, "full", None)
    if full is None:
        return ref
    try:
        return full(ref)
    except Exception:  # a reader's bug: the facts stay unknown (the session is undated)
        return ref


def _claude_provider():
    cls = load(CLAUDE)
    if cls is None:
        from .claude import ClaudeCode as cls  # type: ignore[no-redef]
    return cls()


def _newest_mtime(paths) -> float | None:
    best = None
    for p in paths:
        try:
            m = os.stat(p).st_mtime
        except OSError:
            continue
        best = m if best is None or m > best else best
    return best


def narrow(sel: "Selection", n: Narrowing) -> "Selection":
    """`sel` with only the top-level sessions that pass `n` (a kept session keeps its subagents
    and child sessions), the most recently active first up to ``n.limit``. A session's activity
    is its first and last recorded instants, else its files' modification time; one with neither
    is left out and counted (``undated``). The Selection's ``narrowed`` says what was left out."""
    from datetime import datetime, timezone

    from ..timefmt import parse_ts
    from .claude import discover as D

    kept: list[tuple[float, str, object]] = []
    undated = unplaced = 0
    total = 0
    claude_refs: dict[str, SessionRef] = {}
    ce = sel.survey.entry(CLAUDE)
    if sel.claude is not None:
        prov = ce.provider if ce is not None and ce.provider is not None else _claude_provider()
        home = getattr(sel.claude, "home", None)
        for s in sel.claude.sessions:  # type: ignore[attr-defined]
            try:
                claude_refs[s.session_id] = prov.ref(s, home.path if home else None)  # type: ignore[union-attr]
            except Exception:
                claude_refs[s.session_id] = SessionRef(CLAUDE, s.session_id, [s.path])

    def judge(key: str, ref: SessionRef, paths) -> None:
        nonlocal undated, unplaced, total
        total += 1
        ref = _facts_of(sel.survey, ref) if (n.project or n.since or n.until or n.limit is not None) else ref
        if not n.project_matches(ref.project):
            if not ref.project:
                unplaced += 1
            return
        first, last = parse_ts(ref.first_at), parse_ts(ref.last_at)
        if last is None:
            m = _newest_mtime(paths)
            if m is not None:
                last = datetime.fromtimestamp(m, timezone.utc)
        if (n.since or n.until) and last is None and first is None:
            undated += 1
            return
        if (first or last) and not n.in_window(first, last):
            return
        kept.append(((last or first).timestamp() if (last or first) else float("-inf"), key, ref))

    if sel.claude is not None:
        for s in sel.claude.sessions:  # type: ignore[attr-defined]
            judge("c:" + s.session_id, claude_refs[s.session_id], [s.path])
    for r in sel.refs:
        if r.parent_session_id is None or (r.provider, r.session_id) in sel.children:
            if r.parent_session_id is not None:
                continue  # a child follows its parent
            judge(f"r:{r.provider}:{r.session_id}", r, r.paths)
    kept.sort(key=lambda x: x[0], reverse=True)
    if n.limit is not None:
        kept = kept[: n.limit]
    keys = {k for _t, k, _r in kept}
    scope = sel.claude
    if scope is not None:
        scope.sessions = [s for s in scope.sessions if "c:" + s.session_id in keys]  # type: ignore[attr-defined]
    top = {(r.provider, r.session_id) for r in sel.refs if f"r:{r.provider}:{r.session_id}" in keys}
    # children follow their (kept) parents, at any depth
    by_parent: dict[tuple[str, str], list[SessionRef]] = {}
    for r in sel.refs:
        if r.parent_session_id is not None:
            by_parent.setdefault((r.provider, r.parent_session_id), []).append(r)
    keep = set(top)
    stack = list(top)
    while stack:
        for k in by_parent.get(stack.pop(), []):
            kk = (k.provider, k.session_id)
            if kk not in keep:
                keep.add(kk)
                stack.append(kk)
    refs = [r for r in sel.refs if (r.provider, r.session_id) in keep]
    out = replace(sel, refs=refs)
    out.narrowed = Narrowed(n.given, len(kept), total - len(kept), undated, unplaced)
    return out


def _canon(p: str | os.PathLike[str]) -> str:
    return unicodedata.normalize("NFC", os.path.realpath(os.fspath(p)))


def _plain(p: Path) -> str:
    """An absolute, NFC, normalised spelling of a path that need not exist."""
    return unicodedata.normalize("NFC", os.path.normpath(os.path.abspath(os.fspath(p))))


def _looks_like_path(t: str) -> bool:
    return t == "." or os.sep in t or t.startswith("~") or t.endswith((".jsonl", ".json", ".db", ".zst"))


def select(sv: Survey, targets: list[str] | tuple[str, ...], sessions_from: list[str] | None = None) -> Selection:
    """Resolve targets across every provider looked at.

    A target is a session id or unique prefix (of any provider: exact ids win over prefixes; an
    ambiguous prefix is an error naming each candidate with its provider), a session file of any
    provider, a directory (the sessions recorded there: Claude Code's encoded project dir, or any
    provider's recorded project), or a Claude Code encoded project token. No target = every
    session of every provider looked at.
    """
    from .claude import discover as D

    ce = sv.entry(CLAUDE)
    choice = None
    claude_ok = False
    if ce is not None and ce.looked and ce.root is not None and ce.root.path is not None:
        src = ce.root.source if ce.root.source in ("--claude-home", "--home", "CLAUDE_CONFIG_DIR") else "~/.claude"
        choice = D.HomeChoice(ce.root.path, src)  # type: ignore[arg-type]
        claude_ok = ce.coverage.state == "ok"
    others = [r for e in sv.entries if e.name != CLAUDE and e.looked for r in e.sessions]
    claude_refs = ce.sessions if (ce is not None and claude_ok) else []
    targets = list(targets)
    scope = D.Scope(choice) if choice is not None else None
    picked: list[SessionRef] = []

    def add_claude(sc) -> None:
        assert scope is not None
        if not scope.sessions and not scope.problems and all(s.problems is sc.problems for s in sc.sessions):
            # the first resolution: its sessions already report into its problems list, which
            # becomes this scope's (no copy of each session; resolve_targets' ids are unique)
            scope.problems = sc.problems
            scope.sessions = list(sc.sessions)
            scope.project_dirs += sc.project_dirs
            scope.explicit_lanes.update(sc.explicit_lanes)
            return
        have = {s.session_id for s in scope.sessions}
        for s in sc.sessions:
            if s.session_id not in have:
                # what its side files cannot give is reported with this scope's problems
                scope.sessions.append(s if s.problems is scope.problems else D._with_problems(s, scope.problems))
                have.add(s.session_id)
        scope.problems += [p for p in sc.problems if p not in scope.problems]
        scope.project_dirs += sc.project_dirs
        scope.explicit_lanes.update(sc.explicit_lanes)

    picked_ids: set[int] = set()

    def add_ref(r: SessionRef) -> None:
        if id(r) not in picked_ids:
            picked_ids.add(id(r))
            picked.append(r)

    listed = None
    if claude_ok and choice is not None and ce is not None and hasattr(ce.provider, "listed"):
        listed = ce.provider.listed(choice.path)  # type: ignore[union-attr]  # discovery's own listing
    if not targets:
        if claude_ok and choice is not None:
            add_claude(D.resolve_targets([], choice=choice, listed=listed))
        for r in others:
            add_ref(r)
    for t in targets:
        if _looks_like_path(t) or (Path(t).expanduser().exists() and not _in_claude_projects(choice, t)):
            found = False
            p = Path(t).expanduser()
            if p.exists():
                cp = _canon(p)
                for r in others:
                    if any(_canon(x) == cp for x in r.paths) or (p.is_dir() and r.project and _canon(r.project) == cp):
                        add_ref(r)
                        found = True
            else:
                # a project directory that is gone (or on another machine) still names the
                # sessions that recorded it as their project
                want = _plain(p)
                for r in others:
                    if r.project and _plain(Path(r.project)) == want:
                        add_ref(r)
                        found = True
            claude_err = None
            # a transcript file names its session whatever the root holds (none, or no projects/)
            transcript = t.endswith(".jsonl") and p.is_file()
            if choice is not None and (claude_ok or transcript) and not found:
                try:
                    sc = D.resolve_targets([t], choice=choice, listed=listed) if claude_ok else _transcript_scope(D, choice, p)
                except TargetError as exc:
                    claude_err = exc
                else:
                    if sc.sessions:
                        add_claude(sc)
                        found = True
            if not found:
                if claude_err is not None and not others:
                    raise claude_err
                raise TargetError(_none_msg(sv, f"no session of any provider looked at is recorded for {t!r}"))
            continue
        if _in_claude_projects(choice, t) and claude_ok and choice is not None:
            add_claude(D.resolve_targets([t], choice=choice, listed=listed))
            continue
        cands = [r for r in claude_refs if r.session_id == t and D._UUIDISH.match(t)]
        cands += [r for r in others if r.session_id == t]
        if not cands and len(t) >= 4:
            cands = [r for r in claude_refs if r.session_id.startswith(t) and D._UUIDISH.match(t)]
            cands += [r for r in others if r.session_id.startswith(t)]
        keys = sorted({(r.provider, r.session_id) for r in cands})
        if len(keys) > 1:
            shown = ", ".join(f"{sid} ({_display_of(sv, p)})" for p, sid in keys[:10])
            raise TargetError(f"session prefix {t!r} is ambiguous: {shown}" + (" ..." if len(keys) > 10 else ""))
        if not keys:
            if (short := D.too_short(t)) is not None:
                raise short
            if claude_ok and choice is not None and not others:
                D.resolve_targets([t], choice=choice, listed=listed)  # raises Claude Code's own message
            raise TargetError(_none_msg(sv, f"target {t!r} is not a path, a Claude Code project token, "
                                            "or a session id/prefix of any provider looked at"))
        r = cands[0]
        if r.provider == CLAUDE:
            assert scope is not None
            s = D.Session(r.session_id, r.paths[0].parent, r.paths[0], scope.problems)
            if all(x.session_id != s.session_id for x in scope.sessions):
                scope.sessions.append(s)
        else:
            add_ref(r)
    children: set[tuple[str, str]] = set()
    if targets:  # a named session brings its subagents (child sessions, at any depth) along
        named = {(r.provider, r.session_id) for r in picked}
        kids: dict[tuple[str, str], list[SessionRef]] = {}
        for r in others:
            if r.parent_session_id is not None:
                kids.setdefault((r.provider, r.parent_session_id), []).append(r)
        stack = [(r.provider, r.session_id) for r in picked]
        while stack:
            for k in kids.get(stack.pop(), []):
                key = (k.provider, k.session_id)
                if key not in named and key not in children:
                    children.add(key)
                    add_ref(k)
                    stack.append(key)
    if sessions_from is not None:
        wanted = set(sessions_from)
        if scope is not None:
            scope.sessions = [s for s in scope.sessions if s.session_id in wanted]
        picked = [r for r in picked if r.session_id in wanted]
    if scope is not None:
        scope.sessions.sort(key=lambda s: (str(s.project_dir), s.session_id))
    return Selection(sv, scope if (claude_ok or (scope is not None and scope.sessions)) else None, picked,
                     frozenset(children), targeted=bool(targets) or sessions_from is not None)


def _transcript_scope(D, choice, p: Path):
    """A Claude Code transcript named by path while the root holds no sessions (no root, no
    projects/): the file still names its session (and a subagent file its lane)."""
    sc = D.Scope(choice)
    s, lane = D._session_from_transcript(p, sc.problems)
    sc.sessions.append(s)
    if lane is not None:
        sc.explicit_lanes[s.session_id] = lane
    return sc


def _in_claude_projects(choice, t: str) -> bool:
    if choice is None or os.sep in t:
        return False
    try:
        return (choice.path / "projects" / t).is_dir()
    except OSError:
        return False


def _display_of(sv: Survey, name: str) -> str:
    e = sv.entry(name)
    return e.display if e else name


def _none_msg(sv: Survey, msg: str) -> str:
    looked = [e.display for e in sv.entries if e.looked]
    skipped = [f"{e.display} ({e.coverage.reason})" for e in sv.entries
               if e.coverage.state == "not_looked"]
    out = msg + f" (looked at: {', '.join(looked) or 'none'}"
    if skipped:
        out += "; not looked at: " + ", ".join(skipped)
    return out + ")"


def find_session(sv: Survey, target: str) -> list[SessionRef]:
    """Sessions of any provider looked at whose id is ``target`` or starts with it (>= 4
    characters), exact ids first; used to say which provider holds a session."""
    refs = [r for e in sv.entries if e.looked for r in e.sessions]
    hit = [r for r in refs if r.session_id == target]
    if not hit and len(target) >= 4:
        hit = [r for r in refs if r.session_id.startswith(target)]
    return hit
