"""Gemini CLI (``@google/gemini-cli``): where its data lives, which sessions exist, how they read.

**Where.** The client keeps everything in ``<home>/.gemini`` where ``<home>`` is ``$GEMINI_CLI_HOME`` when
that is set and non-empty, else the user's home directory (``homedir()`` in the client's
``packages/core/src/utils/paths.ts``; measured: with ``GEMINI_CLI_HOME=D`` 0.61.0 writes ``D/.gemini/`` and
nothing under ``$HOME``). So: ``--gemini-home DIR`` names the ``.gemini`` directory itself; ``--home DIR``
gives ``DIR/.gemini``; then ``$GEMINI_CLI_HOME/.gemini`` (taken as the client takes it: no ``~``
expansion); then ``~/.gemini``.

**Which** and **how**: see :mod:`.discover` and :mod:`.read`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import ClassVar, Iterator, Mapping

from ..base import Discovery, Provider, ReadReport, Record, Root, SessionRef


class GeminiCli(Provider):
    name: ClassVar[str] = "gemini-cli"
    ccusage_agent = "gemini"
    display: ClassVar[str] = "Gemini CLI"
    lacks: ClassVar[dict[str, str]] = {
        "reinjection": "Gemini CLI writes no record of a file that changed on disk behind the session: its "
                       "session log holds messages (user, gemini with toolCalls, info/error/warning) and "
                       "$set/$rewindTo patches (0.61.0); the client's one reaction to an outside change is "
                       "its edit fixer retrying a failed edit inside the tool call, not a context injection"}
    home_flag: ClassVar[str] = "--gemini-home"
    env_var: ClassVar[str | None] = "GEMINI_CLI_HOME"
    default_rel: ClassVar[str] = ".gemini"
    text_in_bytes = True
    text_not_in_bytes = frozenset({"meta"})
    """Its session header is a `meta` record whose text the reader composes."""
    process_names: ClassVar[tuple[str, ...]] = ("gemini", "gemini.js")
    client_packages: ClassVar[tuple[str, ...]] = ("@google/gemini-cli",)
    """Gemini CLI runs as ``node``: ``/proc/<pid>/comm`` is ``node`` and the client is named by the script
    argument (the first one after node's own flags), whose basename is ``gemini`` (the npm bin link) or
    ``gemini.js`` (``@google/gemini-cli/bundle/gemini.js``, 0.38 and 0.61), or which lies inside the
    ``@google/gemini-cli`` package (``dist/index.js`` in 0.28). By default the client relaunches itself:
    a parent ``node .../gemini.js`` and a child ``node --max-old-space-size=N .../gemini.js`` (measured
    with 0.61.0). Recognised by the base ``is_client_argv`` (providers/launch.py)."""
    activity_granularity: ClassVar[str] = "project"
    instant_keys: ClassVar[tuple[tuple[str, ...], ...]] = (("timestamp",), ("$set", "lastUpdated"))
    """A message record's ``timestamp``; the ``{"$set": {"lastUpdated": ...}}`` line the client
    appends after each turn."""
    shell_tools: ClassVar[dict] = {"run_shell_command": ("command", "dir_path")}
    file_tools: ClassVar[dict] = {"read_file": ("file_path", "read"), "replace": ("file_path", "update"),
                                  "write_file": ("file_path", "write")}

    def file_calls(self, ref: SessionRef, record: Record) -> list[tuple[str, str]]:
        got = super().file_calls(ref, record)
        if not got and record.tool_name == "read_file" and isinstance(record.tool_input, dict) \
                and isinstance(record.tool_input.get("absolute_path"), str):  # releases before file_path
            return [(os.path.normpath(record.tool_input["absolute_path"]), "read")]
        return got

    def plans(self, sel, audit: bool = False):
        """The ``write_todos`` checklist, and the plan file plan mode's ``exit_plan_mode`` names (artifacts.py)."""
        from ..fileevents import refs_of
        from .artifacts import plans

        refs = refs_of(sel, self.name)
        return plans(self, refs, audit) if refs else None

    def plan_update(self, ref: SessionRef, record: Record):
        """A ``write_todos`` call's ``todos`` (``[{description, status}]``) as the checklist (artifacts.py)."""
        from .artifacts import plan_update

        return plan_update(record)

    def record_images(self, ref: SessionRef, record: Record) -> list:
        """The ``inlineData`` parts of a prompt (an ``@file`` image) and of a tool result (``read_file`` on an
        image), base64 as the client sent them (artifacts.py)."""
        from .artifacts import record_images

        return record_images(ref, record)

    def read_view(self, call: Record, result: Record) -> tuple[str, str, bool] | None:
        from .toolresult import read_file_view

        return read_file_view(call, result)

    def locate(self, explicit: str | None = None, home: str | None = None,
               env: Mapping[str, str] | None = None) -> Root:
        env = os.environ if env is None else env
        if explicit:
            return Root(Path(explicit).expanduser(), self.home_flag, True)
        if home:
            return Root(Path(home).expanduser() / self.default_rel, "--home", True)
        if env.get(self.env_var):
            return Root(Path(env[self.env_var]) / self.default_rel, self.env_var)
        return Root(Path.home() / self.default_rel, "default")

    def discover(self, root: Root) -> Discovery:
        from .discover import discover

        return discover(self, root)

    def read(self, ref: SessionRef, report: ReadReport, *, raw: bool = False) -> Iterator[Record]:
        from .read import read

        return read(ref, report, raw=raw)

    def compaction_of(self, ref: SessionRef, record: Record):
        """A chat compression's summary (read.py ``compression_marks``: the user message before the
        client's fixed "Got it. Thanks for the additional context!" in a ``$set.messages``; measured
        with 0.61.0, tests/realclient/gemini/scenarios_compress.py). The messages before it stay in
        the session file. Whether it was automatic or ``/compress``, and the token count before it,
        are not on disk (only in the client's telemetry event): trigger and tokens None."""
        if record.native != "user:compression_summary":
            return None
        from ..compaction import mark

        o = record.raw if isinstance(record.raw, dict) else {}
        return mark(text=record.text, uuid=o.get("id") if isinstance(o.get("id"), str) else None)

    def live_state(self, ref: SessionRef, world):
        """The chat file's last message (a prompt or results awaiting the model, calls running, an
        end of turn) and the Gemini CLI processes in the project (live.py)."""
        from . import live

        return live.live_state(self, ref, world)

    def whoami(self, env, world):
        """``$GEMINI_SESSION_ID`` (hook commands only); ``GEMINI_CLI=1`` in a shell tool names none."""
        from . import live

        return live.whoami(env, world)

    def subagents(self, ref: SessionRef, children, world, files: bool = False):
        """Subagent sessions joined to the parent's tool call whose ``agentId`` names them."""
        from . import live

        return live.subagents(self, ref, children, world)

    def projects_of(self, ref: SessionRef) -> list[str]:
        """The project of the file discovery chose and of every other file of the same session id
        (a copy, a legacy ``.json``, a startup file) -- one id can sit in two project folders, and a
        client working in either may be writing it."""
        out = [ref.project] if ref.project else []
        for o in ref.extra.get("other_files", []) if isinstance(ref.extra, dict) else []:
            p = o.get("project") if isinstance(o, dict) else None
            if isinstance(p, str) and p and p not in out:
                out.append(p)
        return out

    def footprint(self, ref: SessionRef) -> list[Path]:
        """The session's chat file and its other files (copies, legacy ``.json``, startup files), and what the client
        itself deletes with it (``deleteSessionArtifactsAsync``): ``logs/session-<id>.jsonl``,
        ``tool-outputs/session-<id>/``, ``<project tmp dir>/<id>/`` and, for a main session, its subagents'
        dir ``chats/<id>/``. Only paths that exist are listed."""
        out: list[Path] = [Path(p) for p in ref.paths] + [Path(o["path"]) for o in ref.extra.get("other_files", [])]
        chat = Path(ref.paths[0])
        chats = chat.parent.parent if ref.parent_session_id else chat.parent
        tmpdir = chats.parent
        sid = ref.session_id
        safe = "".join(c if c.isalnum() or c in "_-" else "_" for c in sid)
        if safe and safe.lower() not in ("chats", "logs", "tool-outputs"):
            out += [tmpdir / "logs" / f"session-{safe}.jsonl", tmpdir / "tool-outputs" / f"session-{safe}",
                    tmpdir / safe]
            if not ref.parent_session_id:
                out.append(chats / safe)
        seen, res = set(), []
        for p in out:
            if p not in seen and (p.exists() or p.is_symlink()):
                seen.add(p)
                res.append(p)
        return res
