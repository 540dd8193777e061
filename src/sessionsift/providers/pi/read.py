"""How a pi session reads as records in the shared shape (format from the client's session-manager.ts,
messages.ts and pi-ai's types; measured with 0.73.1 offline).

A session file is JSON Lines: a header ``{"type":"session","version":3,"id","timestamp","cwd"
[,"parentSession"]}``, then entries ``{"type","id","parentId","timestamp",...}`` that form a tree
(``parentId``): the client appends only, and a branch made with ``/tree`` leaves the old path in the
file. The conversation the client resumes is the path from the last entry back to the root; an entry
off that path is yielded with ``rewound`` set (it happened: its tokens were spent, its tools ran).
The client writes nothing until the first assistant message exists, then the whole backlog at once.

Entries:

- ``message``: ``message.role`` ``user`` (a prompt), ``assistant`` (content blocks ``text``,
  ``thinking``, ``toolCall``; ``usage``, ``stopReason``, ``errorMessage``, ``model``, ``responseId``),
  ``toolResult`` (``toolCallId``, ``toolName``, ``content``, ``details``, ``isError``),
  ``bashExecution`` (a command the user ran with ``!``), ``custom`` (an extension's message in the
  model's context), ``branchSummary``/``compactionSummary`` (not written as messages by 0.73.1);
- ``compaction`` (``summary``, ``firstKeptEntryId``, ``tokensBefore``, ``details.readFiles/
  modifiedFiles``), ``branch_summary``, ``custom_message``;
- bookkeeping: ``model_change``, ``thinking_level_change``, ``custom``, ``label``, ``session_info``.

A fork (``--fork``, ``/fork``, ``/clone``) copies the entries of the file it came from, ids and
timestamps unchanged: those records carry ``copy_of`` (the original's locator in the parent session,
``<parent id>:L<n>``, or ``<parent id>:id:<entry id>`` when that file cannot be read) and no tokens.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Iterator

import orjson

from ...read.lines import ReadStats, iter_lines, parse_numbered
from ..base import FileChange, Problem, ReadReport, Record, SessionRef, Tokens

PROVIDER = "pi"
EXIT_TRAILER = re.compile(r"(?:^|\n)Command exited with code (\d+)\Z")
"""The last line of a failed bash result (bash.ts ``appendStatus``); a success carries no code."""
HARNESS_ENTRIES = frozenset({"model_change", "thinking_level_change", "custom", "label", "session_info"})
SAVED_OUTPUT_MAX = 16 << 20


def _text(content: Any) -> str | None:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return None
    out = []
    for b in content:
        if not isinstance(b, dict):
            continue
        if b.get("type") == "text" and isinstance(b.get("text"), str):
            out.append(b["text"])
        elif b.get("type") == "image":
            out.append(f"[image {b.get('mimeType') or '?'}]")
    return "\n".join(out)


def _tokens(usage: Any, key: str) -> Tokens | None:
    """pi-ai's ``Usage``: ``input`` (prompt tokens net of cache reads and writes), ``output`` (completion
    tokens: reasoning inside), ``cacheRead``, ``cacheWrite``, ``totalTokens``. pi initialises every field
    to 0 before the response's usage arrives, so all five 0 is a response whose usage never came (an
    aborted or failed call): unknown, not 0."""
    if not isinstance(usage, dict):
        return None

    def n(k):
        v = usage.get(k)
        return v if isinstance(v, int) and not isinstance(v, bool) else None

    vals = [n(k) for k in ("input", "output", "cacheRead", "cacheWrite", "totalTokens")]
    if all(v is None for v in vals) or all(v in (0, None) for v in vals):
        return None
    return Tokens(input=vals[0], output=vals[1], cache_read=vals[2], cache_write=vals[3], reasoning=None,
                  total=vals[4], dedup_key=key)


def _abs(path: str, cwd: str | None) -> str | None:
    if not isinstance(path, str) or not path:
        return None
    p = os.path.expanduser(path)
    if not os.path.isabs(p):
        if not cwd:
            return None
        p = os.path.join(cwd, p)
    return os.path.normpath(p)


def parent_file(recorded: str, fork_file: Path) -> Path | None:
    """The fork's parent file: the path its header records, else a file of that name beside the fork
    (a copied or moved agent dir: forks of one cwd share its folder); None when neither exists."""
    from ...read.probe import is_file

    for p in (Path(recorded), fork_file.parent / os.path.basename(recorded)):
        if is_file(p):  # an input of the reading (read/probe.py): its appearance is a change
            return p
    return None


def _parent_index(path: str | os.PathLike | None) -> tuple[str | None, dict[str, int] | None]:
    """(the parent session's id, entry id -> its line) of a fork's parent file; (None, None) when it
    cannot be read."""
    if not path:
        return None, None
    ids: dict[str, int] = {}
    sid = None
    try:
        for line in iter_lines(path):
            try:
                o = orjson.loads(line.raw)
            except orjson.JSONDecodeError:
                continue
            if not isinstance(o, dict):
                continue
            if o.get("type") == "session" and sid is None and isinstance(o.get("id"), str):
                sid = o["id"]
            elif isinstance(o.get("id"), str):
                ids.setdefault(o["id"], line.no)
    except OSError:
        return None, None
    return sid, ids


def _parent_id_from_name(path: str) -> str | None:
    m = re.search(r"_([0-9a-fA-F-]{36})\.jsonl$", path)
    return m.group(1) if m else None


class _Reader:
    def __init__(self, ref: SessionRef, report: ReadReport, raw: bool):
        self.ref = ref
        self.report = report
        self.raw = raw
        self.path = Path(ref.paths[0])
        self.cwd = ref.project
        self.turn = 0
        self.calls: dict[str, tuple[str, Any]] = {}
        self.count = 0
        self.no = 0
        self.offset = None
        self.length = None
        self.copies = 0
        self.rewound = 0

    def rec(self, loc: str, role, kind, native, obj, **kw) -> Record:
        self.count += 1
        r = Record(PROVIDER, self.ref.session_id, loc, role, kind, native, path=str(self.path), line=self.no,
                   offset=self.offset, length=self.length, raw=obj if self.raw else None, **kw)
        if r.turn is None and self.turn:
            r.turn = self.turn
        return r

    # -- passes ----------------------------------------------------------------------------------
    def run(self) -> Iterator[Record]:
        stats = ReadStats()
        entries: list[tuple[int, int, int, dict | None]] = []
        for line in iter_lines(self.path, stats=stats):
            obj = parse_numbered(line, self.path, stats)
            entries.append((line.no, line.offset, len(line.raw), obj))
        header = next((o for _n, _o, _l, o in entries if isinstance(o, dict) and o.get("type") == "session"), None)
        parent_path = header.get("parentSession") if isinstance(header, dict) else None
        fork_ts = header.get("timestamp") if isinstance(header, dict) else None
        found = parent_file(parent_path, self.path) if isinstance(parent_path, str) and parent_path else None
        parent_sid, parent_ids = _parent_index(found)
        if found is not None and str(found) != parent_path:
            self.report.notes.append(f"{self.path.name}: the session it was forked from is not at the path its header "
                                     f"records ({parent_path}); read from {found}")
        if isinstance(parent_path, str) and parent_sid is None:
            parent_sid = _parent_id_from_name(parent_path)
            self.report.notes.append(f"{self.path.name}: the session it was forked from ({parent_path}) cannot be "
                                     "read: copied entries told by their timestamps, before the fork's header")
        on_path = self._leaf_path([o for _n, _o, _l, o in entries])
        for no, off, ln, obj in entries:
            self.no, self.offset, self.length = no, off, ln
            if obj is None:
                continue
            copy_of = None
            eid = obj.get("id") if isinstance(obj.get("id"), str) and obj.get("type") != "session" else None
            if parent_path and eid is not None:
                if parent_ids is not None:
                    if eid in parent_ids:
                        copy_of = f"{parent_sid}:L{parent_ids[eid]}"
                elif isinstance(obj.get("timestamp"), str) and isinstance(fork_ts, str) and obj["timestamp"] < fork_ts:
                    copy_of = f"{parent_sid or 'parent'}:id:{eid}"
            rewound = on_path is not None and eid is not None and eid not in on_path
            if rewound:
                self.rewound += 1
            for r in self.entry(obj, copy_of):
                if copy_of is not None:
                    r.copy_of = copy_of if "#" not in r.locator else f"{copy_of}#{r.locator.split('#', 1)[1]}"
                    r.tokens = None
                    r.file_changes = ()
                    self.report.duplicates += 1
                r.rewound = rewound
                yield r
        r = self.report
        r.add_read(self.path, stats, files=1)
        r.records += self.count
        if self.rewound:
            r.notes.append(f"{self.path.name}: {self.rewound} entr(ies) off the path the client resumes (a /tree "
                           "branch left them): kept, marked rewound")

    @staticmethod
    def _leaf_path(objs: list) -> set[str] | None:
        """Entry ids on the path from the last entry back to the root (the conversation the client
        resumes), or None when the file has no tree (format 1: no ids)."""
        parent: dict[str, str | None] = {}
        last = None
        for o in objs:
            if isinstance(o, dict) and o.get("type") != "session" and isinstance(o.get("id"), str):
                p = o.get("parentId")
                parent[o["id"]] = p if isinstance(p, str) else None
                last = o["id"]
        if last is None:
            return None
        out: set[str] = set()
        cur: str | None = last
        while cur is not None and cur not in out:
            out.add(cur)
            cur = parent.get(cur)
        return out

    # -- entries ---------------------------------------------------------------------------------
    def entry(self, obj: dict, copy_of: str | None) -> Iterator[Record]:
        t = obj.get("type")
        loc = f"L{self.no}"
        ts = obj.get("timestamp") if isinstance(obj.get("timestamp"), str) else None
        if t == "session":
            yield self.rec(loc, "harness", "meta", "session", obj, instant=ts, text=None)
        elif t == "message":
            m = obj.get("message")
            if not isinstance(m, dict):
                self.report.unknown_kinds["message:no message"] += 1
                yield self.rec(loc, "harness", "unknown", "message", obj, instant=ts)
                return
            yield from self.message(obj, m, loc, ts)
        elif t in ("compaction", "branch_summary"):
            s = obj.get("summary")
            yield self.rec(loc, "harness", "meta", t, obj, instant=ts, text=s if isinstance(s, str) else None)
        elif t == "custom_message":
            yield self.rec(loc, "user", "meta", t, obj, instant=ts, text=_text(obj.get("content")))
        elif t in HARNESS_ENTRIES:
            text = None
            if t == "session_info":
                text = obj.get("name") if isinstance(obj.get("name"), str) else None
            elif t == "model_change":
                text = f"{obj.get('provider')}/{obj.get('modelId')}"
            elif t == "thinking_level_change":
                text = str(obj.get("thinkingLevel"))
            elif t == "label":
                text = f"{obj.get('label')} on {obj.get('targetId')}"
            yield self.rec(loc, "harness", "meta", t, obj, instant=ts, text=text)
        else:
            name = f"type/{t}" if isinstance(t, str) else "type/?"
            self.report.unknown_kinds[name] += 1
            yield self.rec(loc, "harness", "unknown", name, obj, instant=ts)

    def message(self, obj: dict, m: dict, loc: str, ts) -> Iterator[Record]:
        role = m.get("role")
        native = f"message/{role}"
        if role == "user":
            self.turn += 1
            yield self.rec(loc, "user", "prompt", native, obj, instant=ts, text=_text(m.get("content")),
                           turn=self.turn)
        elif role == "assistant":
            yield from self.assistant(obj, m, loc, ts)
        elif role == "toolResult":
            yield from self.tool_result(obj, m, loc, ts)
        elif role == "bashExecution":
            code = m.get("exitCode") if isinstance(m.get("exitCode"), int) else None
            err = True if m.get("cancelled") is True or (code not in (0, None)) else (False if code == 0 else None)
            yield self.rec(loc, "user", "tool_call", native, obj, instant=ts, text=m.get("output"),
                           tool_name="bash", tool_input={"command": m.get("command")}, exit_code=code, is_error=err,
                           truncated=m.get("truncated") is True)
        elif role in ("custom", "branchSummary", "compactionSummary"):
            text = _text(m.get("content")) if role == "custom" else m.get("summary")
            yield self.rec(loc, "user", "meta", native, obj, instant=ts, text=text if isinstance(text, str) else None)
        else:
            name = f"message/{role}" if isinstance(role, str) else "message/?"
            self.report.unknown_kinds[name] += 1
            yield self.rec(loc, "harness", "unknown", name, obj, instant=ts)

    def assistant(self, obj: dict, m: dict, loc: str, ts) -> Iterator[Record]:
        model = m.get("model") if isinstance(m.get("model"), str) else None
        key = m.get("responseId") if isinstance(m.get("responseId"), str) and m.get("responseId") else None
        tokens = _tokens(m.get("usage"), f"pi:{'response:' + key if key else 'entry:' + str(obj.get('id'))}")
        failed = m.get("stopReason") in ("error", "aborted")
        blocks = m.get("content") if isinstance(m.get("content"), list) else []
        out: list[Record] = []
        for i, b in enumerate(blocks):
            if not isinstance(b, dict):
                continue
            bl = f"{loc}#{i}"
            bt = b.get("type")
            if bt == "text":
                out.append(self.rec(bl, "assistant", "message", "message/assistant/text", obj, instant=ts,
                                    text=b.get("text"), model=model))
            elif bt == "thinking":
                out.append(self.rec(bl, "assistant", "reasoning", "message/assistant/thinking", obj, instant=ts,
                                    text=b.get("thinking"), model=model))
            elif bt == "toolCall":
                cid = b.get("id") if isinstance(b.get("id"), str) else None
                args = b.get("arguments")
                if cid:
                    self.calls[cid] = (b.get("name"), args)
                out.append(self.rec(bl, "assistant", "tool_call", "message/assistant/toolCall", obj, instant=ts,
                                    tool_name=b.get("name"), tool_input=args, call_id=cid, model=model,
                                    text=orjson.dumps(args).decode() if args is not None else None))
            else:
                name = f"message/assistant/{bt}"
                self.report.unknown_kinds[name] += 1
                out.append(self.rec(bl, "assistant", "unknown", name, obj, instant=ts, model=model))
        if not out or failed:
            err = m.get("errorMessage") if isinstance(m.get("errorMessage"), str) else None
            out.insert(0, self.rec(loc, "assistant", "message", "message/assistant", obj, instant=ts, model=model,
                                   text=err if err is not None else ("" if not out else None),
                                   is_error=True if failed else None))
        out[0].tokens = tokens
        yield from out

    def tool_result(self, obj: dict, m: dict, loc: str, ts) -> Iterator[Record]:
        cid = m.get("toolCallId") if isinstance(m.get("toolCallId"), str) else None
        name = m.get("toolName") if isinstance(m.get("toolName"), str) else None
        text = _text(m.get("content"))
        is_err = m.get("isError") if isinstance(m.get("isError"), bool) else None
        details = m.get("details") if isinstance(m.get("details"), dict) else {}
        code = None
        if name == "bash" and is_err and isinstance(text, str):
            mm = EXIT_TRAILER.search(text)
            code = int(mm.group(1)) if mm else None
        trunc = details.get("truncation") if isinstance(details.get("truncation"), dict) else None
        cut = bool(trunc and trunc.get("truncated") is True)
        fop = details.get("fullOutputPath") if isinstance(details.get("fullOutputPath"), str) else None
        changes: tuple[FileChange, ...] = ()
        call = self.calls.get(cid or "")
        if is_err is False and call is not None and isinstance(call[1], dict):
            cname, args = call
            path = _abs(args.get("path"), self.cwd)
            if path and cname == "write" and isinstance(args.get("content"), str):
                # the write tool records no create/update: the file may or may not have existed
                changes = (FileChange(path, "unknown", new_content=args["content"]),)
            elif path and cname == "edit":
                diff = details.get("diff") if isinstance(details.get("diff"), str) else None
                changes = (FileChange(path, "update", diff=None),)
                del diff  # pi's diff is a display diff (line-numbered), not a patch: kept in raw only
        yield self.rec(loc, "tool", "tool_result", "message/toolResult", obj, instant=ts, text=text, call_id=cid,
                       tool_name=name, is_error=is_err, exit_code=code, file_changes=changes, truncated=cut)
        if cut and fop:
            yield self.saved_output(fop, loc, ts, cid, name)

    def saved_output(self, fop: str, loc: str, ts, cid, name) -> Record:
        """The whole output of a cut bash result, from the temp file the tool wrote it to (its first
        16 MiB); text null with a note when that file is gone (it lives in the temp dir)."""
        text = None
        try:
            with open(fop, "rb") as f:
                data = f.read(SAVED_OUTPUT_MAX + 1)
            if len(data) > SAVED_OUTPUT_MAX:
                self.report.notes.append(f"{fop}: only the first {SAVED_OUTPUT_MAX} bytes of the saved output read")
                data = data[:SAVED_OUTPUT_MAX]
            text = data.decode("utf-8", "replace")
        except OSError as exc:
            self.report.notes.append(f"{self.path.name} {loc}: the whole output the bash tool saved ({fop}) cannot "
                                     f"be read: {exc.strerror or exc}")
        return self.rec(f"{loc}#output", "tool", "meta", "message/toolResult#fullOutputPath", None, instant=ts,
                        text=text, call_id=cid, tool_name=name)


def read(ref: SessionRef, report: ReadReport, *, raw: bool = False) -> Iterator[Record]:
    rd = _Reader(ref, report, raw)
    try:
        yield from rd.run()
    except OSError as exc:
        report.problems.append(Problem(str(rd.path), f"unreadable: {exc.strerror or exc}"))


def fork_point(ref: SessionRef) -> dict | None:
    """The session ``ref`` was forked from, as its header records it (``parentSession``: the parent's
    file), with the parent's id, the parent line of the last entry copied, that entry's id and how many
    entries were copied (entries whose id is in the parent file; when the parent cannot be read,
    those written before the fork's header). None for a session that is no fork."""
    parent = ref.extra.get("parent_session_path")
    if not isinstance(parent, str) or not parent:
        return None
    found = parent_file(parent, Path(ref.paths[0]))
    sid, ids = _parent_index(found)
    copied = 0
    last_id = None
    fork_ts = ref.first_at
    try:
        for i, line in enumerate(iter_lines(ref.paths[0])):
            if i == 0:
                continue
            try:
                o = orjson.loads(line.raw)
            except orjson.JSONDecodeError:
                continue
            if not isinstance(o, dict) or not isinstance(o.get("id"), str):
                continue
            if ids is not None:
                hit = o["id"] in ids
            else:
                hit = isinstance(o.get("timestamp"), str) and isinstance(fork_ts, str) and o["timestamp"] < fork_ts
            if not hit:
                break
            copied += 1
            last_id = o["id"]
    except OSError:
        copied = None
    return {"session_id": sid or _parent_id_from_name(parent), "path": str(found) if found else parent,
            "line": ids.get(last_id) if ids is not None and last_id is not None else None,
            "uuid": last_id, "copied_records": copied}


_FULL = re.compile(rb'"fullOutputPath":"((?:[^"\\]|\\.)*)"')


def full_output_paths(path: Path) -> list[Path]:
    """The temp files a session's cut bash results name (``details.fullOutputPath``), found by their
    bytes (the key appears nowhere else in a pi record)."""
    out: list[Path] = []
    try:
        for line in iter_lines(path):
            if b'"fullOutputPath"' not in line.raw:
                continue
            for m in _FULL.finditer(line.raw):
                try:
                    p = Path(orjson.loads(b'"' + m.group(1) + b'"'))
                except orjson.JSONDecodeError:
                    continue
                if p not in out:
                    out.append(p)
    except OSError:
        return out
    return out
