"""Claude Code's reader class (`ClaudeCode`, the entry point sessionsift.providers.claude:ClaudeCode
names through the package's lazy attribute) and the helpers it alone uses (the package's
docstring says where, which and how)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterator

from ..base import SessionSummary, Discovery, Problem, Provider, ReadReport, Record, Root, SessionRef
from . import discover as D

HEAD_BYTES = 64 * 1024
TAIL_BYTES = 64 * 1024



def _lanes_size(lanes) -> "tuple[int | None, str | None]":
    """(bytes of the session's lane files, why unknown): a lane that cannot be stat'ed makes the
    size unknown (None, with the lane and the error), never the sum of the others."""
    size = 0
    for ln in lanes:
        try:
            size += ln.path.stat().st_size
        except OSError as exc:
            return None, f"size unknown: {ln.path} could not be stat'ed ({exc.strerror or exc})"
    return size, None

class ClaudeCode(Provider):
    name = "claude-code"
    ccusage_agent = "claude"
    usage_live = True
    usage_dedup = "one response per message.id across every lane and session (per-field max over its copies)"
    lanes_in_paths = True
    deep_scope = True
    worktree_argv_flags = ("--worktree", "-w")
    worktree_repo_dir = ".claude/worktrees"
    worktree_lock_reason = r"claude (agent|session) (.{1,255}) \(pid (\d{1,10})(?: start (.{1,255}))?\)"
    usage_windows = True
    usage_dedup_scope = "provider"
    statusline_hook = True
    display = "Claude Code"
    home_flag = "--claude-home"
    env_var = "CLAUDE_CONFIG_DIR"
    default_rel = ".claude"
    process_names = ("claude",)
    client_packages = ("@anthropic-ai/claude-code",)
    client_path_parts = ("/.local/share/claude/versions/",)
    """The native installer's binaries (``~/.local/share/claude/versions/<version>``)."""
    activity_granularity = "session"
    text_in_bytes = True

    record_labels = True

    @classmethod
    def deep_scopes(cls):
        from .discover import DeepScopes

        return DeepScopes

    @classmethod
    def selected_kinds(cls, include: tuple[str, ...], exclude: tuple[str, ...]) -> frozenset[str]:
        """Shared kinds, roles and Claude Code's labels (docs/labels.md), each mapped to its nearest
        shared kind (kinds.py)."""
        from .kinds import selected_kinds

        return selected_kinds(include, exclude)

    @staticmethod
    def line_text(obj: dict) -> str | None:
        """The matchable text of one parsed line of a lane: what the lane scan matches
        (model/record.py ``record_text``); the full-text index keeps it for each lane."""
        from .model.record import record_text

        return record_text(obj)

    @classmethod
    def tool_names(cls) -> frozenset[str]:
        """The tools Claude Code's deep model names (files, shell, spawn, plan and question)."""
        from .files.events import FILE_TOOLS, SHELL_TOOLS
        from .live.background import AGENT_TOOLS, SHELL_TOOLS as BG_SHELL
        from .live.verdict import HUMAN_TOOLS
        from .model.record import SPAWN_TOOLS

        return (FILE_TOOLS | frozenset(SHELL_TOOLS) | BG_SHELL | AGENT_TOOLS | HUMAN_TOOLS
                | SPAWN_TOOLS | {"TodoWrite"})

    def deep_facts(self, ref: SessionRef):
        from .deep import deep_facts

        return deep_facts(ref)

    def spawned_lanes(self, ref: SessionRef) -> dict[str, str]:
        from .deep import spawned_lanes

        return spawned_lanes(ref)

    def discover(self, root: Root, *, facts: bool = True) -> Discovery:
        """``facts=False`` (light): ids and main transcript paths only -- no head/tail read, no
        subagent lanes listed, no stat per file (``size`` None, ``extra["light"]`` True) -- for
        callers that read Claude sessions through the deep model anyway; :meth:`full` gives
        such a ref its lanes and size when a caller needs them. The listing is kept
        (:meth:`listed`), so resolving the same root's sessions does not list it again."""
        home = root.path
        if home is None:
            return Discovery([], self.coverage(root, "not_looked", reason="no root"))
        problems: list[Problem] = []
        state, why = _probe(home)
        if state != "ok":
            return Discovery([], self.coverage(root, state, 0 if state == "absent" else None, why))
        sessions, n_dirs = D.all_sessions(home, problems)
        self.__dict__["_listing"] = (home, sessions, n_dirs, list(problems))
        refs = [self.ref(s, home, facts) if facts else self._light_ref(s, home) for s in sessions]
        if not refs and any(p.path == str(D.projects_root(home)) for p in problems):
            return Discovery([], self.coverage(root, "unreadable", None, problems[0].why), problems)
        return Discovery(refs, self.coverage(root, "ok", len(refs)), problems)

    def ref(self, s: "D.Session", home: Path | None = None, facts: bool = True) -> SessionRef:
        """The SessionRef of one discovered Claude session (main lane first, then its lanes)."""
        lanes = s.lanes()
        size, size_note = _lanes_size(lanes)
        facts = _head_tail(s.path) if facts else {}
        return SessionRef(
            provider=self.name, session_id=s.session_id, paths=[ln.path for ln in lanes],
            project=facts.get("cwd"), project_source="record cwd" if facts.get("cwd") else None,
            first_at=facts.get("first_at"), last_at=facts.get("last_at"), size=size,
            version=facts.get("version"),
            extra={"project_dir": str(s.project_dir), "lanes": [ln.display for ln in lanes],
                   **({"root": str(home)} if home is not None else {}),
                   **({"size_note": size_note} if size_note else {})},
        )

    def _light_ref(self, s: "D.Session", home: Path) -> SessionRef:
        return SessionRef(provider=self.name, session_id=s.session_id, paths=[s.path],
                          extra={"project_dir": str(s.project_dir), "root": str(home), "light": True})

    def listed(self, home: Path) -> "tuple[list[D.Session], int, list[Problem]] | None":
        """The sessions, project-dir count and listing problems of this provider's last
        discovery of `home` (None when it discovered another root, or none yet)."""
        got = self.__dict__.get("_listing")
        if got is None or got[0] != home:
            return None
        return got[1], got[2], list(got[3])

    def full(self, ref: SessionRef) -> SessionRef:
        """A light ref (``discover(facts=False)``) with its subagent lanes and size, as a full
        discovery gives them (head/tail facts stay unread); any other ref unchanged."""
        if not ref.extra.get("light"):
            return ref
        from dataclasses import replace

        main = ref.paths[0]
        s = D.Session(ref.session_id, main.parent, main, [])
        lanes = s.lanes()
        size, size_note = _lanes_size(lanes)
        extra = {k: v for k, v in ref.extra.items() if k != "light"}
        if size_note:
            extra["size_note"] = size_note
        return replace(ref, paths=[ln.path for ln in lanes], size=size,
                       extra={"project_dir": extra.pop("project_dir"), "lanes": [ln.display for ln in lanes], **extra})

    def read(self, ref: SessionRef, report: ReadReport, *, raw: bool = False) -> Iterator[Record]:
        from .records import read_lane

        ref = self.full(ref)
        for p in ref.paths:
            yield from read_lane(p, ref.session_id, lane_name(p, ref.session_id), report, raw, self.name)

    records_forks = True
    """Claude Code writes no fork record, but a fork copies its parent's records with their uuids:
    the lineage model finds them (model/lineage.py), so a session with no such copy is no fork."""

    def session_of(self, ref: SessionRef, problems: list | None = None) -> "D.Session":
        """The deep model's Session of a ref (its main transcript; `problems` shared, as a Scope's)."""
        main = ref.paths[0]
        pd = ref.extra.get("project_dir")
        return D.Session(ref.session_id, Path(pd) if pd else main.parent, main, [] if problems is None else problems)

    def summarize(self, ref: SessionRef, *, subagents: bool = True) -> SessionSummary:
        """A bounded head window and a bounded tail window of the main transcript (listing.py), never
        the whole file: records are not counted (None), and a fact outside both windows is unknown
        with the reason."""
        from .listing import summarize_session

        s = self.session_of(ref)
        try:
            row = summarize_session(s, subagents)
        except OSError as exc:
            return SessionSummary(problems=[Problem(str(s.path), exc.strerror or str(exc))],
                                  notes=[f"unreadable: {s.path}: {exc.strerror or exc}"])
        return SessionSummary(
            first_prompt=row.first_prompt, first_prompt_at=row.first_prompt_at, last_prompt=row.last_prompt,
            last_prompt_at=row.last_prompt_at, last_agent_message=row.last_agent_message,
            last_agent_message_at=row.last_agent_message_at, first_at=row.first_at, last_at=row.last_at,
            project=row.project, version=row.version, git_branch=row.git_branch, git_branch_recorded=True,
            records=None, prompts=None, models=None, size=row.size, mtime=row.mtime, bytes_read=row.bytes_read,
            bytes_total=row.size,
            files_read=1, subagents=row.subagents if subagents else None, subagents_are_lanes=True, omissions=None, notes=list(row.notes),
            problems=list(s.problems))

    def lineage(self, refs: list[SessionRef], seen: list[SessionRef], index_off: str | None = None) -> dict[str, dict]:
        """Forks among `refs` and every session of their project directories (model/lineage.py), so
        a fork shows its parent even when the parent is not in the answer; `index_off`: why the
        index is not used (nor written) for it."""
        from .model.lineage import lineage_for

        return {sid: f.as_json() for sid, f in lineage_for([self.session_of(r) for r in refs],
                                                          index_off=index_off).items()}

    def census(self, refs: list[SessionRef], *, subagents: bool = True, strict: bool = False, cache=None,
               scope=None, from_records: bool = False, kept=None):
        """The lane census of stats.py over `scope` (the selection's Scope of these sessions; else
        one built from `refs`), each session's figures in the shared shape from its lanes
        (census.py), and the lane census itself as ``detail``. `from_records`: the shared-records
        reading instead (every record through records.read_lane), for a cross-check."""
        from ..census import Census
        from .census import session_census
        from .stats import stats

        if from_records:
            full = [self.full(r) for r in refs]
            if not subagents:
                from dataclasses import replace

                full = [replace(r, paths=r.paths[:1]) for r in full]
            return Provider.census(self, full)
        if scope is None:
            scope = D.Scope(D.HomeChoice(Path(refs[0].extra.get("root") or refs[0].paths[0].parent.parent.parent),
                                         "--claude-home") if refs else D.HomeChoice(Path("-"), "--claude-home"),
                            [self.session_of(r) for r in refs])
        res = stats(scope, subagents=subagents, strict=strict, census=cache)
        by: dict[str, list] = {}
        for ls in res.lanes:
            by.setdefault(ls.lane.session_id, []).append(ls)
        want = {r.session_id: r for r in refs}
        sessions = [session_census(want.get(s.session_id) or SessionRef(self.name, s.session_id, [s.path]),
                                   by.get(s.session_id, []))
                    for s in scope.sessions if s.session_id in by]
        return Census(sessions, list(res.problems), res)

    def forked_from(self, ref: SessionRef) -> dict | None:
        return self.lineage([ref], [ref]).get(ref.session_id)

    # -- live state: the deep model of providers/claude/live as this reader's capabilities ------------

    def live_state(self, ref: SessionRef, world):
        """Registry row + pid probe, transcript tail, elicitation sidecar, subagent lanes, workflow
        journals, background launches, task list, todos (live/verdict.py; docs/live.md)."""
        from .live import hooks

        return hooks.live_state(ref, world)

    def wait_for(self, ref: SessionRef, condition, timeout: float, world, ready=None):
        """Byte cursors over every lane, sidecar and journal; watchfiles on the project dir and the
        registry (live/wait.py)."""
        from .live import hooks

        return hooks.wait_for(ref, condition, timeout, world, ready)

    def session_listing(self, root: Path, source: str = "scan", locks=None):
        """The session registry ``<root>/sessions/<pid>.json`` (listing.py), rows probed by pid
        and start time."""
        from .running import session_listing

        return session_listing(Path(root), source)

    def worktree_records(self, root: Path):
        """``worktree-state`` records of transcripts in project dirs that encode a
        ``.claude/worktrees/`` path (running.py)."""
        from .running import worktree_records

        return worktree_records(Path(root))

    def worktree_sessions(self, root: Path, worktree: str) -> list[str]:
        """The transcripts under the worktree's encoded project dir (lossy: only ever keeps)."""
        from .running import sessions_for

        return sessions_for(Path(root), worktree)

    def listing_cwds(self, root: Path) -> list[str]:
        """The ``cwd`` of every readable row of the session registry ``<root>/sessions/*.json``."""
        from .live import registry as REG

        return [c for c in (r.data.get("cwd") for r in REG.all_rows(Path(root)).rows) if isinstance(c, str)]

    def lease_probe(self, pid: int | None, start: str | None):
        """The pid probed with the lock reason's start (clock ticks since boot on Linux)."""
        from .live import registry as REG

        return REG.probe_pid(pid, start, None)

    def works_in(self, ref: SessionRef, cwd: str) -> bool:
        """Inside the project the transcript records, or a cwd that encodes to the session's
        project dir (the client names that dir after its cwd: a process there writes into it)."""
        if super().works_in(ref, cwd):
            return True
        pdir = ref.extra.get("project_dir") if isinstance(ref.extra, dict) else None
        if not pdir:
            return False
        from .running import encodes_to

        return encodes_to(cwd, pdir)

    def whoami(self, env, world):
        """``$CLAUDE_CODE_SESSION_ID``, exported into every Bash tool environment (it names the
        top-level session even inside a subagent, MISC-009)."""
        from .live import hooks

        return hooks.whoami(env, world)

    def subagents(self, ref: SessionRef, children, world, files: bool = False):
        """Subagent lanes joined to their spawning Agent/Task/Workflow calls (live/agents.py)."""
        from .live import hooks

        return hooks.subagents(ref, world, files)

    def search(self, sel, query, use_index: bool = True, fulltext=None):
        """Its lane scan (providers/claude/search): labels, gated kinds with their further hits,
        whole-turn context and survival from the lane index, a fork's copies counted once,
        persisted outputs; a census answered from the index where it is fresh."""
        from .search.part import LanePart

        return LanePart(sel, query, use_index, fulltext)

    def file_events(self, sel, query):
        """Lane events (providers/claude/files): every Read/Write/Edit/MultiEdit/NotebookEdit and
        Bash call, the client's freshness attachments and file-history checkpoints of each lane,
        from the index where it can answer."""
        from .files import file_events

        return file_events(self, sel, query)

    def reinjection(self, sel, subagents: bool = True):
        """The ``edited_text_file`` attachments of every lane of the selection's Scope, flush by flush
        (reinjection.py); None: no Scope in the selection."""
        if sel.claude is None:
            return None
        from .reinjection import reinjection

        return reinjection(sel.claude, subagents=subagents)

    def usage_scans(self, scope, subagents: bool = True, parallel: bool = True):
        """usage.py's light scan of every transcript of `scope`, forks after their parents, from the
        index's usage cache where it is fresh (usage_scan.py)."""
        from .usage_scan import scans

        return scans(scope, subagents, parallel)

    def usage_follower(self, scope):
        """usage.py's scan from the offset a transcript was read to, its session set listed again
        by discover.py (usage_scan.py ``Follower``)."""
        from .usage_scan import Follower

        return Follower()

    def plans(self, sel, audit: bool = False):
        """The plan file bound to each session (plan mode's ``plan_mode`` attachment, else the first
        valid slug: providers/claude/files/plan.py); `audit`: structured writes to plan files the
        writing session does not bind."""
        if sel.claude is None:
            return None
        from ..artifacts import Plan, PlanAnswer
        from .files.plan import bind

        out = PlanAnswer()
        for b in bind(sel.claude, audit=audit):
            out.plans.append(Plan(self.name, b.session_id, "file" if b.plan_path else None, b.source,
                                  line=b.line, notes=b.notes, file=b))
        return out

    def images(self, sel):
        """Inline images of every lane: direct image blocks and images nested in tool results
        (providers/claude/files/image.py), the `[Image #N]` handle where the record's markers zip
        one-to-one with its blocks."""
        if sel.claude is None:
            return None
        from ..artifacts import ImageAnswer
        from .files.image import images

        return ImageAnswer(images(sel.claude, subagents=sel.subagents, dedup=False))

    def deleted_sessions(self, sel, problems):
        """``history.jsonl``'s sessions with no transcript left on disk (history.py), counted only
        when the answer covers the whole home."""
        from .history import deleted_of_selection

        return deleted_of_selection(sel, problems)

    def retention(self):
        """The client's own sweep by ``cleanupPeriodDays`` (providers/claude/retention.py)."""
        from .retention import Rules

        return Rules()

    def compactions(self, ref: SessionRef, lane: str | None = None):
        """The lane model's history (providers/claude/verbatim.py): the main lane, or the subagent
        lane `lane` names (agent id, file stem or display name)."""
        from ...errors import TargetError

        s = self.session_of(ref)
        if lane in (None, "main"):
            return s.main.compactions()
        for ln in s.subagent_lanes():
            if lane in (ln.lane_id, ln.agent_id, ln.display):
                return ln.compactions()
        raise TargetError(f"session {s.session_id} has no lane {lane!r}")

    def footprint(self, ref: SessionRef) -> list[Path]:
        """Every file of this one session under the data root, where it exists (docs/clean.md
        "What a session is on disk"): the transcript; beside it the sidecar dir ``<sid>/``
        (subagents, workflows, remote-agents, tool-results, mcp-tasks) and the siblings the client's
        retention sweep deletes with the transcript (MISC-011, read in 2.1.258: ``.ccr-tip.json``,
        ``.precompact.json``, ``.cast``, ``.dir-sync.json``, ``.desktop-released.json``); under the
        root the per-session stores the client's own project purge names -- ``file-history/<sid>/``
        (FH-023), ``tasks/<sid>/`` or ``tasks/session-<sid[:8]>/`` (REG-007; the short form only
        when no other session of this root shares those 8 characters), ``debug/<sid>.txt`` -- and
        ``session-env/<sid>/``, ``image-cache/<sid>/`` (IMG-010), ``todos/<sid>-agent-*.json``.
        Shared files (``history.jsonl``, ``plans/<slug>.md``, shell snapshots, settings) are not."""
        main = ref.paths[0]
        sid = ref.session_id
        cands = [main, main.parent / sid] + [main.parent / f"{sid}{suf}" for suf in SIBLINGS]
        root = ref.extra.get("root")
        if root and D._UUIDISH.match(sid):
            r = Path(root)
            cands += [r / "file-history" / sid, r / "tasks" / sid, r / "debug" / f"{sid}.txt",
                      r / "session-env" / sid, r / "image-cache" / sid]
            short = r / "tasks" / f"session-{sid[:8]}"
            if os.path.lexists(short) and not _short_id_shared(main.parent.parent, sid):
                cands.append(short)
            try:
                cands += sorted(p for p in (r / "todos").glob(f"{sid}-agent-*.json"))
            except OSError:
                pass
        return [p for p in cands if os.path.lexists(p)]


SIBLINGS = (".ccr-tip.json", ".precompact.json", ".cast", ".dir-sync.json", ".desktop-released.json")
"""Files ``<project dir>/<sid><suffix>`` the 2.1.258 retention sweep deletes with the transcript."""


def _short_id_shared(projects: Path, sid: str) -> bool:
    """Whether another session under ``projects/`` starts with the same 8 characters (then
    ``tasks/session-<8>`` cannot be told apart and belongs to no one session alone)."""
    try:
        for d in os.scandir(projects):
            if not d.is_dir():
                continue
            for f in os.scandir(d.path):
                n = f.name
                if n.endswith(".jsonl") and n[:8] == sid[:8] and n[:-6] != sid:
                    return True
    except OSError:
        return True  # cannot tell: leave it out
    return False


def lane_name(path: Path, session_id: str) -> str:
    """``main`` for ``<project>/<sid>.jsonl``; else the lane's display name, from the part of the
    path below ``<sid>/subagents/`` (``agent-x`` or ``wf_run/agent-x``)."""
    parts = path.parts
    for i in range(len(parts) - 2, 0, -1):
        if parts[i] == "subagents" and parts[i - 1] == session_id:
            rest = parts[i + 1:]
            stem = rest[-1][:-6] if rest[-1].endswith(".jsonl") else rest[-1]
            if len(rest) == 3 and rest[0] == "workflows":
                return f"{rest[1]}/{stem}"
            return stem
    return "main"


def _probe(home: Path) -> tuple[str, str | None]:
    """ok / absent / unreadable for a data root, with the reason."""
    try:
        st = os.stat(home)
    except FileNotFoundError:
        return "absent", f"no {home}"
    except OSError as exc:
        return "unreadable", f"{home}: {exc.strerror or exc}"
    import stat as S

    if not S.S_ISDIR(st.st_mode):
        return "unreadable", f"{home} is not a directory"
    proj = D.projects_root(home)
    try:
        with os.scandir(proj):
            pass
    except FileNotFoundError:
        return "absent", f"no {proj}"
    except NotADirectoryError:
        return "unreadable", f"{proj} is not a directory"
    except OSError as exc:
        return "unreadable", f"{proj}: {exc.strerror or exc}"
    return "ok", None


def _head_tail(path: Path) -> dict:
    """First cwd and instant from a bounded head, last instant and version from a bounded tail."""
    from ...read.lines import parse_line

    out: dict = {}
    try:
        with open(path, "rb") as f:
            head = f.read(HEAD_BYTES)
            size = os.fstat(f.fileno()).st_size
            if size > HEAD_BYTES:
                f.seek(max(HEAD_BYTES, size - TAIL_BYTES))
                tail = f.read()
                tail_lines = tail.split(b"\n")[1:]
            else:
                tail_lines = head.split(b"\n")
    except OSError:
        return out
    head_lines = head.split(b"\n")
    if len(head) == HEAD_BYTES:
        head_lines = head_lines[:-1]
    for raw in head_lines:
        o = parse_line(raw)
        if not o:
            continue
        if "first_at" not in out and isinstance(o.get("timestamp"), str):
            out["first_at"] = o["timestamp"]
        if "cwd" not in out and isinstance(o.get("cwd"), str):
            out["cwd"] = o["cwd"]
        if "first_at" in out and "cwd" in out:
            break
    for raw in reversed(tail_lines):
        o = parse_line(raw)
        if not o:
            continue
        if "last_at" not in out and isinstance(o.get("timestamp"), str):
            out["last_at"] = o["timestamp"]
        if "version" not in out and isinstance(o.get("version"), str):
            out["version"] = o["version"]
        if "last_at" in out and "version" in out:
            break
    return out
