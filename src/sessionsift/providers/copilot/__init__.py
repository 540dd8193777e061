"""GitHub Copilot CLI (``@github/copilot`` on npm): where its data lives, which sessions exist, how they read.

**Where.** The client keeps its state in ``$COPILOT_HOME`` when that is set, else ``~/.copilot`` (its help
text, ``copilot help environment``; the bundle resolves ``configDir ?? COPILOT_HOME ?? <home>/.copilot``).
So: ``--copilot-home DIR`` names that directory itself; ``--home DIR`` gives ``DIR/.copilot``; then a
non-empty ``$COPILOT_HOME``; then ``~/.copilot``. Sessions are ``session-state/<id>/events.jsonl``; there is
no per-project folder (a session's project is the ``cwd`` its ``session.start`` records).

**Which** and **how**: see :mod:`.discover` and :mod:`.read`.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar, Iterator

from ..base import Discovery, Provider, ReadReport, Record, Root, SessionRef


class CopilotCli(Provider):
    name: ClassVar[str] = "copilot-cli"
    display: ClassVar[str] = "GitHub Copilot CLI"
    home_flag: ClassVar[str] = "--copilot-home"
    env_var: ClassVar[str | None] = "COPILOT_HOME"
    default_rel: ClassVar[str] = ".copilot"
    process_names: ClassVar[tuple[str, ...]] = ("copilot", "copilot-linux-x64")
    """The native executable (``@github/copilot-<platform>/copilot``; its pid is the one in the session's
    ``inuse.<pid>.lock``, measured) and that package's bin link (``copilot-linux-x64``); npm's ``copilot`` bin
    link is ``@github/copilot/npm-loader.js``, run by node (``node …/.bin/copilot``), which spawns the binary."""
    client_packages: ClassVar[tuple[str, ...]] = ("@github/copilot",)
    """The npm package (1.0.102's ``package.json``: ``"bin": {"copilot": "npm-loader.js"}``): a script inside it
    (``node …/@github/copilot/npm-loader.js``), or ``npx``/``bunx`` of it."""
    activity_granularity = "project"
    shell_tools: ClassVar[dict] = {"bash": ("command", None), "powershell": ("command", None)}
    file_tools: ClassVar[dict] = {"view": ("path", "read"), "create": ("path", "write"), "edit": ("path", "update")}
    truncation_marker: ClassVar[bytes | None] = rb"Output too large to read at once \("
    truncation_literal: ClassVar[tuple[bytes, ...] | None] = (b"Output too large to read at once",)
    lacks: ClassVar[dict[str, str]] = {
        "reinjection": "GitHub Copilot CLI writes no event for a file that changed on disk behind the session: of "
                       "the durable event types of its session-events schema (1.0.102) none carries a changed "
                       "file's content (session.context_changed is the working directory and git context), so "
                       "there is nothing to audit"}

    def discover(self, root: Root) -> Discovery:
        from .discover import discover

        return discover(self, root)

    def _views(self) -> dict:
        v = self.__dict__.get("_view_cache")
        if v is None:
            v = self.__dict__["_view_cache"] = {}
        return v

    def read(self, ref: SessionRef, report: ReadReport, *, raw: bool = False) -> Iterator[Record]:
        from .read import Reader

        return Reader(ref, report, raw, self._views()).read()

    def read_view(self, call: Record, result: Record) -> tuple[str, str, bool] | None:
        """A ``view`` result proven whole when it was read (:func:`.read.view_whole`); None otherwise."""
        if call.tool_name != "view" or result.path is None:
            return None
        return self._views().get((result.path, result.locator))

    def plans(self, sel, audit: bool = False):
        """The session's todo list: the ``todos`` table of its ``session.db``, kept through the ``sql`` tool
        (artifacts.py); plan mode's ``plan.md`` named in a note."""
        from ..fileevents import refs_of
        from .artifacts import plans

        refs = refs_of(sel, self.name)
        return plans(self, refs) if refs else None

    def images(self, sel):
        """The images a ``view`` result or a prompt's attachment references, their bytes read from the
        ``session.binary_asset`` event that holds them (artifacts.py)."""
        from ..fileevents import refs_of
        from .artifacts import images

        refs = refs_of(sel, self.name)
        return images(self, refs) if refs else None

    def live_state(self, ref: SessionRef, world):
        """The event log's last events (a call running, a prompt or results awaiting the model, an end of
        turn, session.shutdown) and the session's inuse.<pid>.lock (live.py)."""
        from . import live

        return live.live_state(self, ref, world)

    def whoami(self, env, world):
        """``$COPILOT_AGENT_SESSION_ID``, which the bash tool gets (measured)."""
        from . import live

        return live.whoami(env, world)

    def subagents(self, ref: SessionRef, children, world, files: bool = False):
        """Subagents joined to the ``task`` call their ``subagent.started`` names."""
        from . import live

        return live.subagents(self, ref, children, world)

    def compaction_of(self, ref: SessionRef, record: Record):
        """A ``session.compaction_complete`` event that applied (``events.jsonl`` is appended to: every event
        before it stays; measured with 1.0.102, scenario ``compacted``): ``summaryContent``, ``trigger``
        (``threshold``, ...), ``preCompactionTokens``; the client also writes the summary to
        ``checkpoints/NNN-*.md``. It compacts in the background: events between its
        ``session.compaction_start`` and this one happened while the summary was made."""
        if record.native != "session.compaction_complete" or not isinstance(record.raw, dict):
            return None
        d = record.raw.get("data")
        d = d if isinstance(d, dict) else {}
        if d.get("success") is False or d.get("outcome") not in (None, "applied"):
            return None
        from ..compaction import mark

        tr, n = d.get("trigger"), d.get("preCompactionTokens")
        return mark(text=record.text, trigger=tr if isinstance(tr, str) else None,
                    pre_tokens=n if isinstance(n, int) and not isinstance(n, bool) else None,
                    uuid=record.raw.get("id") if isinstance(record.raw.get("id"), str) else None)

    def footprint(self, ref: SessionRef) -> list[Path]:
        """A session's whole ``session-state/<id>/`` directory (its event log and every side file the client
        keeps there: workspace.yaml, checkpoints/, rewind-file-snapshots/, files/, research/, session.db, live
        locks) and its ``session-state/.session-operation-locks/<id>.lock``. A subagent's events live in its
        parent's log: its footprint is that log, inside the parent's directory, so clean takes it with the
        parent. The session's rows in the shared ``session-store.db`` are not files of its own."""
        ev = Path(ref.paths[0])
        if ref.parent_session_id:
            return [ev] if ev.exists() else []
        out = [ev.parent]
        lock = ev.parent.parent / ".session-operation-locks" / f"{ev.parent.name}.lock"
        if lock.exists():
            out.append(lock)
        return [p for p in out if p.exists()]
