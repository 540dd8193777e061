"""Claude Code records in the shared shape (`providers.base.Record`).

Claude Code keeps its deep model (labels, turns, survival: `sessionsift.providers.claude.model`) for its own
commands; this mapping is what cross-provider consumers read. One physical line can hold several
content blocks: each block becomes one Record addressed `L<n>#<i>` (i = the block's 0-based index
in `message.content`); a record that is the whole line is `L<n>`.

| Claude record | shared kind |
|---|---|
| user line whose primary label is `user.message` (genuine prose; a subagent's seed prompt) | `prompt` |
| user line with any other label (notifications, commands, compaction summary, interrupts ...) | `meta` (role user) |
| `tool_result` block (also `user.answer` / `user.rejection` carriers) | `tool_result` (role tool) |
| assistant `text` block | `message` |
| assistant `thinking` / `redacted_thinking` block | `reasoning` |
| assistant `tool_use` block | `tool_call` (call_id, tool_name, tool_input) |
| system, attachment, snapshot, queue, title, mode ... lines | `meta` (role harness) |
| a line type outside KNOWN_TYPES | `unknown` (counted in `ReadReport.unknown_kinds`) |

Tokens: an assistant line's `message.usage` rides on its first block record with
`dedup_key = message.id` (Claude writes one line per content block, each repeating the message's
usage; consumers take the per-field maximum per key, as `core/stats` does). A line whose `uuid`
appeared earlier in the same file is a replay: its records carry `copy_of` (the first line's
locator) and count once.

Not read by this streaming mapping (the deep model has them): survival, and the draft relabel
(a superseded draft, `user.unsent` in the deep model, reads here as a `prompt`: a person typed it).
`turn` is the number of prompts so far in the file (not the deep model's opener count).
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

from ..base import FileChange, Problem, ReadReport, Record, Tokens

KNOWN_TYPES = frozenset({
    "user", "assistant", "system", "attachment", "file-history-snapshot", "file-history-delta",
    "queue-operation", "last-prompt", "mode", "permission-mode", "ai-title", "agent-name",
    "summary", "fork-context-ref", "atis-latch", "bridge-session", "cost-state", "continued-in",
})
"""The line types Claude Code's deep model knows (kept equal to `core.stats.KNOWN_TYPES` by a test)."""


def _usage(msg: dict) -> Tokens | None:
    u = msg.get("usage")
    if not isinstance(u, dict):
        return None

    def g(k: str) -> int | None:
        v = u.get(k)
        return v if isinstance(v, int) and not isinstance(v, bool) else None

    mid = msg.get("id")
    return Tokens(input=g("input_tokens"), output=g("output_tokens"), cache_read=g("cache_read_input_tokens"),
                  cache_write=g("cache_creation_input_tokens"),
                  dedup_key=mid if isinstance(mid, str) else None)


def _file_changes(name: object, inp: object) -> tuple[FileChange, ...]:
    from .model.record import MUTATING_FILE_TOOLS, file_tool_path

    if not isinstance(name, str) or name not in MUTATING_FILE_TOOLS:
        return ()
    path = file_tool_path(inp)
    if path is None:
        return ()
    if name == "Write":
        content = inp.get("content") if isinstance(inp, dict) else None
        # create or update is only known from the result: the content is a complete view either way
        return (FileChange(path, "unknown", new_content=content if isinstance(content, str) else None),)
    return (FileChange(path, "update"),)


def read_lane(path: Path, session_id: str, lane: str, report: ReadReport, raw: bool = False,
              provider: str = "claude-code") -> Iterator[Record]:
    """The shared records of one Claude Code transcript file, streamed."""
    from .model import record as R
    from ...read.lines import ReadStats, read_records

    st = ReadStats()
    seen: dict[str, str] = {}
    prompts = 0
    try:
        for ln, obj in read_records(path, st):
            no = ln.no
            loc = f"L{no}"
            copy_of = None
            u = obj.get("uuid")
            if isinstance(u, str):
                first = seen.setdefault(u, loc)
                if first != loc:
                    copy_of = first
            t = obj.get("type")
            ts = obj.get("timestamp") if isinstance(obj.get("timestamp"), str) else None
            base = dict(provider=provider, session_id=session_id, path=str(path), line=no, offset=ln.offset,
                        length=len(ln.raw), lane=lane, instant=ts, raw=obj if raw else None)
            recs: list[Record] = []
            if t == "assistant":
                msg = R.get_message(obj) or {}
                model = msg.get("model") if isinstance(msg.get("model"), str) else None
                content = msg.get("content")
                blocks = content if isinstance(content, list) else []
                for i, b in enumerate(blocks):
                    if not isinstance(b, dict):
                        continue
                    bt = b.get("type")
                    bl = f"{loc}#{i}"
                    if bt == "text":
                        recs.append(Record(locator=bl, role="assistant", kind="message", native="assistant/text",
                                           text=str(b.get("text", "")), model=model, **base))
                    elif bt in ("thinking", "redacted_thinking"):
                        tx = b.get("thinking") if bt == "thinking" else "[redacted thinking]"
                        recs.append(Record(locator=bl, role="assistant", kind="reasoning", native=f"assistant/{bt}",
                                           text=tx if isinstance(tx, str) else None, model=model, **base))
                    elif bt == "tool_use":
                        name = b.get("name")
                        cid = b.get("id")
                        recs.append(Record(locator=bl, role="assistant", kind="tool_call", native="assistant/tool_use",
                                           tool_name=name if isinstance(name, str) else None,
                                           tool_input=b.get("input"), call_id=cid if isinstance(cid, str) else None,
                                           file_changes=_file_changes(name, b.get("input")), model=model, **base))
                    else:
                        recs.append(Record(locator=bl, role="assistant", kind="meta", native=f"assistant/{bt}",
                                           model=model, **base))
                if not recs:
                    recs.append(Record(locator=loc, role="assistant", kind="meta", native="assistant",
                                       model=model, **base))
                tok = _usage(msg)
                if tok is not None:
                    recs[0].tokens = tok
            elif t == "user":
                content = R.content_of(obj)
                # indexes into the content list as written (non-dict items keep their place)
                trs = [(i, b) for i, b in enumerate(content) if isinstance(b, dict)
                       and b.get("type") == "tool_result"] if isinstance(content, list) else []
                if trs:
                    for i, b in trs:
                        cid = b.get("tool_use_id")
                        err = b.get("is_error")
                        recs.append(Record(locator=f"{loc}#{i}", role="tool", kind="tool_result",
                                           native="user/tool_result", text=R.tool_result_text(b),
                                           call_id=cid if isinstance(cid, str) else None,
                                           is_error=err if isinstance(err, bool) else None, **base))
                else:
                    labels = R.classify(obj)
                    kind = "prompt" if labels[:1] == ["user.message"] else "meta"
                    text = R.record_text(obj)
                    recs.append(Record(locator=loc, role="user", kind=kind, native="user", text=text, **base))
            else:
                known = isinstance(t, str) and t in KNOWN_TYPES
                native = t if isinstance(t, str) else "(no type)"
                if not known:
                    report.unknown_kinds[native] += 1
                recs.append(Record(locator=loc, role="harness", kind="meta" if known else "unknown",
                                   native=native, text=R.record_text(obj) or None, **base))
            for r in recs:
                if r.kind == "prompt" and copy_of is None:
                    prompts += 1
                r.turn = prompts or None
                if copy_of is not None:
                    r.copy_of = copy_of if "#" not in r.locator else f"{copy_of}#{r.locator.split('#', 1)[1]}"
                    report.duplicates += 1
                report.records += 1
                yield r
    except OSError as exc:
        report.problems.append(Problem(str(path), exc.strerror or str(exc)))
    finally:
        report.add_read(path, st, files=st.files)
