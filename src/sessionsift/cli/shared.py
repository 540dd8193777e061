"""Rendering of the shared records (providers.base.Record) for every provider but Claude Code:
JSON rows (docs/json.md "Shared records") and one escaped text line per record."""

from __future__ import annotations

import shlex

from ..providers.base import FileChange, Record, SessionRef, Tokens
from ..timefmt import instant, short_local
from .output import clip, esc


def root_args(sel, provider: str) -> str:
    """The root flag that makes a refetch find this provider's session again ('' when its root
    came from the environment or the default: the same rule finds it again)."""
    from ..providers.scope import FLAGS

    e = sel.survey.entry(provider)
    if e is None or e.root is None or e.root.path is None or not e.root.explicit:
        return ""
    p = shlex.quote(str(e.root.path))
    flag = FLAGS.get(provider)
    return f" {flag} {p}" if flag else f" --root {shlex.quote(provider + '=' + str(e.root.path))}"


def refetch(sel, ref: SessionRef, r: Record) -> str:
    """A ready-to-run `sessionsift show` that fetches this record again: by line for a
    line-based store, by locator for a database row."""
    if r.line is not None:
        addr = f"--line {r.line}"
    else:
        addr = f"--locator {shlex.quote(r.locator)}"
    return f"sessionsift show {shlex.quote(ref.session_id)} {addr}{root_args(sel, ref.provider)}"


def session_fields(ref: SessionRef, r: Record | None = None) -> dict:
    lane = r.lane if r is not None else "main"
    if lane != "main":
        is_sub, parent = True, ref.session_id
    else:
        is_sub, parent = ref.is_subagent, ref.parent_session_id
    return {"provider": ref.provider, "session_id": ref.session_id, "lane": lane, "is_subagent": is_sub,
            "parent_session_id": parent}


def _tokens(t: Tokens | None) -> dict | None:
    if t is None:
        return None
    return {"input": t.input, "output": t.output, "cache_read": t.cache_read, "cache_write": t.cache_write,
            "reasoning": t.reasoning, "total": t.total, "dedup_key": t.dedup_key, "cumulative": t.cumulative}


def change_json(c: FileChange, content: bool = False) -> dict:
    d = {"path": c.path, "action": c.action, "move_to": c.move_to,
         "has_new_content": c.new_content is not None, "has_old_content": c.old_content is not None,
         "has_diff": c.diff is not None}
    if content:
        d.update(new_content=c.new_content, old_content=c.old_content, diff=c.diff)
    return d


def record_row(sel, ref: SessionRef, r: Record, *, raw: bool = False, content: bool = False) -> dict:
    d = {
        **session_fields(ref, r),
        "path": r.path, "line": r.line, "locator": r.locator, "timestamp": instant(r.instant),
        "role": r.role, "record_kind": r.kind, "native": r.native, "turn": r.turn,
        "text": r.text, "tool_name": r.tool_name, "tool_input": r.tool_input, "call_id": r.call_id,
        "exit_code": r.exit_code, "is_error": r.is_error,
        "file_changes": [change_json(c, content) for c in r.file_changes],
        "tokens": _tokens(r.tokens), "model": r.model, "copy_of": r.copy_of, "rewound": r.rewound,
        "truncated": r.truncated,
        "refetch": refetch(sel, ref, r),
    }
    if raw:
        d["record"] = r.raw
    return d


def record_text_line(r: Record, width: int = 200) -> str:
    """`<locator> [<kind> <native>] <time>  <text>` on one escaped line."""
    what = r.text
    if r.kind == "tool_call":
        from ..search.records import record_text

        what = record_text(r)
    tail = []
    if r.exit_code is not None:
        tail.append(f"exit {r.exit_code}")
    if r.is_error:
        tail.append("error")
    if r.copy_of:
        tail.append(f"copy of {r.copy_of}")
    if r.truncated:
        tail.append("cut by its client: the rest is not on disk")
    extra = f" ({', '.join(tail)})" if tail else ""
    tool = f" {esc(r.tool_name)}" if r.tool_name else ""
    return f"{esc(r.locator)} [{r.kind} {esc(r.native)}{tool}]{extra} {short_local(r.instant)}  {clip(what, width)}"
