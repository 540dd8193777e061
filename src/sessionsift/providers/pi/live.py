"""pi's live state, from what the client writes (read in 0.73.1's ``SessionManager`` and agent
loop; measured with the real client offline):

- **the session file** (one entry per line, ``appendFileSync`` per entry): a message entry is
  written when the message ends (``message_end``): the prompt (``role: user``), each model reply
  (``role: assistant``, its calls as ``toolCall`` content, ``stopReason`` ``toolUse`` | ``stop`` |
  ``length`` | ``aborted`` | ``error``), each call's result (``role: toolResult``, ``toolCallId``)
  once the call completes. So the last message says: a prompt or results awaiting the model, calls
  running (a call with no result yet), the end of the turn (``stop``/``length``), an interrupt
  (``aborted``) or an error.
- Nothing is written before the session's first reply: ``_persist`` holds every entry in memory
  until an assistant message exists, so a new session awaiting its first reply has no file yet.
- **the processes**: pi runs as ``node .../pi-coding-agent/dist/cli.js`` (or ``pi``) in the project
  directory and writes no lock or pid file; the file is opened per write, so a process is tied to
  a session only by its working directory.

Invisible: which session a process serves; a reply streaming (written once it ends). pi asks no
approval of its own (its tools run as called; an extension that asks keeps the question in memory).
whoami: pi sets ``PI_CODING_AGENT=true`` in its own process (cli.js), which every tool command
inherits; no session id is exported (measured: the sample's ``printenv`` step).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from ..liveness import LiveState, WhoamiClaim, as_list, decide, ev, project_processes

MARKER_ENV = "PI_CODING_AGENT"
INVISIBLE = [
    "a new session before its first reply: pi keeps every entry in memory until the first assistant message "
    "(SessionManager._persist), so such a session has no file yet",
    "a reply streaming: a message is written when it ends (message_end), so a turn awaiting the model and one "
    "whose reply is streaming look the same",
    "which session a process serves: pi writes no lock or pid file and opens the session file per write; a pi "
    "process is matched to a session by its working directory only",
]
PROVES = {
    "session file": "whether the last turn is open (a prompt or results awaiting the model, calls running) or "
                    "ended, from the last message entry the client wrote",
    "processes": "whether a pi process works in this session's project (none: nothing can write this session any "
                 "more)",
}
ENDED = {"stop": "eot", "length": "eot", "aborted": "interrupted", "error": "error"}


@dataclass
class Tail:
    state: str
    """awaiting-model | mid-tool | eot | interrupted | error | empty | unreadable | other"""
    detail: str
    last_line: int | None = None
    last_at: str | None = None
    last_text: str | None = None
    pending: list[dict] = field(default_factory=list)
    size: int | None = None
    mtime: float | None = None


def read_tail(path: Path) -> Tail:
    """The session file's last message entry and the calls still without a result, read line by
    line (a torn last line is no entry yet)."""
    try:
        st = os.stat(path)
        fh = open(path, "rb")
    except FileNotFoundError:
        return Tail("unreadable", "session file absent")
    except OSError as exc:
        return Tail("unreadable", f"unreadable: {exc.strerror or exc}")
    t = Tail("empty", "no message entry", size=st.st_size, mtime=st.st_mtime)
    last: tuple[int, dict, dict] | None = None
    pending: dict[str, dict] = {}
    with fh:
        for no, raw in enumerate(fh, 1):
            if not raw.endswith(b"\n") or not raw.strip():
                continue
            try:
                o = orjson.loads(raw)
            except orjson.JSONDecodeError:
                continue
            m = o.get("message") if isinstance(o, dict) and o.get("type") == "message" else None
            if not isinstance(m, dict) or m.get("role") not in ("user", "assistant", "toolResult"):
                continue
            last = (no, o, m)
            if m["role"] == "assistant":
                for c in as_list(m.get("content")):
                    if isinstance(c, dict) and c.get("type") == "toolCall" and isinstance(c.get("id"), str):
                        pending[c["id"]] = {"call_id": c["id"], "name": c.get("name"), "line": no}
            elif m["role"] == "toolResult" and isinstance(m.get("toolCallId"), str):
                pending.pop(m["toolCallId"], None)
    if last is None:
        return t
    no, o, m = last
    t.last_line = no
    t.last_at = o.get("timestamp") if isinstance(o.get("timestamp"), str) else None
    t.pending = list(pending.values())
    role, stop = m["role"], m.get("stopReason")
    if t.pending:
        names = ", ".join(f"{c['name']} (L{c['line']})" for c in t.pending)
        t.state, t.detail = "mid-tool", f"L{no} ({role}); call(s) with no result yet: {names}"
    elif role == "assistant" and stop in ENDED:
        t.state = ENDED[stop]
        t.last_text = "".join(c.get("text", "") for c in m.get("content") or []
                              if isinstance(c, dict) and c.get("type") == "text" and isinstance(c.get("text"), str)) or None
        t.detail = f"L{no} is a reply with stopReason {stop}" + (
            f": {str(m.get('errorMessage'))[:200]}" if stop == "error" and m.get("errorMessage") else "")
    elif role == "assistant":
        t.state, t.detail = "other", f"L{no} is a reply with stopReason {stop!r} and no call left without a result"
    elif role == "toolResult":
        t.state, t.detail = "awaiting-model", f"L{no} records the last call's result and no reply follows"
    else:
        t.state, t.detail = "awaiting-model", f"L{no} is a prompt and no reply follows"
    return t


def live_state(prov, ref, world) -> LiveState:
    from ...timefmt import instant, parse_ts

    path = Path(ref.paths[0])
    tail = read_tail(path)
    last = parse_ts(tail.last_at)
    owner, owner_why, prow = project_processes(prov, ref, world, PROVES["processes"])
    rows = [ev("session file", f"{tail.state}: {tail.detail}", PROVES["session file"], path=str(path),
               last_line=tail.last_line, last_record_at=instant(tail.last_at),
               last_record_age_secs=round(world.now - last.timestamp(), 1) if last else None, size=tail.size,
               modified_age_secs=round(world.now - tail.mtime, 1) if tail.mtime else None, pending=tail.pending),
            prow]
    notes, unreadable = [], []
    if tail.state == "unreadable":
        unreadable.append({"surface": "session file", "path": str(path), "why": tail.detail})
        notes.append(f"session file: {path} could not be read ({tail.detail}); the verdict rests on the processes")
    open_ = tail.state in ("awaiting-model", "mid-tool")
    ended = tail.state in ("eot", "interrupted", "error")
    rungs: dict[str, str | None] = {}
    settled = None
    if open_ and owner == "none":
        settled = "mid-tool" if tail.state == "mid-tool" else "mid-turn"
        rungs["stale-dead"] = f"{owner_why}, and the session file's last turn is open ({tail.detail})"
    if open_:
        rungs["running"] = f"session file {tail.state}: {tail.detail}" + (f"; {owner_why}" if owner == "alive" else "")
    if ended:
        rungs["idle-eot"] = f"session file {tail.state}: {tail.detail}"
    verdict, reason = decide(rungs, f"no surface decides: session file {tail.state} ({tail.detail}); {owner_why}")
    if verdict == "running" and owner == "alive":
        notes.append("a pi process in the project is evidence, not proof, that this session runs: which session a "
                     "process serves is not on disk")
    if verdict == "running" and owner == "unknown":
        notes.append(f"whether a pi process still serves this session cannot be checked ({owner_why})")
    return LiveState(verdict, reason, rows, notes, invisible=list(INVISIBLE),
                     settled=settled if verdict == "stale-dead" else None,
                     owner_ended=True if owner == "none" else (False if owner == "alive" else None),
                     turn_ended=True if ended else (False if open_ else None), unreadable=unreadable,
                     fields={"last_reply": tail.last_text}, watch=[str(path), str(path.parent)], detail=tail)


def whoami(env, world) -> WhoamiClaim | None:
    if env.get(MARKER_ENV) == "true":
        return WhoamiClaim("pi", None, MARKER_ENV,
                           f"cannot tell: ${MARKER_ENV}=true says this runs under pi (cli.js sets it in its own "
                           "process, so every tool command inherits it), and pi exports no session id; no guess "
                           "is made from recency or process trees")
    return None
