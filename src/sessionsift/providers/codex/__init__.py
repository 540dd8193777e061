"""Codex CLI (``@openai/codex``): where it keeps sessions and how they read. See docs/providers.md.

Root: ``--codex-home``, then ``--home``/.codex, then ``$CODEX_HOME``, then ``~/.codex``.
Sessions: one rollout file per thread (a subagent is its own thread, linked to its parent);
Codex partitions them by date, so the project is only the ``cwd`` its ``session_meta`` records.
The reading itself is in :mod:`.reader`, the file layout in :mod:`.files`, the SQLite side
stores in :mod:`.sidestore`.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Iterator

import orjson

from ..base import Discovery, Problem, Provider, ReadReport, Record, Root, SessionRef
from . import files as rf
from .shapes import TRUNCATION_MARKER

_EXEC_OUTPUT = re.compile(r"Chunk ID: [^\n]*\nWall time: [^\n]*\nProcess exited with code 0\n"
                          r"(?:Original token count: \d+\n)?Output:\n")
PROJECT_SOURCE = "session_meta.cwd (Codex partitions rollouts by date; the project is only this cwd)"
SHAPE_PROBE_LINES = 16
"""How many leading records discovery parses to decide a rollout's format."""
_META_USED = ("id", "session_id", "source", "parent_thread_id", "timestamp", "cwd", "cli_version", "originator",
              "model_provider", "agent_nickname", "agent_role", "thread_source", "forked_from_id",
              "forked_from_ordinal_exclusive")
"""The session_meta fields discovery uses (:meth:`Codex._built`): the ones it keeps per file."""


def _shaped(obj) -> bool:
    return isinstance(obj, dict) and "type" in obj and "payload" in obj and "timestamp" in obj


class Codex(Provider):
    name = "codex"
    ccusage_agent = "codex"
    display = "Codex CLI"
    home_flag = "--codex-home"
    env_var = "CODEX_HOME"
    default_rel = ".codex"
    text_in_bytes = True
    process_names = ("codex", "codex-x86_64-unknown-linux-musl", "codex-aarch64-unknown-linux-musl",
                     "codex-x86_64-unknown-linux-gnu", "codex-aarch64-unknown-linux-gnu")
    """The ``codex`` launcher and the native binaries the npm package ships (named by target)."""
    client_packages = ("@openai/codex",)
    activity_granularity = "provider"
    """Codex partitions by date and keeps one cwd inside each file: no per-project signal on disk."""
    truncation_marker = TRUNCATION_MARKER
    """``…N tokens truncated…`` in a tool output it sent the model (shapes.py)."""
    truncation_literal = (" truncated\u2026".encode(), b" truncated\\u2026")
    """One of them ends every match of the marker (held by tests/test_provider_fastpaths.py)."""
    lacks = {"reinjection": "Codex CLI writes no record of a file that changed on disk behind the session: its rollout holds the "
                   "model-facing history (response_item), UI events (event_msg), turn_context, world_state "
                   "(environments, AGENTS.md, skills) and compacted lines (0.171.0); no item re-sends a changed "
                   "file, so there is nothing to audit"}
    records_forks = True
    worktree_dir = "worktrees"
    """`codex fork` / `codex exec fork <id>` start a thread whose ``session_meta`` names the thread
    it came from (``forked_from_id``, ``forked_from_ordinal_exclusive``)."""

    def forked_from(self, ref: SessionRef) -> dict | None:
        """From ``session_meta.forked_from_id``. Codex 0.171.0 copies none of the parent's records
        into the fork's rollout (measured: its first line is the fork's own session_meta; the
        history is referenced by ``forked_from_ordinal_exclusive``, the parent's first record
        ordinal NOT shared), so ``copied_records`` is 0 for such a file; ``line`` and ``uuid`` are
        not recorded (None)."""
        fid = ref.extra.get("forked_from_id")
        if not isinstance(fid, str) or not fid:
            return None
        excl = ref.extra.get("forked_from_ordinal_exclusive")
        return {"session_id": fid, "path": None, "line": None, "uuid": None,
                "copied_records": 0 if isinstance(excl, int) else None,
                "ordinal_exclusive": excl if isinstance(excl, int) else None}

    shell_tools = {"exec_command": ("cmd", "workdir"), "shell": ("command", "workdir"),
                   "shell_command": ("command", "workdir"), "local_shell": ("command", "working_directory")}
    """``exec_command`` (0.171.0), ``shell`` (older releases: an argv), ``local_shell_call`` items."""

    def file_calls(self, ref: SessionRef, record: Record) -> list[tuple[str, str]]:
        """The files an ``apply_patch`` call's patch text names, with the action each would be
        (``create``, ``update``, ``delete``, ``move``); relative paths joined to the session's cwd.
        Reads are shell commands here (``cat F``: `files` lists them from the Bash analysis)."""
        if record.kind != "tool_call" or record.tool_name != "apply_patch":
            return []
        from .shapes import changes_from_patch

        inp = record.tool_input
        text = inp if isinstance(inp, str) else inp.get("input") if isinstance(inp, dict) else None
        out = []
        for fc in changes_from_patch(text):
            p = fc.path
            if not os.path.isabs(p):
                if not ref.project:
                    continue
                p = os.path.join(ref.project, p)
            out.append((os.path.normpath(p), fc.action))
        return out

    def compaction_of(self, ref: SessionRef, record: Record):
        """A ``compacted`` line (the rollout is appended to: every line before it stays; measured with
        0.171.0, scenario ``compaction``): its ``message`` is the summary as the model reads it next
        (the client's handoff preamble, then the summary); its ``replacement_history`` re-sends the
        context and the user's messages (read as copies). The trigger and the tokens before are not
        on the line (None)."""
        if record.native != "compacted":
            return None
        from ..compaction import mark

        return mark(text=record.text)

    def plan_update(self, ref: SessionRef, record: Record):
        """An ``update_plan`` call: its ``plan`` (``[{step, status}]``) and ``explanation``, the
        checklist the client renders (0.171.0: offered to the model in ``exec`` with
        ``-c tools.update_plan.enabled=true``, always in the TUI; answered ``Plan updated``; no plan
        file is written)."""
        if record.kind != "tool_call" or record.tool_name != "update_plan":
            return None
        from ..artifacts import PlanUpdate

        inp = record.tool_input if isinstance(record.tool_input, dict) else {}
        steps = [{"step": x.get("step"), "status": x.get("status")} for x in inp.get("plan") or []
                 if isinstance(x, dict)]
        ex = inp.get("explanation")
        return PlanUpdate(steps, ex if isinstance(ex, str) else None)

    def record_images(self, ref: SessionRef, record: Record) -> list:
        """The ``input_image`` items a rollout line holds, their bytes inline as a data URL: a
        prompt's attached images (``codex exec --image F``: ``<image name=[Image #N] path="F">``
        text before each, the handle and path read from it) and a ``view_image`` output
        (``function_call_output.output`` list), measured on 0.171.0. The UI echo
        (``item_completed/UserMessage``'s ``local_image``) names only the path: a copy, not read."""
        raw = record.raw
        p = raw.get("payload") if isinstance(raw, dict) else None
        if not isinstance(p, dict) or raw.get("type") != "response_item":
            return []
        if p.get("type") == "message" and record.kind in ("prompt", "message", "meta"):
            items, carrier = p.get("content"), "block"
        elif p.get("type") in ("function_call_output", "custom_tool_call_output") and record.kind == "tool_result":
            items, carrier = p.get("output"), "tool_result"
        else:
            return []
        if not isinstance(items, list):
            return []
        from ..artifacts import RecordImage, data_url

        out = []
        label = None
        for it in items:
            if not isinstance(it, dict):
                continue
            if it.get("type") == "input_text" and isinstance(it.get("text"), str):
                m = _IMAGE_LABEL.match(it["text"])
                label = m if m else None
                continue
            if it.get("type") != "input_image":
                continue
            url = it.get("image_url")
            mt, b64 = data_url(url) if isinstance(url, str) else (None, None)
            out.append(RecordImage(carrier, mt, b64, "base64" if b64 is not None else ("url" if url else None),
                                   int(label.group(1)) if label and label.group(1) else None,
                                   label.group(2) if label else None))
            label = None
        return out

    def shell_stdout(self, record: Record) -> str | None:
        """An ``exec_command`` output (``Chunk ID: ..`` / ``Wall time: ..`` / ``Process exited with
        code 0`` / ``Original token count: N`` / ``Output:`` then the command's output as it was,
        measured on 0.171.0) or an older release's JSON ``{"output", "metadata": {"exit_code": 0}}``;
        None when the command did not exit 0, is still running, or the client cut the text."""
        text = record.text
        if record.kind != "tool_result" or record.truncated or not isinstance(text, str):
            return None
        m = _EXEC_OUTPUT.match(text)
        if m:
            return text[m.end():]
        if text.startswith("{"):
            try:
                o = orjson.loads(text)
            except orjson.JSONDecodeError:
                return None
            md = o.get("metadata") if isinstance(o, dict) else None
            if isinstance(md, dict) and md.get("exit_code") == 0 and isinstance(o.get("output"), str):
                return o["output"]
        return None

    # ------------------------------------------------------------------ discovery
    def discover(self, root: Root, index_off: bool | str | None = None) -> Discovery:
        """Every rollout's ref from its head and tail (a peek of each file), each peek's outcome kept
        under the file's identity while the index is on (`index_off`: why it is off; index/kept.py
        Peeks): an unchanged rollout is not read again to be discovered."""
        path = root.path
        if path is None or not (path.exists() or path.is_symlink()):
            return Discovery([], self.coverage(root, "absent", 0, f"no Codex CLI home at {path}"))
        if not path.is_dir():
            return Discovery([], self.coverage(root, "unreadable", None, f"{path} is not a directory"),
                             [Problem(str(path), "not a directory")])
        try:
            os.listdir(path)
        except OSError as exc:
            why = f"cannot list {path}: {exc.strerror or exc}"
            return Discovery([], self.coverage(root, "unreadable", None, why), [Problem(str(path), why)])
        walk_problems: list[rf.WalkProblem] = []
        found, looked = rf.walk(path, walk_problems)
        problems = [Problem(p.path, p.why) for p in walk_problems]
        if not looked and not problems:
            return Discovery([], self.coverage(root, "absent", 0, f"no sessions/ or archived_sessions/ under {path}"))
        from .sidestore import load

        side = load(path)
        refs: list[SessionRef] = []
        unknown = unreadable = 0
        from ...index.kept import Peeks

        peeks = Peeks.open("codex-discovery", path, index_off)
        try:
            got = [self._ref(f, side, peeks) for f in found]
        finally:
            if peeks is not None:
                peeks.close()
        for ref, prob, state in got:
            if prob is not None:
                problems.append(prob)
            if state == "unknown_format":
                unknown += 1
            elif state == "unreadable":
                unreadable += 1
            if ref is not None:
                refs.append(ref)
        skipped = []
        if unknown:
            skipped.append(f"{unknown} rollout(s) of unknown format")
        if unreadable:
            skipped.append(f"{unreadable} rollout(s) unreadable")
        dir_probs = len(walk_problems)
        if dir_probs:
            skipped.append(f"{dir_probs} path(s) not listable")
        if refs:
            reason = ("not counted: " + ", ".join(skipped)) if skipped else None
            cov = self.coverage(root, "ok", len(refs), reason)
        elif unknown:
            cov = self.coverage(root, "unknown_format", None, "; ".join(skipped) + " (lines lack {timestamp, type, payload})")
        elif unreadable or dir_probs:
            cov = self.coverage(root, "unreadable", None, "; ".join(skipped) + (": " + problems[0].why if problems else ""))
        else:
            cov = self.coverage(root, "absent", 0, f"no rollout-*.jsonl under {path}/sessions or archived_sessions")
        if side.notes:
            cov_notes = "; ".join(side.notes)
            for r in refs:
                r.extra.setdefault("side_store_notes", cov_notes)
        return Discovery(refs, cov, problems)

    def _ref(self, f: rf.RolloutFile, side, peeks=None) -> tuple[SessionRef | None, Problem | None, str]:
        if peeks is not None:
            got, before = peeks.get(f.path)
            if got is None:
                ref, prob, state, facts, keep = self._read(f)
                if keep:
                    peeks.put(f.path, before, facts)
            else:
                facts = got
        else:
            ref, prob, state, facts, _keep = self._read(f)
        if facts is None:
            return ref, prob, state
        return self._built(f, side, *facts)

    def _read(self, f: rf.RolloutFile) -> tuple[SessionRef | None, Problem | None, str, tuple | None, bool]:
        """(None, problem, state, None, False) for a rollout discovery cannot use, else (None, None,
        "ok", facts, keep): what its head and tail say -- (size, the session_meta fields used, the first shaped
        record's timestamp, the last instant, why it is unknown), and whether index/kept.py's Peeks
        may keep them under the file's identity (not when its tail could not be read)."""
        try:
            pk = rf.peek(f.path)
            size = pk.size if pk is not None else f.path.stat().st_size
            head_objs, saw_json = self._head(f.path, pk)
        except OSError as exc:
            return None, Problem(str(f.path), f"unreadable: {exc.strerror or exc}"), "unreadable", None, False
        except Exception as exc:  # a corrupt compressed stream, ...
            return None, Problem(str(f.path), f"unreadable: {type(exc).__name__}: {exc}"), "unreadable", None, False
        shaped = [o for o in head_objs if _shaped(o)]
        if not shaped:
            if size == 0:
                why = "empty file (no record yet)"
                return None, Problem(str(f.path), why), "unreadable", None, False
            if saw_json:
                return (None, Problem(str(f.path), "unknown format: no line has {timestamp, type, payload}"),
                        "unknown_format", None, False)
            return None, Problem(str(f.path), "unreadable: no complete JSON line"), "unreadable", None, False
        meta: dict = next((o["payload"] for o in shaped if o.get("type") == "session_meta"
                     and isinstance(o.get("payload"), dict)), {})
        last_at = None
        last_why = None  # why the last instant is unknown: said as a problem, never the first instant
        keep = True
        try:
            tail = pk.tail if pk is not None else rf.tail_lines(f.path)
        except OSError as exc:
            tail, last_why = [], f"last activity unknown: the end of the file could not be read ({exc.strerror or exc})"
            keep = False
        except Exception as exc:  # a corrupt compressed stream, ...
            tail, last_why = [], f"last activity unknown: the end of the file could not be read ({type(exc).__name__}: {exc})"
            keep = False
        for raw in reversed(tail):
            try:
                o = orjson.loads(raw.replace(b"\x00", b""))
            except orjson.JSONDecodeError:
                continue
            if isinstance(o, dict) and isinstance(o.get("timestamp"), str):
                last_at = o["timestamp"]
                break
        else:
            if last_why is None and tail:
                # lines at the end, none with a timestamp (torn or not JSON): the instant is unknown
                last_why = "last activity unknown: no timestamped record among the last lines"
        used = {k: meta[k] for k in _META_USED if k in meta}
        facts = (size, used, shaped[0].get("timestamp"), last_at, last_why)
        return None, None, "ok", facts, keep

    def _built(self, f: rf.RolloutFile, side, size: int, meta: dict, first_ts, last_at, last_why
               ) -> tuple[SessionRef | None, Problem | None, str]:
        """The session's ref from what its rollout's head and tail said (:meth:`_read`) and the
        side stores."""
        tid = meta.get("id") or meta.get("session_id") or rf.thread_id_from_name(f.path.name) or f.path.name
        src = meta.get("source")
        spawn = src.get("subagent", {}).get("thread_spawn", {}) if isinstance(src, dict) and isinstance(
            src.get("subagent"), dict) else {}
        parent = meta.get("parent_thread_id") or (spawn.get("parent_thread_id") if isinstance(spawn, dict) else None)
        extra: dict = {"archived": f.archived, "compressed": f.compressed}
        if f.shadowed is not None:
            extra["shadowed"] = str(f.shadowed)
            extra["shadowed_note"] = "a compressed sibling exists; the plain file wins"
        for k in ("originator", "model_provider", "agent_nickname", "agent_role", "thread_source",
                  "forked_from_id", "forked_from_ordinal_exclusive", "session_id"):
            if meta.get(k) is not None:
                extra[k] = meta[k]
        if src is not None:
            extra["source"] = src
        row = side.threads.get(str(tid))
        title = None
        if row:
            title = row.get("title") or None
            for k in ("first_user_message", "tokens_used", "model", "agent_role", "agent_path"):
                if row.get(k) not in (None, ""):
                    extra.setdefault(k if k != "tokens_used" else "tokens_used_side_store", row[k])
            if row.get("archived"):
                extra["archived_in_side_store"] = True
        if str(tid) in side.turns:
            extra["turn_statuses"] = side.turns[str(tid)]
        if side.sources:
            extra["side_stores"] = list(side.sources)
        first_at = meta.get("timestamp") if isinstance(meta.get("timestamp"), str) else first_ts
        ref = SessionRef(provider=self.name, session_id=str(tid), paths=[f.path],
                         project=meta.get("cwd") if isinstance(meta.get("cwd"), str) else None,
                         project_source=PROJECT_SOURCE if isinstance(meta.get("cwd"), str) else None,
                         first_at=first_at, last_at=last_at if last_at or last_why else first_at, size=size,
                         title=title,
                         parent_session_id=str(parent) if parent else None,
                         version=meta.get("cli_version") if isinstance(meta.get("cli_version"), str) else None,
                         extra=extra)
        return ref, (Problem(str(f.path), last_why) if last_why else None), "ok"

    @staticmethod
    def _head(path: Path, pk: "rf.Peek | None" = None) -> tuple[list, bool]:
        """The first few parsed records (applying the shared reading rules) and whether any line
        was a JSON object at all. `pk`: the file's head and tail already read."""
        from ...read.lines import ReadStats, parse_numbered

        out, saw = [], False
        st = ReadStats()
        head = pk.head if pk is not None else rf.head_line(path)
        if head is not None:
            try:
                o = orjson.loads(head.replace(b"\x00", b""))
                if isinstance(o, dict):
                    saw = True
                    if _shaped(o):
                        return [o], True
            except orjson.JSONDecodeError:
                pass
        for ln in rf.lines(path, st):
            o = parse_numbered(ln, path, st)
            if isinstance(o, dict):
                saw = True
                out.append(o)
                if _shaped(o) or len(out) >= SHAPE_PROBE_LINES:
                    break
            if ln.no >= SHAPE_PROBE_LINES * 4:
                break
        return out, saw

    def session_listing(self, root: Path, source: str = "scan", locks=None):
        """The thread-writer locks ``<root>/thread-writer-locks/<thread id>.lock`` held right now
        (``locks``: /proc/locks, never taken): a held one is a thread being written (listing.py)."""
        from .listing import session_listing

        return session_listing(Path(root), source, locks if locks is not None
                               else (lambda: (None, "locks are not observable here")))

    def worktree_roots(self, root: Path):
        """The directories under ``$CODEX_HOME/worktrees/`` (up to three levels) holding a ``.git``
        entry (listing.py)."""
        from .listing import worktree_roots

        return worktree_roots(Path(root))

    def worktree_metadata(self, admin: str | None):
        """``codex-thread.json`` (0.171.0) or the newer manager's ``codex-worktree.json`` in the
        worktree's git dir: its ``ownerThreadId`` and ``manager`` (listing.py)."""
        from .listing import worktree_metadata

        return worktree_metadata(admin)

    def footprint(self, ref: SessionRef) -> list[Path]:
        """The rollout and its shadowed ``.jsonl.zst`` sibling, if any, and the thread's
        ``thread-writer-locks/<thread id>.lock`` (0.171.0 leaves it behind at exit; a held one makes
        clean's activity gate say the session is live). The session's rows in the shared side
        stores (``threads``, ``thread_turns`` ...) are not files of its own: not here."""
        out = list(ref.paths)
        sh = ref.extra.get("shadowed") if isinstance(ref.extra, dict) else None
        if isinstance(sh, str):
            out.append(Path(sh))
        home = next((p.parent for p in Path(ref.paths[0]).parents if p.name in ("sessions", "archived_sessions")),
                    None) if ref.paths else None
        sid = ref.session_id
        if home is not None and sid and "/" not in sid and not sid.startswith("."):
            lock = home / "thread-writer-locks" / f"{sid}.lock"
            if lock.is_file() and not lock.is_symlink():
                out.append(lock)
        return out

    # ------------------------------------------------------------------ live state (live.py)
    def live_state(self, ref: SessionRef, world):
        """The thread-writer lock (/proc/locks), the rollout's open turn and unreturned calls, the
        side store's turn statuses, the child threads (live.py)."""
        from . import live

        return live.live_state(self, ref, world)

    def whoami(self, env, world):
        """``$CODEX_THREAD_ID``, which the client exports into its shell tool's environment."""
        from . import live

        return live.whoami(env, world)

    def subagents(self, ref: SessionRef, children, world, files: bool = False):
        """Child threads joined to the ``spawn_agent`` call whose output names their agent id."""
        from . import live

        return live.subagents(self, ref, children, world)

    # ------------------------------------------------------------------ reading
    def read(self, ref: SessionRef, report: ReadReport, *, raw: bool = False) -> Iterator[Record]:
        from .reader import read_rollout

        yield from read_rollout(ref, report, raw=raw)

    def file_lines(self, path: Path, stats=None):
        """A plain rollout mapped, a ``.jsonl.zst`` one streamed through the decompressor (its line
        numbers count lines of the decompressed stream: files.py)."""
        return rf.lines(Path(path), stats)


import re as _re  # noqa: E402

_IMAGE_LABEL = _re.compile(r'^<image name=\[Image #(\d+)\](?: path="([^"]*)")?>$')
"""The text Codex CLI puts before an attached image (0.171.0: ``<image name=[Image #1] path="red.png">``)."""
