"""Claude Code's ``reinjection`` capability (`audit reinjection`): files whose changed-on-disk contents
the client re-injected into context (the answer's shape: providers/reinjection.py).

The one carrier on disk is the `edited_text_file` attachment record (payload exactly `{type, filename,
snippet}`: FH-033/REC-054). The client's changed-files scan emits one for a file it holds in its file
state (a file the session wrote or edited; a Read-only file is skipped on 2.1.x, FH-046 and
tests/realclient/README.md) when the file changed on disk behind the session's back. The seed this
audits observed a version of the client that re-sent such an entry at every later flush, byte-identical,
until the session edited the file with its own Edit/Write tool, and whose entries grew when a second
region changed. This module measures, per lane, exactly what the records show:

- a *delivery* is one `edited_text_file` record; a *flush* is a run of consecutive `attachment`
  records (no other record in between) holding at least one delivery, named by the line of its first
  delivery;
- a delivery is a *repeat* when its snippet is byte-identical to the previous delivery of the same file
  in the same *episode*; an episode ends at the session's next successful structured write of that file
  (Edit, Write, MultiEdit, NotebookEdit whose tool_result is not an error) - the only observed exit;
- bytes are UTF-8 bytes of the snippet string. The wrapper text the client puts around a snippet in
  the API request is not on disk, so it is not counted; that the model received each delivery is
  inferred from the record (the client writes what it attaches).

Nothing is guessed: a record we could not read is reported with its line (`unreadable`), a figure that
depends on it is None.
"""

from __future__ import annotations

import hashlib
import posixpath
import re

import orjson

from ...read.lines import iter_lines, parse_line
from ..reinjection import AuditResult, Delivery, Exit, FileReport, Flush, LaneReport
from ..vocab import Problem
from .discover import Lane, Scope
from .model import record as R

WRITE_TOOLS = R.MUTATING_FILE_TOOLS
_TOOL_NEEDLES = tuple(f'"{t}"'.encode() for t in sorted(WRITE_TOOLS))   # cheap pre-filter; the parse decides
_TAIL = re.compile(r"\n\.\.\. \[(\d+) lines truncated\] \.\.\.\Z")
_GUTTER = re.compile(r"\s*(\d+)(?:\t|\u2192)")
_FILENAME_RAW = re.compile(rb'"filename"\s*:\s*"((?:[^"\\]|\\.)*)"')


def _regions(snippet: str) -> int | None:
    body = _TAIL.sub("", snippet)
    if body == "":
        return 0
    runs, prev = 0, None
    for ln in body.split("\n"):
        m = _GUTTER.match(ln)
        if not m:
            return None
        n = int(m.group(1))
        if prev is None or n != prev + 1:
            runs += 1
        prev = n
    return runs


def _norm(p: str, cwd: str | None) -> str:
    if not p.startswith("/") and cwd and not re.match(r"^[A-Za-z]:[\\/]", p):
        p = posixpath.join(cwd, p)
    if re.match(r"^[A-Za-z]:[\\/]", p):
        import ntpath

        return ntpath.normpath(p)
    return posixpath.normpath(p)


def _delivery(no: int, ts: str | None, flush_line: int, snippet) -> Delivery:
    if not isinstance(snippet, str):
        return Delivery(no, ts, flush_line, None, None, None, None, None, None, readable=False,
                        why=f"snippet is {type(snippet).__name__}, not a string")
    b = snippet.encode("utf-8", "surrogatepass")
    m = _TAIL.search(snippet)
    return Delivery(no, ts, flush_line, len(snippet), len(b), hashlib.sha256(b).hexdigest(), snippet == "",
                    int(m.group(1)) if m else None, _regions(snippet))


def audit_lane(lane: Lane) -> LaneReport:
    """One pass over a lane's bytes; parses only attachment, file-write tool_use and matching tool_result
    lines."""
    rep = LaneReport(lane)
    if not _mentions(lane.path, b"edited_text_file"):
        # most lanes carry no delivery at all: a block scan answers them without framing lines
        rep.framed = False
        return rep
    files: dict[str, FileReport] = {}
    flushes: list[Flush] = []
    writes: dict[str, tuple[str, Exit]] = {}      # tool_use_id -> (path, exit) awaiting its result
    cur: Flush | None = None                       # the flush being built (a run of attachment records)
    last_cwd: str | None = None

    def get(fn: str) -> FileReport:
        fr = files.get(fn)
        if fr is None:
            fr = files[fn] = FileReport(fn)
        return fr

    for ln in iter_lines(lane.path, stats=rep.read):
        raw = ln.raw
        rep.last_line = ln.no
        is_att = False
        if b"edited_text_file" in raw:
            obj = parse_line(raw, rep.read)
            if obj is None:
                m = _FILENAME_RAW.search(raw)
                fn = None
                if m:
                    try:
                        fn = orjson.loads(b'"' + m.group(1) + b'"')
                    except orjson.JSONDecodeError:
                        fn = None
                why = "line is not a readable JSON object"
                rep.read.malformed_lines.append(ln.no)
                if isinstance(fn, str):
                    d = Delivery(ln.no, None, ln.no, None, None, None, None, None, None, readable=False, why=why)
                    get(fn).deliveries.append(d)
                    if cur is None:
                        cur = Flush(ln.no, None)
                        flushes.append(cur)
                    cur.deliveries.append((fn, d))
                    is_att = True   # the record's kind is unknown; keep the run open rather than split it
                else:
                    rep.unreadable.append((ln.no, why))
                if not is_att:
                    cur = None
                continue
            att = obj.get("attachment")
            if obj.get("type") == "attachment" and isinstance(att, dict) and att.get("type") == "edited_text_file":
                is_att = True
                ts = obj.get("timestamp") if isinstance(obj.get("timestamp"), str) else None
                rep.last_timestamp = ts or rep.last_timestamp
                fn = att.get("filename")
                if not isinstance(fn, str) or not fn:
                    rep.unreadable.append((ln.no, "edited_text_file without a string filename"))
                else:
                    fn = _norm(fn, obj.get("cwd") if isinstance(obj.get("cwd"), str) else None)
                    if cur is None:
                        cur = Flush(ln.no, ts)
                        flushes.append(cur)
                    d = _delivery(ln.no, ts, cur.line, att.get("snippet"))
                    get(fn).deliveries.append(d)
                    cur.deliveries.append((fn, d))
            else:
                is_att = obj.get("type") == "attachment"
                _scan_other(obj, ln.no, writes, files, get, last_cwd, rep)
                last_cwd = _cwd(obj) or last_cwd
        elif b'"attachment"' in raw:
            obj = parse_line(raw, rep.read)
            is_att = obj is not None and obj.get("type") == "attachment"
        elif (b'"tool_use"' in raw and any(n in raw for n in _TOOL_NEEDLES)) or (
                writes and b'"tool_result"' in raw):
            obj = parse_line(raw, rep.read)
            if obj is not None:
                _scan_other(obj, ln.no, writes, files, get, last_cwd, rep)
                last_cwd = _cwd(obj) or last_cwd
        if not is_att:
            cur = None

    rep.flushes = flushes
    rep.files = sorted(files.values(), key=lambda f: (f.deliveries[0].line if f.deliveries else 1 << 62, f.filename))
    rep.files = [f for f in rep.files if f.deliveries]
    for f in rep.files:
        _episodes(f)
    return rep


def _mentions(path, needle: bytes, block: int = 1 << 22) -> bool:
    """Whether the file's bytes contain `needle` (read in blocks: the resident size stays small)."""
    keep = len(needle) - 1
    tail = b""
    with open(path, "rb") as fh:
        while True:
            chunk = fh.read(block)
            if not chunk:
                return False
            if needle in chunk or needle in tail + chunk[:keep]:
                return True
            tail = (tail + chunk[-keep:])[-keep:]


def _cwd(obj: dict) -> str | None:
    c = obj.get("cwd")
    return c if isinstance(c, str) and c else None


def _scan_other(obj: dict, no: int, writes: dict, files: dict, get, last_cwd: str | None, rep: LaneReport) -> None:
    msg = obj.get("message")
    content = msg.get("content") if isinstance(msg, dict) else None
    if not isinstance(content, list):
        return
    t = obj.get("type")
    ts = obj.get("timestamp") if isinstance(obj.get("timestamp"), str) else None
    if t == "assistant":
        cwd = _cwd(obj) or last_cwd
        for b in content:
            if not isinstance(b, dict) or b.get("type") != "tool_use" or not isinstance(b.get("name"), str) \
                    or b.get("name") not in WRITE_TOOLS:
                continue
            inp = b.get("input") if isinstance(b.get("input"), dict) else {}
            p = R.file_tool_path(inp)
            if not isinstance(p, str) or not p:
                continue
            x = Exit(no, b["name"], b.get("id") if isinstance(b.get("id"), str) else None, ts)
            path = _norm(p, cwd)
            get(path).writes.append(x)
            if x.tool_use_id:
                writes[x.tool_use_id] = (path, x)
    elif t == "user":
        for b in content:
            if not isinstance(b, dict) or b.get("type") != "tool_result":
                continue
            hit = writes.pop(b.get("tool_use_id"), None) if isinstance(b.get("tool_use_id"), str) else None
            if hit is None:
                continue
            _, x = hit
            x.result_line = no
            x.is_error = b.get("is_error") is True


def _episodes(f: FileReport) -> None:
    """Split the deliveries at successful structured writes; mark repeats and growth per episode."""
    ok_writes = [w for w in f.writes if w.is_error is not True]   # no result recorded (None) still counts
    ep, prev = 0, None
    wi = 0
    for d in f.deliveries:
        closed = None
        while wi < len(ok_writes) and ok_writes[wi].line < d.line:
            if prev is not None and ok_writes[wi].line > prev.line and closed is None:
                closed = ok_writes[wi]
            wi += 1
        if closed is not None:
            f.exits.append(closed)
            ep += 1
            prev = None
        d.episode = ep
        if prev is None:
            d.repeat = False if d.readable else None
            d.grew = False if d.readable else None
        else:
            if d.readable and prev.readable:
                d.repeat = d.sha256 == prev.sha256
                d.grew = d.chars > prev.chars
            else:
                d.repeat = None
                d.grew = None
        prev = d
    # the write that ends the last episode (if any)
    if f.deliveries:
        last = f.deliveries[-1].line
        for w in ok_writes:
            if w.line > last:
                f.exits.append(w)
                break


def reinjection(scope: Scope, subagents: bool = True) -> AuditResult:
    """Audit every lane in `scope` (subagent lanes too unless `subagents` is False)."""
    res = AuditResult(problems=[])
    for s in scope.sessions:
        lanes = [scope.explicit_lanes[s.session_id]] if s.session_id in scope.explicit_lanes else s.lanes(subagents)
        for lane in lanes:
            try:
                res.lanes.append(audit_lane(lane))
            except OSError as exc:
                res.problems.append(Problem(str(lane.path), exc.strerror or str(exc)))
    # the scope's problems last: listing the sessions' lanes (subagents/) adds to them
    res.problems = list(scope.problems) + [p for p in res.problems if p not in scope.problems]
    return res
