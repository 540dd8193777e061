"""Qwen Code (``@qwen-code/qwen-code``): where its sessions live, which exist, how they read.

**Where** (the client's ``Storage``, 0.24.4). Everything a run writes goes under the *runtime dir*:
``$QWEN_RUNTIME_DIR`` when set, else ``advanced.runtimeOutputDir`` of settings.json, else the global
Qwen dir, which is ``$QWEN_HOME`` when set, else ``~/.qwen``. Sessions are
``<runtime dir>/projects/<cwd, every non-alphanumeric character as ->/chats/<session id>.jsonl``
(archived ones under ``chats/archive/``), a subagent's transcript
``projects/<p>/subagents/<session id>/agent-<agent id>.jsonl`` beside its ``.meta.json``. So
``--qwen-home DIR`` names that dir (the one holding ``projects/``); ``--home DIR`` gives ``DIR/.qwen``;
then ``$QWEN_RUNTIME_DIR``, then ``$QWEN_HOME``, then ``~/.qwen``. A ``runtimeOutputDir`` in the
global settings.json (``<QWEN_HOME or ~/.qwen>/settings.json``) is looked in too.

**Which** and **how**: see :mod:`.discover` and :mod:`.read`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import ClassVar, Iterator, Mapping

from ..base import Discovery, Provider, ReadReport, Record, Root, SessionRef

RUNTIME_ENV = "QWEN_RUNTIME_DIR"


class QwenCode(Provider):
    name: ClassVar[str] = "qwen-code"
    display: ClassVar[str] = "Qwen Code"
    home_flag: ClassVar[str] = "--qwen-home"
    env_var: ClassVar[str | None] = "QWEN_HOME"
    default_rel: ClassVar[str] = ".qwen"
    process_names: ClassVar[tuple[str, ...]] = ("qwen",)
    client_packages: ClassVar[tuple[str, ...]] = ("@qwen-code/qwen-code",)
    """Qwen Code runs as ``node``: the launcher ``node .../qwen-code/cli-entry.js`` (the npm bin link
    ``qwen``) relaunches itself as a child ``node ... .../qwen-code/cli.js`` that does the work (measured
    with 0.24.4; ``QWEN_CODE_NO_RELAUNCH`` keeps one process). Recognised by the base ``is_client_argv``."""
    activity_granularity: ClassVar[str] = "project"
    """Chats are kept per project; a headless run holds no lock. An interactive or daemon client holds a
    writer lease per session (``tmp/session-writer-locks/<id>.lock``: pid, host, state), which
    discovery reports in ``extra.writer_lock``."""
    shell_tools: ClassVar[dict] = {"run_shell_command": ("command", "directory")}
    file_tools: ClassVar[dict] = {"read_file": ("file_path", "read"), "edit": ("file_path", "update"),
                                  "write_file": ("file_path", "write")}
    truncation_marker: ClassVar[bytes | None] = rb"Tool output was too large and has been truncated\."
    """The first line of a tool output the client cut for the model (the whole output is saved in a file
    the result names, ``resultDisplay.outputFiles``)."""
    truncation_literal: ClassVar[tuple[bytes, ...] | None] = (b"Tool output was too large",)
    ccusage_agent: ClassVar[str | None] = "qwen"
    """ccusage 20 reads Qwen Code as ``ccusage qwen``."""
    lacks: ClassVar[dict[str, str]] = {
        "reinjection": "Qwen Code writes no record of a file that changed on disk behind the session: its "
                       "chat recording holds user, assistant, tool_result and system records (ui_telemetry, "
                       "chat_compression, attribution_snapshot, ...; 0.24.4); the current content of recently "
                       "read files it embeds belongs to a compression's compressedHistory (the summary "
                       "`verbatim` names), not to a re-send on change"}
    records_forks: ClassVar[bool] = True
    """``--fork-session`` (with ``--resume``/``--continue``) writes a new session whose records are the
    source's, each marked ``forkedFrom: {sessionId, messageUuid}``."""

    def plan_update(self, ref: SessionRef, record: Record):
        """A ``todo_write`` call: its ``todos`` (``[{id, content, status}]``, status ``pending``,
        ``in_progress`` or ``completed``) as the checklist (0.24.4's todoWrite tool; off unless
        ``tools.todoWrite.enabled``, else the call is refused: a failed update). The client also keeps
        the latest list in ``todos/<session id>.json`` (not read: the calls hold every update). Plan
        mode's ``exit_plan_mode`` plan (free text, approved by the user) is no checklist: not read."""
        if record.kind != "tool_call" or record.tool_name != "todo_write":
            return None
        from ..artifacts import PlanUpdate

        inp = record.tool_input if isinstance(record.tool_input, dict) else {}
        steps = [{"step": t.get("content"), "status": t.get("status")} for t in inp.get("todos") or []
                 if isinstance(t, dict)]
        return PlanUpdate(steps, None)

    def record_images(self, ref: SessionRef, record: Record) -> list:
        """The ``inlineData`` parts (``mimeType``, base64 ``data``) of a user message (an ``@file``
        reference to an image) and of a tool result (``functionResponse.parts``: ``read_file`` on an
        image), measured with 0.24.4. The client re-encodes an image before it sends it (a 4x3 PNG is
        written as ``image/jpeg``): the bytes are what the model got, not the file's."""
        if not (record.native.startswith("user") or record.native == "tool_result"):
            return []
        raw = record.raw
        msg = raw.get("message") if isinstance(raw, dict) else None
        parts = msg.get("parts") if isinstance(msg, dict) else None
        if not isinstance(parts, list):
            return []
        from ..artifacts import RecordImage

        out = []

        def take(p, carrier):
            d = p.get("inlineData") if isinstance(p, dict) else None
            if isinstance(d, dict):
                data = d.get("data") if isinstance(d.get("data"), str) else None
                mt = d.get("mimeType") if isinstance(d.get("mimeType"), str) else None
                out.append(RecordImage(carrier, mt, data, "base64" if data is not None else None))

        for p in parts:
            if not isinstance(p, dict):
                continue
            fr = p.get("functionResponse")
            if isinstance(fr, dict) and isinstance(fr.get("parts"), list):
                for q in fr["parts"]:
                    take(q, "tool_result")
            else:
                take(p, "tool_result" if record.native == "tool_result" else "block")
        return out

    def locate(self, explicit: str | None = None, home: str | None = None,
               env: Mapping[str, str] | None = None) -> Root:
        env = os.environ if env is None else env
        if explicit:
            return Root(Path(explicit).expanduser(), self.home_flag, True)
        if home:
            return Root(Path(home).expanduser() / self.default_rel, "--home", True)
        for var in (RUNTIME_ENV, self.env_var):
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

    def live_state(self, ref: SessionRef, world):
        """The chat file's last conversation record (a prompt or results awaiting the model, calls
        with no result, an end of turn), a subagent's .meta.json status, a daemon's writer lease and
        the Qwen Code processes in the project (live.py)."""
        from . import live

        return live.live_state(self, ref, world)

    def whoami(self, env, world):
        """``$QWEN_CODE_SESSION_ID``, which the shell tool exports (measured)."""
        from . import live

        return live.whoami(env, world)

    def subagents(self, ref: SessionRef, children, world, files: bool = False):
        """Subagent sessions joined to the parent's call their .meta.json ``toolUseId`` names."""
        from . import live

        return live.subagents(self, ref, children, world)

    def compaction_of(self, ref: SessionRef, record: Record):
        """A ``system/chat_compression`` record (the chat recording is appended to: every record
        before it stays; measured with 0.24.4, scenario ``compaction``): ``systemPayload.info``
        (``originalTokenCount``, ``triggerReason``: ``manual`` for ``/compress``, else the client's
        word) and ``compressedHistory`` (the summary as its first user message, the record's text)."""
        if record.native != "system/chat_compression":
            return None
        from ..compaction import mark

        o: dict = record.raw if isinstance(record.raw, dict) else {}
        sp = o.get("systemPayload")
        info: dict = {}
        if isinstance(sp, dict) and isinstance(sp.get("info"), dict):
            info = sp["info"]
        n = info.get("originalTokenCount")
        tr = info.get("triggerReason")
        return mark(text=record.text, trigger=tr if isinstance(tr, str) else None,
                    pre_tokens=n if isinstance(n, int) and not isinstance(n, bool) else None,
                    uuid=o.get("uuid") if isinstance(o.get("uuid"), str) else None)

    def footprint(self, ref: SessionRef) -> list[Path]:
        """A main session: its chat file, the saved whole outputs of its cut tool results, its subagents'
        dir (``subagents/<id>/``) and the file-history backups the client keeps for it
        (``<qwen dir>/file-history/<id>/``); a subagent: its transcript (and saved outputs), ``.meta.json``
        and ``.jsonl.stream``. Only paths that exist."""
        from .read import output_files

        out = [Path(p) for p in ref.paths]
        out += output_files(out[0]) if out else []
        if ref.parent_session_id is None:
            out += [Path(p) for p in ref.extra.get("owned_dirs", ())]
        else:
            base = Path(ref.paths[0])
            out += [base.with_name(base.name[:-len(".jsonl")] + ".meta.json"), base.with_name(base.name + ".stream")]
        seen, res = set(), []
        for p in out:
            if p not in seen and (p.exists() or p.is_symlink()):
                seen.add(p)
                res.append(p)
        return res
