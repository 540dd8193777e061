"""WHERE: find Claude Code's data root, its project directories, sessions and subagent lanes.

Layout (as the real client writes it: TAIL-008, REC-027 in docs/claims.md):
  <home>/projects/<ENCODED-cwd>/<session-id>.jsonl                 top-level session
  <home>/projects/<ENCODED>/<session-id>/subagents/agent-<id>.jsonl  built-in subagent lane
  <home>/projects/<ENCODED>/<session-id>/subagents/workflows/wf_*/agent-<id>.jsonl  workflow lane
  .../wf_*/journal.jsonl is an event log, not a transcript.

Data root precedence: --claude-home > --home DIR (DIR/.claude) > non-empty $CLAUDE_CONFIG_DIR >
~/.claude. An EMPTY
CLAUDE_CONFIG_DIR counts as unset here (the client itself would resolve it to the empty string,
i.e. relative to its cwd - PATH-011 - which is never what a reader wants).
"""

from __future__ import annotations

import os
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Literal

from ...errors import TargetError
from ..base import Problem

MAX_SANITIZED_LENGTH = 200
MIN_PREFIX = 4
"""A session id prefix must have at least this many characters (a shorter one matches too many)."""
_UUIDISH = re.compile(r"^[0-9a-fA-F-]{4,}$")
_SHORT_PREFIX = re.compile(r"^[0-9A-Za-z_-]{1,3}$")


def too_short(t: str) -> TargetError | None:
    """The error for a target that can only be a session-id prefix, and is shorter than MIN_PREFIX."""
    if _SHORT_PREFIX.match(t):
        return TargetError(f"session prefix {t!r} is too short: give at least {MIN_PREFIX} characters of the "
                           f"session id", hint="`sessionsift list` shows the ids")
    return None

LaneKind = Literal["main", "subagent", "workflow"]


@dataclass(frozen=True)
class HomeChoice:
    path: Path
    source: Literal["--claude-home", "--home", "CLAUDE_CONFIG_DIR", "~/.claude"]


def claude_home(explicit: str | os.PathLike[str] | None = None,
                home: str | os.PathLike[str] | None = None) -> HomeChoice:
    """Resolve the data root by the documented precedence (`home`: the --home DIR, whose
    `.claude` is the root when no --claude-home is given)."""
    if explicit:
        return HomeChoice(Path(explicit).expanduser(), "--claude-home")
    if home:
        return HomeChoice(Path(home).expanduser() / ".claude", "--home")
    env = os.environ.get("CLAUDE_CONFIG_DIR")
    if env:
        return HomeChoice(Path(env).expanduser(), "CLAUDE_CONFIG_DIR")
    return HomeChoice(Path.home() / ".claude", "~/.claude")


def _js_hash36(s: str) -> str:
    """The client's 31-multiplier int32 string hash over UTF-16 code units, |h| in base 36."""
    h = 0
    data = s.encode("utf-16-le", "surrogatepass")
    for i in range(0, len(data), 2):
        unit = data[i] | (data[i + 1] << 8)
        h = ((h << 5) - h + unit) & 0xFFFFFFFF
    if h >= 0x80000000:
        h -= 0x100000000
    h = abs(h)
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    if h == 0:
        return "0"
    out = []
    while h:
        h, r = divmod(h, 36)
        out.append(digits[r])
    return "".join(reversed(out))


def sanitize(cwd: str) -> str:
    """Encode a path as the client does: NFC, then every UTF-16 code unit outside [A-Za-z0-9]
    becomes one '-' (an astral character gives two); over 200 units -> `<first-200>-<hash>`."""
    nfc = unicodedata.normalize("NFC", cwd)
    out: list[str] = []
    for ch in nfc:
        if ch.isascii() and ch.isalnum():
            out.append(ch)
        else:
            out.append("--" if ord(ch) > 0xFFFF else "-")
    enc = "".join(out)
    if len(enc) <= MAX_SANITIZED_LENGTH:
        return enc
    return f"{enc[:MAX_SANITIZED_LENGTH]}-{_js_hash36(cwd)}"


def canonical_cwd(path: str | os.PathLike[str]) -> str:
    """realpath then NFC: the form the client encodes (PATH-002)."""
    return unicodedata.normalize("NFC", os.path.realpath(os.fspath(path)))


@dataclass(frozen=True)
class Lane:
    """One transcript file: a top-level session's main lane or one of its subagent lanes."""

    path: Path
    session_id: str
    """The owning top-level session id."""
    lane_id: str
    """"main" for the session's own transcript, else the lane's file stem (e.g. agent-<id>)."""
    kind: LaneKind
    workflow_run: str | None = None
    index_off: str | None = field(default=None, compare=False, hash=False, repr=False)
    """Why readings of this lane neither use nor update the index (its session's, from the command
    line: ``--no-index``); None: they do (index/config.py)."""

    @property
    def is_subagent(self) -> bool:
        return self.kind != "main"

    @property
    def parent_session_id(self) -> str | None:
        return self.session_id if self.is_subagent else None

    @property
    def agent_id(self) -> str | None:
        if not self.is_subagent:
            return None
        stem = self.lane_id
        return stem[len("agent-"):] if stem.startswith("agent-") else stem

    def compactions(self, index=None):
        """This lane's compactions and turns for `verbatim` (providers/claude/verbatim.py
        ``LaneHistory``; `index`: its prebuilt ``LaneIndex``)."""
        from .verbatim import LaneHistory

        return LaneHistory(self, index)

    def shown(self, lines: str | None = None, uuid: str | None = None, turn: int | None = None,
              raw: bool = False, full: bool = False):
        """`show`'s records of this lane (show.py ``shown``): its index and ``(record, display text,
        collapsed payload or None)`` for the lines, uuid or turn addressed."""
        from .show import shown

        return shown(self, lines=lines, uuid=uuid, turn=turn, raw=raw, full=full)

    def branch_points(self):
        """This lane's index and its branch points (show.py ``branch_points``)."""
        from .show import branch_points

        return branch_points(self)

    def index_state(self):
        """What the index holds for this lane now (cache/lanes.py ``state``: fresh, grown, stale,
        absent or unreadable, with its sizes)."""
        from .cache import lanes as L

        return L.state(self)

    def index_update(self):
        """This lane's census, from its index when fresh, else scanned and indexed as it is
        (cache/lanes.py ``lane_stats``): ``(LaneStats, Outcome)``. Raises OSError."""
        from .cache import lanes as L

        return L.lane_stats(self)

    def index_remove(self) -> int | None:
        """Remove this lane's index file (cache/lanes.py ``remove``): its size, or None when there was none."""
        from .cache import lanes as L

        return L.remove(self)

    @property
    def display(self) -> str:
        if self.kind == "main":
            return "main"
        if self.workflow_run:
            return f"{self.workflow_run}/{self.lane_id}"
        return self.lane_id


_CHILD = getattr(Path, "_make_child_relpath", None)


def _child(d: Path, name: str) -> Path:
    """`d / name` for a directory entry's name (no separator, not `.`/`..`): pathlib's own
    `iterdir` builder where it has one (~0.8 us instead of ~3-8 us to parse a path string; a
    store lists tens of thousands of transcripts), else `d / name`."""
    if _CHILD is not None:
        return _CHILD(d, name)
    return d / name  # pragma: no cover - a pathlib without the helper


def _entry_kind(e: os.DirEntry) -> str | None:
    """None for a regular file (following symlinks); else why a `*.jsonl` entry is no transcript."""
    try:
        if e.is_file():
            return None
        if e.is_symlink():
            return "dangling symlink (target missing, or a loop)"
        if e.is_dir():
            return "a directory named *.jsonl, not a transcript"
        return "not a regular file (a FIFO, socket or device named *.jsonl)"
    except OSError as exc:
        return f"unreadable: {exc.strerror}"


def _scandir(path: Path, problems: list | None, what: str) -> list[os.DirEntry]:
    """The entries of `path` sorted by name; [] when it does not exist. Any other failure to list
    it is a problem (a directory we could not look into is not an empty one)."""
    try:
        return sorted(os.scandir(path), key=lambda e: e.name)
    except (FileNotFoundError, NotADirectoryError):
        return []
    except OSError as exc:
        _problem(problems, str(path), f"{what} unreadable: {exc.strerror}")
        return []


def _problem(problems: list | None, path: str, why: str) -> None:
    if problems is None:
        return
    pr = Problem(path, why)
    if pr not in problems:
        problems.append(pr)


@dataclass(frozen=True)
class Session:
    session_id: str
    project_dir: Path
    path: Path
    problems: list = field(default_factory=list, compare=False, hash=False, repr=False)
    """Where what this session's side files could not give is reported (shared with its Scope's
    `problems`, so every command that reports the scope's problems reports these): an unreadable
    subagents/ or workflow directory, a dangling-symlink lane, a FIFO or directory named *.jsonl."""
    sidecar: bool | None = field(default=None, compare=False, hash=False, repr=False)
    """Whether `<project>/<session_id>/` is a directory, as the project listing showed it (None:
    not known, look). False skips the listing of its subagents (most sessions have none)."""
    index_off: str | None = field(default=None, compare=False, hash=False, repr=False)
    """Why readings of this session's lanes neither use nor update the index (Scope.index_off)."""

    @property
    def sidecar_dir(self) -> Path:
        return self.project_dir / self.session_id

    @property
    def main(self) -> Lane:
        return Lane(self.path, self.session_id, "main", "main", index_off=self.index_off)

    def subagent_lanes(self) -> list[Lane]:
        """Subagent lanes in a stable order (built-in first, then workflow runs). What could not be
        looked at is added to `problems`, never dropped silently."""
        out: list[Lane] = []
        if self.sidecar is False:
            return out
        sub = _child(_child(self.project_dir, self.session_id), "subagents")
        for e in _scandir(sub, self.problems, "subagents directory"):
            if not e.name.endswith(".jsonl"):
                continue
            why = _entry_kind(e)
            if why is None:
                out.append(Lane(_child(sub, e.name), self.session_id, e.name[:-6], "subagent", index_off=self.index_off))
            else:
                _problem(self.problems, e.path, why)
        wfs = _child(sub, "workflows")
        for run in _scandir(wfs, self.problems, "workflows directory"):
            try:
                is_run = run.name.startswith("wf_") and run.is_dir()
            except OSError:
                is_run = False
            if not is_run:
                continue
            rd = _child(wfs, run.name)
            for e in _scandir(rd, self.problems, "workflow run directory"):
                if not e.name.endswith(".jsonl") or e.name == "journal.jsonl":
                    continue
                why = _entry_kind(e)
                if why is None:
                    out.append(Lane(_child(rd, e.name), self.session_id, e.name[:-6], "workflow", run.name,
                                    index_off=self.index_off))
                else:
                    _problem(self.problems, e.path, why)
        return out

    def lanes(self, subagents: bool = True) -> list[Lane]:
        return [self.main] + (self.subagent_lanes() if subagents else [])

    def workflow_journals(self) -> list[Path]:
        """Every `wf_*/journal.jsonl` present (readable or not: a reader reports what it cannot
        read); an unlistable workflows directory is a problem."""
        out = []
        for r in _scandir(self.sidecar_dir / "subagents" / "workflows", self.problems, "workflows directory"):
            if not r.name.startswith("wf_"):
                continue
            j = Path(r.path) / "journal.jsonl"
            try:
                os.stat(j)
            except FileNotFoundError:
                continue
            except OSError as exc:
                _problem(self.problems, str(j), f"workflow journal unreadable: {exc.strerror}")
                continue
            out.append(j)
        return out


@dataclass
class Scope:
    """The sessions a command will read, and what could not be looked at."""

    home: HomeChoice
    sessions: list[Session] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    project_dirs: int = 0
    explicit_lanes: dict[str, Lane] = field(default_factory=dict)
    """Sessions addressed through a subagent transcript path: session_id -> that lane."""
    listed_lanes: dict[str, list[Lane]] = field(default_factory=dict, compare=False, repr=False)
    """session_id -> its subagent lanes as one answer's walk listed them (search's `lanes_of`),
    so counting that answer's subagents (the coverage line) does not list every sidecar again.
    Only what this answer listed: never refreshed, never kept across answers."""
    index_off: str | None = field(default=None, compare=False)
    """Why the answer over this scope neither uses nor updates the index (``--no-index``, the
    SESSIONSIFT_NO_INDEX variable); None: it does. Carried with the scope, its sessions and their
    lanes so every reading of its transcripts follows the one command line (index/config.py);
    set it with :meth:`use_index`."""
    narrowed: object = field(default=None, compare=False, repr=False)
    """What the command line's session filters left out (providers.scope.Narrowed), or None."""

    def pick_lane(self, lane_name: str | None = None) -> "Lane":
        """The one lane a single-session command reads: the scope's one session's explicit lane, its
        main lane, or the subagent lane `lane_name` names (show.py ``pick_lane``)."""
        from .show import pick_lane

        return pick_lane(self, lane_name)

    def root_summaries(self) -> list[tuple[str, str]]:
        """(name, index kind) of every summary the index keeps per data root of this model (the
        census, answers, files, usage, fork families and the kept lane censuses; cache/), legacy
        kinds of files last: what `index clear` removes beside the lanes' own files
        (``store.index_path(kind, root)``)."""
        from .cache import answers, filesummary, forks, lanes as lane_cache, summary, usagecache

        return [("census", summary.KIND), ("answers", answers.KIND), ("files", filesummary.KIND),
                ("usage", usagecache.KIND), ("forks", forks.KIND),
                ("stats", lane_cache.STATS_ROOT)] + [("files", k) for k in filesummary.LEGACY_KINDS]

    def index_census(self, progress=None):
        """The census of one lane through its index (cache/lanes.py ``census_one``, for
        ``Provider.census(cache=...)``), the lanes it reads reported to `progress` (an
        index.progress.Progress); `progress=None`: reported to none any more (returns None)."""
        from .cache import lanes as L

        L.PROGRESS = progress
        return L.census_one if progress is not None else None

    def empty_census(self):
        """The lane census of no lane (stats.py ``StatsResult``): what `stats` reports for this model
        when it read none of its lanes."""
        from .stats import StatsResult

        return StatsResult([], [])

    @property
    def prompt_kinds(self) -> tuple[str, ...]:
        """How a lane's prompts reached the model in this model's census (``LaneStats.prompts``'
        keys: stats.py ``PROMPT_KINDS``), in report order."""
        from .stats import PROMPT_KINDS

        return PROMPT_KINDS

    @property
    def usage_fields(self) -> tuple[str, ...]:
        """The token fields of a usage object in this model's census (``LaneStats.tokens``' per-model
        keys: lanescan.py ``USAGE_FIELDS``), in report order."""
        from .lanescan import USAGE_FIELDS

        return USAGE_FIELDS

    def use_index(self, off: str | None) -> "Scope":
        """:func:`use_index` on this scope: the index decision (`off`: why not; None: use it) carried
        to it, its sessions and their lanes."""
        return use_index(self, off)

    def one(self, session: "Session") -> "Scope":
        """A scope of one of its sessions, read as this one reads it (its explicit lane kept), for an
        answer about that session alone (`sync` reads each session's usage so); its index decision
        is carried (`--no-index` neither uses nor writes the index), its problems and listings not."""
        sc = Scope(self.home, [session])
        if session.session_id in self.explicit_lanes:
            sc.explicit_lanes[session.session_id] = self.explicit_lanes[session.session_id]
        return use_index(sc, self.index_off) if self.index_off is not None else sc

    def forks(self, sessions: "list[Session]") -> dict[str, dict]:
        """session id -> where it was forked from (``Fork.as_json``), for each of `sessions` (some
        of this scope's) that is a fork and each session of their project directories forked from
        one of them (model/lineage.py ``lineage_for``)."""
        from .model.lineage import lineage_for

        return {sid: f.as_json() for sid, f in lineage_for(sessions).items()}


def use_index(scope: "Scope", off: str | None) -> "Scope":
    """Carry the index decision (`off`: why not; None: use it) to `scope`, its sessions and,
    through them, their lanes (and to explicit lanes)."""
    scope.index_off = off
    for s in scope.sessions:
        object.__setattr__(s, "index_off", off)
    for k, ln in list(scope.explicit_lanes.items()):
        object.__setattr__(ln, "index_off", off)
    return scope


def projects_root(home: Path) -> Path:
    return home / "projects"


def _iter_project_dirs(home: Path, problems: list[Problem]) -> list[Path]:
    root = projects_root(home)
    try:
        return sorted(_child(root, e.name) for e in os.scandir(root) if e.is_dir())
    except FileNotFoundError:
        return []
    except PermissionError as exc:
        problems.append(Problem(str(root), f"permission denied: {exc.strerror}"))
        return []


def sessions_in(project_dir: Path, problems: list[Problem]) -> list[Session]:
    try:
        entries = list(os.scandir(project_dir))
    except PermissionError as exc:
        problems.append(Problem(str(project_dir), f"permission denied: {exc.strerror}"))
        return []
    except FileNotFoundError:
        return []
    out = []
    dirs: set[str] | None = set()
    for e in entries:
        if not e.name.endswith(".jsonl"):
            if dirs is not None:
                try:
                    if e.is_dir():
                        dirs.add(e.name)
                except OSError:
                    dirs = None  # cannot tell: every session looks for itself
    for e in entries:
        if e.name.endswith(".jsonl"):
            why = _entry_kind(e)
            if why is not None:  # a transcript we could not look at: say so
                _problem(problems, e.path, why)
                continue
            sid = e.name[:-6]
            out.append(Session(sid, project_dir, _child(project_dir, e.name), problems,
                               sidecar=None if dirs is None else sid in dirs))
    return out


def all_sessions(home: Path, problems: list[Problem]) -> tuple[list[Session], int]:
    dirs = _iter_project_dirs(home, problems)
    out: list[Session] = []
    for d in dirs:
        out.extend(sessions_in(d, problems))
    return out, len(dirs)


def _first_cwd(path: Path, limit: int = 64) -> str | None:
    from ...read.lines import iter_lines, parse_line

    n = 0
    try:
        for line in iter_lines(path):
            obj = parse_line(line.raw)
            if obj and isinstance(obj.get("cwd"), str):
                return obj["cwd"]
            n += 1
            if n >= limit:
                break
    except OSError:
        return None
    return None


def project_dirs_for_cwd(home: Path, cwd: str) -> list[Path]:
    """The project directories holding sessions started in `cwd` (canonicalised first)."""
    canon = canonical_cwd(cwd)
    enc = sanitize(canon)
    root = projects_root(home)
    if len(enc) <= MAX_SANITIZED_LENGTH:
        d = root / enc
        return [d] if d.is_dir() else []
    prefix = enc[:MAX_SANITIZED_LENGTH] + "-"
    try:
        cands = sorted(Path(e.path) for e in os.scandir(root) if e.name.startswith(prefix))
    except OSError:
        return []
    if len(cands) <= 1:
        return cands
    # Several long cwds share the 200-character prefix: disambiguate by recorded cwd.
    keep = []
    for d in cands:
        for s in sessions_in(d, []):
            c = _first_cwd(s.path)
            if c is not None and canonical_cwd(c) == canon:
                keep.append(d)
                break
    return keep


def _with_problems(s: Session, problems: list) -> Session:
    return Session(s.session_id, s.project_dir, s.path, problems, s.sidecar, s.index_off)


def _session_from_transcript(path: Path, problems: list | None = None) -> tuple[Session, Lane | None]:
    """Map a transcript path (top-level or subagent) to its owning session."""
    problems = [] if problems is None else problems
    path = path.resolve()
    parts = path.parts
    if "subagents" in parts:
        i = len(parts) - 1 - parts[::-1].index("subagents")
        sid = parts[i - 1]
        project_dir = Path(*parts[: i - 1])
        sess = Session(sid, project_dir, project_dir / f"{sid}.jsonl", problems)
        wf = parts[i + 2] if len(parts) > i + 3 and parts[i + 1] == "workflows" else None
        lane = Lane(path, sid, path.stem, "workflow" if wf else "subagent", wf)
        return sess, lane
    return Session(path.stem, path.parent, path, problems), None


def resolve_targets(
    targets: Iterable[str],
    home: str | os.PathLike[str] | None = None,
    sessions_from: list[str] | None = None,
    choice: HomeChoice | None = None,
    listed: tuple[list[Session], int, list[Problem]] | None = None,
) -> Scope:
    """Resolve targets to sessions. No target = every project.

    A target is `.`, a real directory path (the sessions started there), an encoded
    project-directory token, a session id or unique prefix, or a transcript path.
    `sessions_from`, when given (even empty), restricts the scope to those ids. `choice`, when
    given, is the data root already resolved (it wins over `home`). `listed`: what
    `all_sessions` gave for this root a moment ago (sessions, project dirs, its problems), used
    instead of listing every project dir again.
    """
    hc = choice or claude_home(home)
    scope = Scope(hc)
    root = projects_root(hc.path)
    targets = list(targets)
    if not hc.path.exists():
        raise TargetError(
            f"data root {hc.path} (from {hc.source}) does not exist",
            hint="point at a Claude Code config dir with --claude-home or CLAUDE_CONFIG_DIR",
        )
    if not root.exists() and not any(t.endswith(".jsonl") for t in targets):
        raise TargetError(
            f"no projects/ directory under {hc.path} (from {hc.source})",
            hint="a Claude Code data root holds projects/<encoded-cwd>/<session>.jsonl",
        )
    seen: dict[str, Session] = {}

    def add(s: Session) -> None:
        seen.setdefault(s.session_id, s)

    def everything_listed() -> tuple[list[Session], int]:
        if listed is not None:
            sess, n, probs = listed
            scope.problems.extend(probs)
            return [s if s.problems is scope.problems else _with_problems(s, scope.problems) for s in sess], n
        return all_sessions(hc.path, scope.problems)

    if not targets:
        sess, n = everything_listed()
        scope.project_dirs = n
        for s in sess:
            add(s)
    everything: list[Session] | None = None
    for t in targets:
        p = Path(t).expanduser()
        if t.endswith(".jsonl") and p.is_file():
            s, lane = _session_from_transcript(p, scope.problems)
            add(s)
            if lane is not None:
                scope.explicit_lanes[s.session_id] = lane
            continue
        if t == "." or (os.sep in t or t.startswith("~")) or (p.is_dir() and not (root / t).is_dir()):
            if not p.exists():
                raise TargetError(f"no such path: {t}")
            if p.is_dir() and p.resolve().parent == root.resolve():
                dirs = [p]
            else:
                dirs = project_dirs_for_cwd(hc.path, str(p))
            if not dirs:
                raise TargetError(
                    f"no sessions recorded for {canonical_cwd(p)} (looked for {root / sanitize(canonical_cwd(p))})"
                )
            for d in dirs:
                scope.project_dirs += 1
                for s in sessions_in(d, scope.problems):
                    add(s)
            continue
        if (root / t).is_dir():
            scope.project_dirs += 1
            for s in sessions_in(root / t, scope.problems):
                add(s)
            continue
        if _UUIDISH.match(t):
            if everything is None:
                everything, _ = everything_listed()
            hits = [s for s in everything if s.session_id == t] or [
                s for s in everything if s.session_id.startswith(t)
            ]
            ids = sorted({s.session_id for s in hits})
            if len(ids) > 1:
                raise TargetError(
                    f"session prefix {t!r} is ambiguous: {', '.join(ids[:10])}"
                    + (" ..." if len(ids) > 10 else "")
                )
            if hits:
                add(hits[0])
                continue
        short = too_short(t)
        if short is not None:
            raise short
        raise TargetError(
            f"target {t!r} is not a path, an encoded project directory under {root}, "
            f"or a known session id/prefix"
        )
    sessions = list(seen.values())
    if sessions_from is not None:
        wanted = set(sessions_from)
        if not targets:
            sessions = [s for s in sessions if s.session_id in wanted]
        else:
            sessions = [s for s in sessions if s.session_id in wanted]
    scope.sessions = sorted(sessions, key=lambda s: (str(s.project_dir), s.session_id))
    return scope


class DeepScopes:
    """Claude Code's deep Scope builder (``ClaudeCode.deep_scopes``; providers/selection.py):
    its data root by the root rule, the targets resolved to its sessions, the index decision
    carried, and an empty Scope of a root."""

    root = staticmethod(claude_home)
    resolve = staticmethod(resolve_targets)
    use_index = staticmethod(use_index)

    @staticmethod
    def empty(path: Path, source: str) -> Scope:
        return Scope(HomeChoice(path, source))  # type: ignore[arg-type]
