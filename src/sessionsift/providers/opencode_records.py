"""opencode messages and parts -> shared :class:`Record` rows (one mapping for the SQLite store and
the legacy JSON tree; docs/providers.md, "opencode", has the table).

A message is ``{role: user|assistant, time, ...}``; its parts (ordered by id, ids sort by time) are
``text``, ``reasoning``, ``tool``, ``step-start``, ``step-finish``, ``file``, ``patch``, ``snapshot``,
``agent``, ``subtask``, ``retry``, ``compaction``. opencode writes one assistant message per model
step, pointing back (``parentID``) to its user message.

Tokens are exact and per step: each ``step-finish`` part carries the step's usage; the record that
carries it has ``Tokens.dedup_key`` = the message id (one step per message; a legacy message
holding several steps keys each by ``<message id>/<part id>``). The message's own ``tokens`` repeat
the step's and are used only for a message with no step-finish part whose tokens are not all
zero. A message still in flight (no ``time.completed``, no step-finish: the client was killed or is
mid-step) has tokens None, never zeros.

opencode's ``output`` moved meaning between releases: 1.1.x counts reasoning inside it
(``total = input + cache.read + cache.write + output``), 1.18.x does not
(``total = ... + output + reasoning``). :func:`tokens_from` tells them apart by the recorded
``total`` and normalises to the shared shape, where ``output`` includes reasoning.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path
from typing import Any, Iterable, Iterator

from .base import FileChange, Problem, ReadReport, Record, Tokens

PROVIDER = "opencode"

KNOWN_PARTS = frozenset({"text", "reasoning", "tool", "step-start", "step-finish", "file", "patch",
                         "snapshot", "agent", "subtask", "retry", "compaction"})
KNOWN_ROLES = frozenset({"user", "assistant"})


def iso_ms(ms: Any) -> str | None:
    """Epoch milliseconds -> ISO-8601 UTC with milliseconds (None when not a positive number)."""
    if isinstance(ms, bool) or not isinstance(ms, (int, float)) or ms <= 0:
        return None
    try:
        sec, rest = divmod(int(ms), 1000)
        if sec > 253402300799:  # past 9999-12-31: not an instant any reader can parse
            return None
        return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(sec)) + f".{rest:03d}Z"
    except (OverflowError, OSError, ValueError):
        return None


def _int(v: Any) -> int | None:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    return int(v)


def _d(v: Any) -> dict:
    return v if isinstance(v, dict) else {}


def _s(v: Any) -> str | None:
    return v if isinstance(v, str) else None


def tokens_from(t: Any, dedup_key: str) -> Tokens | None:
    """opencode ``tokens`` ({total?, input, output, reasoning, cache: {read, write}}) -> Tokens.

    ``input`` is already net of cache reads (opencode subtracts them), so it maps as is. ``output``
    is normalised to include reasoning (see module docstring); when the total cannot tell which
    convention was used and reasoning is non-zero, output is taken as written and the reasoning
    count is kept beside it."""
    t = _d(t)
    if not t:
        return None
    cache = _d(t.get("cache"))
    inp, out, rea = _int(t.get("input")), _int(t.get("output")), _int(t.get("reasoning"))
    cr, cw, tot = _int(cache.get("read")), _int(cache.get("write")), _int(t.get("total"))
    if inp is None and out is None:
        return None
    if out is not None and rea:
        base = (inp or 0) + (cr or 0) + (cw or 0)
        if tot is not None and tot == base + out + rea:
            out = out + rea  # 1.18.x: output excludes reasoning
    if tot is None and inp is not None and out is not None:
        tot = inp + (cr or 0) + (cw or 0) + out
    return Tokens(input=inp, output=out, cache_read=cr, cache_write=cw, reasoning=rea, total=tot,
                  dedup_key=dedup_key)


def _nonzero(t: Any) -> bool:
    t = _d(t)
    c = _d(t.get("cache"))
    return any(_int(x) for x in (t.get("input"), t.get("output"), t.get("reasoning"), c.get("read"), c.get("write")))


def file_changes(tool: str, state: dict) -> tuple[FileChange, ...]:
    """What a completed tool call changed on disk, as far as the part records it."""
    inp, meta = _d(state.get("input")), _d(state.get("metadata"))
    path = _s(inp.get("filePath")) or _s(meta.get("filepath"))
    if tool == "write" and path:
        ex = meta.get("exists")
        action = "update" if ex is True else "create" if ex is False else "unknown"
        return (FileChange(path, action, new_content=_s(inp.get("content"))),)
    if tool == "edit" and path:
        fd = _d(meta.get("filediff"))
        return (FileChange(path, "update", new_content=_s(fd.get("after")), old_content=_s(fd.get("before")),
                           diff=_s(meta.get("diff")) or _s(fd.get("patch"))),)
    if tool == "multiedit" and path:
        rl = meta.get("results")
        res = [_d(_d(r).get("filediff")) for r in (rl if isinstance(rl, list) else []) if isinstance(r, dict)]
        return (FileChange(path, "update", new_content=_s(res[-1].get("after")) if res else None,
                           old_content=_s(res[0].get("before")) if res else None, diff=_s(meta.get("diff"))),)
    files = meta.get("files")
    if isinstance(files, list):  # apply_patch / patch: one entry per file touched
        out = []
        for f in files:
            f = _d(f)
            p = _s(f.get("filePath")) or _s(f.get("file"))
            if not p:
                continue
            kind = f.get("type")
            action = {"add": "create", "update": "update", "delete": "delete", "move": "move"}.get(kind, "unknown")
            out.append(FileChange(p, action, new_content=_s(f.get("after")), old_content=_s(f.get("before")),
                                  diff=_s(f.get("diff")) or _s(f.get("patch")), move_to=_s(f.get("movePath"))))
        return tuple(out)
    return ()


SAVED_OUTPUT_CAP = 16 << 20
"""Bytes of a saved tool output read into one record (memory stays bounded whatever its size)."""


class SessionMapper:
    """Turns one session's messages (in order) into records; keeps the turn count."""

    def __init__(self, session_id: str, report: ReadReport, *, path: str | None, is_child: bool, raw: bool,
                 data_dir: Path | None = None, provider: str = PROVIDER):
        self.provider = provider
        """The reader's name the records carry (``opencode``, or a client built from its code: ``kilo-code``)."""
        self.data_dir = data_dir
        """The data dir (``tool-output/`` is there): a recorded ``outputPath`` that is absent is looked
        for under it by name (a copied or restored data dir)."""
        self.sid = session_id
        self.report = report
        self.path = path
        self.is_child = is_child
        self.raw = raw
        self.turn = 0
        self.summary = False

    def _rec(self, locator: str, role: str, kind: str, native: str, instant: str | None, obj: Any,
             **kw: Any) -> Record:
        self.report.records += 1
        return Record(self.provider, self.sid, locator, role, kind, native, path=self.path, instant=instant,  # type: ignore[arg-type]
                      turn=self.turn or None, raw=obj if self.raw else None, **kw)

    def message(self, mid: str, data: dict, row_ms: Any, parts: Iterable[tuple[str, dict, Any]]) -> Iterator[Record]:
        role = data.get("role")
        if not isinstance(role, str):
            role = None
        time = _d(data.get("time"))
        inst = iso_ms(time.get("created")) or iso_ms(row_ms)
        parts = list(parts)
        prompt_pid = None  # a turn opens at what a person typed (not at a compaction or synthetic message),
        if role == "user":  # in a child session at the task its parent delegated
            prompt_pid = next((pid for pid, pd, _ in parts if pd.get("type") == "text" and isinstance(pd.get("text"), str)
                               and not pd.get("synthetic") and not pd.get("ignored")), None)
            if prompt_pid is not None:
                self.turn += 1
        self.summary = role == "assistant" and data.get("summary") is True
        model = _s(data.get("modelID")) or _s(_d(data.get("model")).get("modelID"))
        native = f"message/{role}" if role is not None else "message/?"
        if role not in KNOWN_ROLES:
            self.report.unknown_kinds[native] += 1
            yield self._rec(f"message:{mid}", "harness", "unknown", native, inst, data, model=model)
        else:
            err = _d(data.get("error"))
            err_text = _s(_d(err.get("data")).get("message")) or _s(err.get("name"))
            steps = [p for p in parts if p[1].get("type") == "step-finish"]
            toks = None
            if role == "assistant" and not steps and _nonzero(data.get("tokens")):
                toks = tokens_from(data.get("tokens"), mid)
            yield self._rec(f"message:{mid}", "user" if role == "user" else "assistant", "meta", native, inst,
                            data, model=model, tokens=toks, text=err_text,
                            is_error=True if err else None, message_id=mid)
        step_key_by_part = {}
        finishes = [p[0] for p in parts if p[1].get("type") == "step-finish"]
        for pid in finishes:
            step_key_by_part[pid] = mid if len(finishes) == 1 else f"{mid}/{pid}"
        for pid, pd, pms in parts:
            for r in self.part(pid, pd, pms, role, model, step_key_by_part, pid != prompt_pid):
                r.message_id = mid
                yield r

    def part(self, pid: str, p: dict, row_ms: Any, role: Any, model: str | None, step_keys: dict,
             not_the_prompt: bool) -> Iterator[Record]:
        typ = p.get("type")
        if not isinstance(typ, str):
            typ = None
        native = f"part/{typ}" if typ is not None else "part/?"
        ptime = _d(p.get("time"))
        inst = iso_ms(ptime.get("start")) or iso_ms(ptime.get("created")) or iso_ms(row_ms)
        loc = f"part:{pid}"
        mrole = "user" if role == "user" else "assistant"
        if typ == "text":
            text = _s(p.get("text"))
            if role == "user":
                synthetic = bool(p.get("synthetic")) or bool(p.get("ignored"))
                if synthetic or self.is_child:  # not typed by a person (client context, a task prompt)
                    kind = "meta"
                elif not not_the_prompt:
                    kind = "prompt"
                else:
                    kind = "message"
            else:
                kind = "message"
                if self.summary:  # the compaction agent's summary of the conversation so far
                    native = "part/text/summary"
            yield self._rec(loc, mrole, kind, native, inst, p, text=text, model=model if role != "user" else None)
        elif typ == "reasoning":
            yield self._rec(loc, "assistant", "reasoning", native, inst, p, text=_s(p.get("text")), model=model)
        elif typ == "tool":
            yield from self._tool(pid, p, inst, model)
        elif typ == "step-finish":
            yield self._rec(loc, "harness", "meta", native, inst, p, model=model, text=_s(p.get("reason")),
                            tokens=tokens_from(p.get("tokens"), step_keys.get(pid, pid)))
        elif typ == "file":
            name = _s(p.get("filename")) or _s(_d(p.get("source")).get("path"))
            url = _s(p.get("url")) or ""
            label = name or (url if not url.startswith("data:") else "(inline data)")
            yield self._rec(loc, mrole, "meta", native, inst, p, text=f"{label} ({_s(p.get('mime')) or '?'})")
        elif typ == "subtask":
            yield self._rec(loc, mrole, "meta", native, inst, p, text=_s(p.get("prompt")),
                            tool_name=_s(p.get("agent")))
        elif typ == "retry":
            err = _d(p.get("error"))
            yield self._rec(loc, "harness", "meta", native, inst, p, is_error=True,
                            text=_s(_d(err.get("data")).get("message")) or _s(err.get("name")))
        elif typ in KNOWN_PARTS:  # step-start, patch, snapshot, agent, compaction: client bookkeeping
            text = None
            if typ == "patch" and isinstance(p.get("files"), list):
                text = ", ".join(str(f) for f in p["files"][:20])
            elif typ == "agent":
                text = _s(p.get("name"))
            yield self._rec(loc, "harness", "meta", native, inst, p, text=text)
        else:
            self.report.unknown_kinds[native] += 1
            yield self._rec(loc, "harness", "unknown", native, inst, p)

    def _tool(self, pid: str, p: dict, inst: str | None, model: str | None) -> Iterator[Record]:
        st = _d(p.get("state"))
        tool = _s(p.get("tool"))
        call = _s(p.get("callID"))
        status = st.get("status")
        stime = _d(st.get("time"))
        yield self._rec(f"part:{pid}", "assistant", "tool_call", "part/tool", iso_ms(stime.get("start")) or inst,
                        p, tool_name=tool, tool_input=st.get("input"), call_id=call, model=model,
                        text=_s(st.get("title")))
        if status not in ("completed", "error"):
            return  # pending/running: no result on disk (yet)
        meta = _d(st.get("metadata"))
        ex = _int(meta.get("exit"))
        # opencode records a command that exits non-zero as ``completed`` with ``metadata.exit`` N:
        # that exit code is the client's record of the failure, so the result is an error, as
        # every other provider's is (docs/providers.md, "What is_error means")
        out = _s(st.get("output")) if status == "completed" else _s(st.get("error"))
        fcs = file_changes(tool or "", st) if status == "completed" else ()
        yield self._rec(f"part:{pid}#output", "tool", "tool_result", "part/tool#output",
                        iso_ms(stime.get("end")) or inst, p, tool_name=tool, call_id=call, text=out,
                        exit_code=ex, is_error=(status == "error") or (ex is not None and ex != 0),
                        file_changes=fcs)
        if meta.get("truncated") is True and _s(meta.get("outputPath")):
            yield self._saved_output(pid, p, iso_ms(stime.get("end")) or inst, tool, call, _s(meta["outputPath"]))

    def _saved_output(self, pid: str, p: dict, inst: str | None, tool: str | None, call: str | None,
                      recorded: str) -> Record:
        """The whole output of a call whose result opencode cut (``...output truncated...`` with
        ``metadata.truncated`` and ``outputPath``: the model read only its tail; opencode saved the
        whole of it in ``<data dir>/tool-output/<id>``), as a ``meta`` record (role tool) after the
        result, read up to :data:`SAVED_OUTPUT_CAP` bytes. Absent, its text is None and a note
        names the path looked for. The file under the data dir being read wins over the recorded
        absolute path (which, in a copied or restored data dir, is the original's)."""
        path = Path(recorded)
        if self.data_dir is not None:  # the data dir named now wins (a copy's own file, not the original's)
            here = self.data_dir / "tool-output" / path.name
            if here.exists() or not path.exists():
                path = here
        text = None
        try:
            with open(path, "rb") as f:
                data = f.read(SAVED_OUTPUT_CAP + 1)
        except FileNotFoundError:
            self.report.notes.append(f"part:{pid}: saved output {recorded} is absent (looked for {path})")
        except OSError as exc:  # there, but not readable: what it holds is not in the answer
            self.report.problems.append(Problem(str(path), f"saved tool output not read: {exc.strerror or exc}"))
        else:
            text = data[:SAVED_OUTPUT_CAP].decode("utf-8", "replace")
            if len(data) > SAVED_OUTPUT_CAP:
                self.report.notes.append(f"part:{pid}: saved output {path} read to its first {SAVED_OUTPUT_CAP} bytes")
        return self._rec(f"part:{pid}#saved_output", "tool", "meta", "part/tool#outputPath", inst, p,
                         tool_name=tool, call_id=call, text=text)



# The `read` tool's output for a text file (1.18.33's ReadTool.execute, read in its binary's bundled
# source): `<path>P</path>`, `<type>file</type>`, `<content>`, the lines `N: text` (a line longer than
# 2,000 characters is cut and ends `... (line truncated to 2000 chars)`), then a blank line and
# `(End of file - total N lines)` when every line from offset 1 was shown (else `(Showing lines ...`
# or `(Output capped at 50 KB. ...`), `</content>`, and possibly a `<system-reminder>` after it. The
# lines come from a stream line splitter that drops the final newline: the output does not say
# whether the file ended with one.
_READ = re.compile(r"<path>([^\n]*)</path>\n<type>file</type>\n<content>\n(.*)\n\n"
                   r"\(End of file - total (\d+) lines\)\n</content>(?:\n<system-reminder>.*)?", re.S)
_LINE_CUT = "... (line truncated to 2000 chars)"


def read_output_lines(call, result) -> list[str] | None:
    """The file's lines when a `read` result shows all of them (see above), else None."""
    t = result.text
    if result.kind != "tool_result" or result.is_error is not False or result.truncated or not isinstance(t, str):
        return None
    inp = call.tool_input if isinstance(call.tool_input, dict) else {}
    if inp.get("offset") not in (None, 0, 1):
        return None
    m = _READ.fullmatch(t)
    named = inp.get("filePath")
    if m is None or not os.path.isabs(m.group(1)) or (isinstance(named, str) and os.path.isabs(named)
                                                      and os.path.normpath(named) != os.path.normpath(m.group(1))):
        return None
    n = int(m.group(3))
    body = m.group(2)
    rows = body.split("\n") if n else ([] if body == "" else None)
    if rows is None or len(rows) != n:
        return None
    out = []
    for i, row in enumerate(rows, 1):
        pre = f"{i}: "
        if not row.startswith(pre) or row.endswith(_LINE_CUT):
            return None
        out.append(row[len(pre):])
    return out
