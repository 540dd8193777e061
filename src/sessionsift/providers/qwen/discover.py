"""Which Qwen Code sessions exist under a runtime dir (layout from the client's ``Storage``,
``SessionService``, ``agent-transcript.ts`` and ``session-writer-lease.ts``, 0.24.4; measured offline):

    projects/<sanitised cwd>/chats/<session id>.jsonl                 a session (append log, uuid chain)
    projects/<sanitised cwd>/chats/archive/<session id>.jsonl         an archived session
    projects/<sanitised cwd>/subagents/<session id>/agent-<id>.jsonl  a subagent's transcript (+ .meta.json,
                                                                      .jsonl.stream: its streamed text)
    tmp/session-writer-locks/<session id>.lock                        the writer lease of a live interactive
                                                                      or daemon client (none in headless runs)
    usage_record.jsonl                                                one usage summary per client run
    file-history/<session id>/                                        file backups for /rewind (global dir)

The folder name is the cwd with every non-alphanumeric character turned into ``-`` (it cannot be turned
back): the project is the ``cwd`` the records carry. A chat file starts with a record holding
``sessionId``; the client's own check (``SESSION_FILE_PATTERN``) names it ``<uuid>.jsonl``.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import orjson

from ..base import Discovery, Problem, SessionRef

_HEAD = 1 << 16
_TAIL = 1 << 16
_TS = re.compile(rb'"timestamp"\s*:\s*"([^"\\]{1,64})"')
_TITLE = re.compile(rb'"subtype":"custom_title","systemPayload":\{"customTitle":"((?:[^"\\]|\\.)*)"')
SESSION_NAME = re.compile(r"^[0-9a-fA-F-]{8,}\.jsonl$")


def _listing(d: Path) -> list[os.DirEntry]:
    with os.scandir(d) as it:
        return sorted(it, key=lambda e: e.name)


def _is_dir(e: os.DirEntry) -> bool:
    try:
        return e.is_dir(follow_symlinks=False)
    except OSError:
        return False


def _is_file(e: os.DirEntry) -> bool:
    try:
        return e.is_file()
    except OSError:
        return False


def peek(path: Path) -> dict | str:
    """Facts from the head and tail of a chat file, or why it is no Qwen Code session."""
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            head = f.read(_HEAD)
            tail = b""
            if size > _HEAD:
                f.seek(max(_HEAD, size - _TAIL))
                tail = f.read(_TAIL)
    except OSError as exc:
        return f"cannot read: {exc.strerror or exc}"
    first = None
    for raw in head.split(b"\n"):
        if not raw.strip():
            continue
        try:
            first = orjson.loads(raw)
        except orjson.JSONDecodeError:
            first = None
        break
    if size == 0:
        return "empty: the client created the file and wrote no record yet"
    if not isinstance(first, dict) or not isinstance(first.get("sessionId"), str) or "uuid" not in first:
        return "unknown format: the first line is no Qwen Code chat record"
    stamps = _TS.findall(tail or head)
    titles = _TITLE.findall(head + tail)
    title = None
    if titles:
        try:
            title = orjson.loads(b'"' + titles[-1] + b'"') or None
        except orjson.JSONDecodeError:
            title = None
    fork = first.get("forkedFrom") if isinstance(first.get("forkedFrom"), dict) else None
    return {"first": first, "size": size, "last_at": stamps[-1].decode() if stamps else None, "title": title,
            "fork": fork}


def _meta(path: Path) -> dict:
    try:
        m = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return {}
    return m if isinstance(m, dict) else {}


def usage_records(base: Path, problems: list[Problem]) -> dict[str, list[dict]]:
    """``usage_record.jsonl``: the client's summary of each run (tokens per model), by session id."""
    out: dict[str, list[dict]] = {}
    p = base / "usage_record.jsonl"
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        return out
    except OSError as exc:
        problems.append(Problem(str(p), f"cannot read: {exc.strerror}"))
        return out
    for raw in data.split(b"\n"):
        if not raw.strip():
            continue
        try:
            o = orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue
        if isinstance(o, dict) and isinstance(o.get("sessionId"), str):
            out.setdefault(o["sessionId"], []).append(o)
    return out


def _recorded_tokens(runs: list[dict]) -> dict | None:
    """The client's own token sums over its runs of one session (usage_record.jsonl ``models``)."""
    tot: dict[str, int] = {}
    for r in runs:
        for m in (r.get("models") or {}).values() if isinstance(r.get("models"), dict) else ():
            for k in ("inputTokens", "outputTokens", "cachedTokens", "thoughtsTokens", "totalTokens", "requests"):
                v = m.get(k) if isinstance(m, dict) else None
                if isinstance(v, int) and not isinstance(v, bool):
                    tot[k] = tot.get(k, 0) + v
    return tot or None


def writer_lock(base: Path, sid: str) -> dict | None:
    """The session's writer lease as the client wrote it (pid, host, state, kind, when), or None."""
    from urllib.parse import quote

    p = base / "tmp" / "session-writer-locks" / f"{quote(sid, safe='')}.lock"
    try:
        o = orjson.loads(p.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None
    if not isinstance(o, dict):
        return None
    keep = ("pid", "hostname", "state", "process_kind", "acquired_at", "sealed_at", "qwen_version",
            "process_start_identity", "schema_version")
    return {"path": str(p), **{k: o.get(k) for k in keep if k in o}}


def discover(provider, root) -> Discovery:
    base = root.path
    problems: list[Problem] = []
    if base is None or not base.exists():
        return Discovery([], provider.coverage(root, "absent", 0, f"{base} does not exist"), problems)
    if not base.is_dir():
        return Discovery([], provider.coverage(root, "unreadable", None, f"{base} is not a directory"), problems)
    bases = [base]
    extra_base = _settings_runtime_dir(base, problems)
    if extra_base is not None and extra_base.resolve() != base.resolve():
        bases.append(extra_base)
    sessions: list[SessionRef] = []
    unknown = unreadable = unreadable_dirs = 0
    looked = 0
    for b in bases:
        projects = b / "projects"
        try:
            pdirs = [e for e in _listing(projects) if _is_dir(e)]
        except FileNotFoundError:
            continue
        except OSError as exc:
            unreadable_dirs += 1
            problems.append(Problem(str(projects), f"cannot list: {exc.strerror}"))
            continue
        usage = usage_records(b, problems)
        for pd in pdirs:
            looked += 1
            pdir = Path(pd.path)
            for chats, archived in ((pdir / "chats", False), (pdir / "chats" / "archive", True)):
                try:
                    entries = _listing(chats)
                except FileNotFoundError:
                    continue
                except OSError as exc:
                    unreadable_dirs += 1
                    problems.append(Problem(str(chats), f"cannot list: {exc.strerror}"))
                    continue
                for e in entries:
                    if not (e.name.endswith(".jsonl") and _is_file(e)) or e.name.startswith("."):
                        continue
                    f = Path(e.path)
                    info = peek(f)
                    if isinstance(info, str):
                        if info.startswith("empty"):
                            continue  # a file the client just created: no session yet
                        problems.append(Problem(str(f), info))
                        unknown += info.startswith("unknown")
                        unreadable += not info.startswith("unknown")
                        continue
                    ref = _main_ref(f, info, pdir, archived, usage, b)
                    sessions.append(ref)
                    sessions += _subagents(ref, pdir, problems)
    sessions.sort(key=lambda r: (r.first_at or "", r.session_id))
    if not sessions:
        if unknown:
            return Discovery([], provider.coverage(root, "unknown_format", None,
                                                   f"{unknown} chat file(s) of a format this reader does not know"),
                             problems)
        if unreadable or unreadable_dirs:
            return Discovery([], provider.coverage(root, "unreadable", None,
                                                   f"{unreadable} chat file(s) and {unreadable_dirs} dir(s) could "
                                                   "not be read"), problems)
        return Discovery([], provider.coverage(root, "absent", 0,
                                               f"no chat files in {looked} project dir(s) under "
                                               f"{', '.join(str(b / 'projects') for b in bases)}"), problems)
    reason = None
    if unknown or unreadable or unreadable_dirs:
        reason = (f"a lower bound: {unreadable} file(s) and {unreadable_dirs} dir(s) unreadable, {unknown} "
                  "file(s) of unknown format")
    return Discovery(sessions, provider.coverage(root, "ok", sum(1 for s in sessions if not s.parent_session_id),
                                                 reason), problems)


def _settings_runtime_dir(base: Path, problems: list[Problem]) -> Path | None:
    p = base / "settings.json"
    try:
        data = orjson.loads(p.read_bytes())
    except FileNotFoundError:
        return None
    except (OSError, orjson.JSONDecodeError):
        return None  # the client reads JSON with comments too; a file we cannot parse names no dir here
    adv = data.get("advanced") if isinstance(data, dict) else None
    d = adv.get("runtimeOutputDir") if isinstance(adv, dict) else None
    if not isinstance(d, str) or not d:
        return None
    return Path(os.path.expanduser(d))


def _main_ref(f: Path, info: dict, pdir: Path, archived: bool, usage: dict, base: Path) -> SessionRef:
    first = info["first"]
    sid = first["sessionId"]
    cwd = first.get("cwd") if isinstance(first.get("cwd"), str) and first.get("cwd") else None
    extra: dict = {"project_dir": pdir.name, "archived": archived}
    if info["fork"] is not None:
        extra["forked_from_session"] = info["fork"].get("sessionId")
    runs = usage.get(sid)
    if runs:
        extra["recorded_tokens"] = _recorded_tokens(runs)
        extra["recorded_runs"] = len(runs)
    lock = writer_lock(base, sid)
    if lock is not None:
        extra["writer_lock"] = lock
    owned = [pdir / "subagents" / sid, base / "file-history" / sid]
    extra["owned_dirs"] = [str(p) for p in owned]
    v = first.get("version") if isinstance(first.get("version"), str) and first.get("version") != "unknown" else None
    ts = first.get("timestamp") if isinstance(first.get("timestamp"), str) else None
    return SessionRef("qwen-code", sid, [f], project=cwd, project_source="record cwd" if cwd else None,
                      first_at=ts, last_at=info["last_at"] or ts, size=info["size"], title=info["title"],
                      version=v, extra=extra)


def _subagents(parent: SessionRef, pdir: Path, problems: list[Problem]) -> list[SessionRef]:
    d = pdir / "subagents" / parent.session_id
    try:
        entries = _listing(d)
    except FileNotFoundError:
        return []
    except OSError as exc:
        problems.append(Problem(str(d), f"cannot list the session's subagents: {exc.strerror}"))
        return []
    out = []
    for e in entries:
        if not (e.name.startswith("agent-") and e.name.endswith(".jsonl") and _is_file(e)):
            continue
        f = Path(e.path)
        info = peek(f)
        meta = _meta(f.with_name(e.name[:-len(".jsonl")] + ".meta.json"))
        agent_id = meta.get("agentId") if isinstance(meta.get("agentId"), str) else e.name[len("agent-"):-len(".jsonl")]
        if isinstance(info, str):
            if info.startswith("empty"):
                continue
            problems.append(Problem(str(f), info))
            continue
        first = info["first"]
        extra = {"kind": "subagent", "agent_type": meta.get("agentType") or first.get("agentName"),
                 "description": meta.get("description"), "status": meta.get("status"),
                 "tool_use_id": meta.get("toolUseId"), "backgrounded": meta.get("isBackgrounded"),
                 "parent_agent_id": meta.get("parentAgentId"), "meta_found": bool(meta),
                 "model": meta.get("model") if isinstance(meta.get("model"), str) else None}
        ts = first.get("timestamp") if isinstance(first.get("timestamp"), str) else None
        out.append(SessionRef("qwen-code", agent_id, [f], project=parent.project, project_source=parent.project_source,
                              first_at=ts, last_at=info["last_at"] or ts, size=info["size"],
                              title=meta.get("description") if isinstance(meta.get("description"), str) else None,
                              parent_session_id=parent.session_id, version=parent.version, extra=extra))
    return out
