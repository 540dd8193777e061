"""pi (``@mariozechner/pi-coding-agent``): where its sessions live, which exist, how they read.

**Where** (the client's ``config.js`` / ``main.js``, 0.73.1). The agent dir is ``$PI_CODING_AGENT_DIR``
(``~`` expanded) when set and non-empty, else ``~/.pi/agent``; its sessions are
``<agent dir>/sessions/--<cwd without its leading /, / \\ : as ->--/<ISO time, : . as ->_<uuid v7>.jsonl``.
A session directory named by ``--session-dir``, ``$PI_CODING_AGENT_SESSION_DIR`` or ``sessionDir`` in a
settings.json replaces the per-cwd folder: every cwd's sessions then sit flat in that directory. So
``--pi-home DIR`` names the agent dir (the one holding ``sessions/``) or a session directory itself;
``--home DIR`` gives ``DIR/.pi/agent``; then ``$PI_CODING_AGENT_SESSION_DIR`` (a session directory),
then ``$PI_CODING_AGENT_DIR``, then ``~/.pi/agent``. The agent dir's own ``settings.json``
``sessionDir`` is looked in too (a project's ``.pi/settings.json`` can name one as well: that one is
not known without the project, and is said so in docs/providers.md).

**Which** and **how**: see :mod:`.discover` and :mod:`.read`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import ClassVar, Iterator, Mapping

from ..base import Discovery, Provider, ReadReport, Record, Root, SessionRef

SESSION_DIR_ENV = "PI_CODING_AGENT_SESSION_DIR"


class Pi(Provider):
    name: ClassVar[str] = "pi"
    display: ClassVar[str] = "pi"
    home_flag: ClassVar[str] = "--pi-home"
    env_var: ClassVar[str | None] = "PI_CODING_AGENT_DIR"
    default_rel: ClassVar[str] = ".pi/agent"
    process_names: ClassVar[tuple[str, ...]] = ("pi",)
    client_packages: ClassVar[tuple[str, ...]] = ("@mariozechner/pi-coding-agent",)
    client_path_parts: ClassVar[tuple[str, ...]] = ("/pi-coding-agent/dist/",)
    """pi runs as ``node``: its comm is ``node`` and the script argument is the npm bin link ``pi`` or
    ``.../@mariozechner/pi-coding-agent/dist/cli.js`` (measured with 0.73.1); the Bun-compiled release
    binary is ``pi`` itself. Recognised by the base ``is_client_argv``."""
    activity_granularity: ClassVar[str] = "project"
    """pi keeps one folder per cwd and writes no lock or pid file: a running client is tied to its
    sessions only through its working directory."""
    lacks: ClassVar[dict[str, str]] = {
        "subagents": "its README says \"No sub-agents.\" (spawn pi instances via tmux, or build your own "
                     "with extensions), and its session files hold no child session",
        "plans": "pi has no plan mode and no plan or todo tool (0.73.1's tools: read, bash, edit, write, grep, "
                 "find, ls; its README: \"No plan mode. Write plans to files, or build it with extensions\"; the "
                 "plan-mode example extension it ships keeps its plan in the extension's own custom entries): "
                 "nothing a plan reader could bind",
        "reinjection": "pi writes no record of a file that changed on disk behind the session: its entries "
                       "are message, compaction, branch_summary, custom_message and bookkeeping (model_change, "
                       "thinking_level_change, label, session_info; session-manager.ts, 0.73.1), none re-sending "
                       "a changed file, so there is nothing to audit",
    }
    shell_tools: ClassVar[dict] = {"bash": ("command", None)}
    file_tools: ClassVar[dict] = {"read": ("path", "read"), "edit": ("path", "update"), "write": ("path", "write")}
    ccusage_agent: ClassVar[str | None] = "pi"
    """ccusage 20 reads pi as ``ccusage pi`` (its README: "pi-agent")."""
    records_forks: ClassVar[bool] = True
    """``pi --fork``, ``/fork`` and ``/clone`` write a new session whose header names the file it came
    from (``parentSession``) and which holds a copy of that file's entries."""
    truncation_marker: ClassVar[bytes | None] = rb"\[Showing [^\]\n]{0,300}\. Full output: "
    """pi's bash tool keeps the last 2000 lines / 50 KB of a long output and says where the whole output
    went (a temp file: ``[Showing lines A-B of N. Full output: /tmp/pi-bash-….log]``)."""
    truncation_literal: ClassVar[tuple[bytes, ...] | None] = (b". Full output: ",)
    def record_images(self, ref: SessionRef, record: Record) -> list:
        """The ``{type: "image", data, mimeType}`` blocks of a user message (``pi @red.png -p ...``
        attaches them: cli/file-processor.js) and of a tool result (the ``read`` tool on an image file:
        core/tools/read.js, the bytes base64 as sent to the model, resized first when over pi's inline
        limit), measured with 0.73.1."""
        if record.native not in ("message/user", "message/toolResult"):
            return []
        raw = record.raw
        m = raw.get("message") if isinstance(raw, dict) else None
        content = m.get("content") if isinstance(m, dict) else None
        if not isinstance(content, list):
            return []
        from ..artifacts import RecordImage

        carrier = "tool_result" if record.native == "message/toolResult" else "block"
        out = []
        for b in content:
            if isinstance(b, dict) and b.get("type") == "image":
                data = b.get("data") if isinstance(b.get("data"), str) else None
                mt = b.get("mimeType") if isinstance(b.get("mimeType"), str) else None
                out.append(RecordImage(carrier, mt, data, "base64" if data is not None else None))
        return out

    def locate(self, explicit: str | None = None, home: str | None = None,
               env: Mapping[str, str] | None = None) -> Root:
        env = os.environ if env is None else env
        if explicit:
            return Root(Path(explicit).expanduser(), self.home_flag, True)
        if home:
            return Root(Path(home).expanduser() / self.default_rel, "--home", True)
        for var in (SESSION_DIR_ENV, self.env_var):
            if env.get(var):
                return Root(Path(env[var]).expanduser(), var)
        return Root(Path.home() / self.default_rel, "default")

    def discover(self, root: Root) -> Discovery:
        from .discover import discover

        return discover(self, root)

    def read(self, ref: SessionRef, report: ReadReport, *, raw: bool = False) -> Iterator[Record]:
        from .read import read

        return read(ref, report, raw=raw)

    def forked_from(self, ref: SessionRef) -> dict | None:
        from .read import fork_point

        return fork_point(ref)

    records_cost: ClassVar[bool] = True
    """Every assistant message carries pi's price of it (``usage.cost.total``, USD, from the model's
    per-million prices in pi's catalogue or models.json)."""

    def recorded_cost(self, record: Record) -> float | None:
        raw = record.raw if isinstance(record.raw, dict) else None
        m = raw.get("message") if raw else None
        u = m.get("usage") if isinstance(m, dict) else None
        c = u.get("cost") if isinstance(u, dict) else None
        t = c.get("total") if isinstance(c, dict) else None
        return float(t) if isinstance(t, (int, float)) and not isinstance(t, bool) else None

    def shell_stdout(self, record: Record) -> str | None:
        """None: pi writes a successful command's output with no exit code, and treats a shell that died
        of a signal (code null) as a success too; an empty output is written as ``(no output)``."""
        return None

    def live_state(self, ref: SessionRef, world):
        """The session file's last message entry (a prompt or results awaiting the model, calls with
        no result, a stopReason that ends the turn) and the pi processes in the project (live.py)."""
        from . import live

        return live.live_state(self, ref, world)

    def whoami(self, env, world):
        """``PI_CODING_AGENT=true`` in a tool's environment names no session (pi exports none)."""
        from . import live

        return live.whoami(env, world)

    def compaction_of(self, ref: SessionRef, record: Record):
        """A ``compaction`` entry (session-manager.ts appends it: the session file keeps every entry
        before it; measured with 0.73.1, scenario ``compaction``): ``summary``, ``tokensBefore``,
        ``firstKeptEntryId`` (the first entry the model still reads verbatim after it). Whether it was
        automatic or ``/compact`` is not on the entry (only the client's ``compaction_end`` event
        carries a reason): trigger None."""
        if record.native != "compaction" or not isinstance(record.raw, dict):
            return None
        from ..compaction import mark

        o = record.raw
        tb = o.get("tokensBefore")
        fk = o.get("firstKeptEntryId")
        return mark(text=o.get("summary") if isinstance(o.get("summary"), str) else None,
                    pre_tokens=tb if isinstance(tb, int) and not isinstance(tb, bool) else None,
                    first_kept=f"id:{fk}" if isinstance(fk, str) else None,
                    uuid=o.get("id") if isinstance(o.get("id"), str) else None)

    def footprint(self, ref: SessionRef) -> list[Path]:
        """The session file and the full outputs of its cut bash results that still exist (temp files
        the tool wrote, named in the results' ``details.fullOutputPath``)."""
        from .read import full_output_paths

        out = [Path(p) for p in ref.paths]
        for q in full_output_paths(out[0]) if out else ():
            if q.is_file() and q not in out:
                out.append(q)
        return out
