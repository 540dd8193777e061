"""Codex CLI rollout shapes: the constants and pure conversions the reader uses (usage -> Tokens,
change records and patch text -> FileChange, output text -> exit code). See reader.py and
docs/providers.md ("Codex CLI")."""

from __future__ import annotations

import re

import orjson

from ..base import FileChange, Tokens

OUTCOME_WINDOW = 16
"""Lines a call waits after its output for a late outcome event."""
ECHO_WINDOW = 16
"""Lines an echo written before its original waits for it."""
MAX_HELD = 4096
"""Records held back at most; past that the oldest is released without its outcome (noted)."""

KNOWN_TOP = {"session_meta", "response_item", "event_msg", "turn_context", "world_state", "compacted",
             "token_usage_record", "inter_agent_communication", "inter_agent_communication_metadata"}
META_EVENTS = {"task_started", "task_complete", "turn_started", "turn_complete", "thread_settings_applied",
               "turn_aborted", "thread_rolled_back", "entered_review_mode", "exited_review_mode",
               "thread_goal_updated", "sub_agent_activity", "token_count", "error", "warning",
               "session_configured"}
TURN_END_EVENTS = {"task_complete", "turn_complete", "turn_aborted"}
SYNTHETIC_USER_PREFIXES = ("<environment_context>", "<user_instructions>", "# AGENTS.md instructions",
                           "<INSTRUCTIONS>", "<turn_aborted>", "<subagent_notification>",
                           "<user_shell_command>", "<skill>", "<permissions instructions>",
                           "<collaboration_mode>", "<personality_spec>",
                           "Another language model started to solve this problem")
EXIT_RES = (re.compile(r"Process exited with code (-?\d+)"), re.compile(r"^Exit code: (-?\d+)", re.M))
PATCH_REJECTED = "apply_patch verification failed"
"""How 0.169/0.171 answer a patch whose context is not in the file (no FileChange event follows)."""
CALL_TYPES = {"function_call": None, "custom_tool_call": None, "local_shell_call": "local_shell",
              "tool_search_call": "tool_search", "web_search_call": "web_search",
              "image_generation_call": "image_generation"}
OUTPUT_TYPES = {"function_call_output", "custom_tool_call_output", "tool_search_output"}

TRUNCATION_MARKER = "(?:\u2026|\\\\u2026)[0-9]+ (?:tokens|chars) truncated(?:\u2026|\\\\u2026)".encode()
TRUNCATED_TEXT = re.compile("\u2026[0-9]+ (?:tokens|chars) truncated\u2026")
"""Where the client cut a tool output it sent the model, keeping its head and tail
(codex-rs/core/src/truncate.rs: ``…N tokens truncated…``, ``…N chars truncated…`` under the bytes
policy; measured: `seq 1 60000` -> ``…77224 tokens truncated…``, after a ``Warning: truncated output
(original token count: N)`` header). The middle is not on disk: the rollout's other copy, the
``item_completed`` event's ``aggregated_output``, is cut too (``... command output truncated for
persistence ...``)."""


def _text_parts(content) -> str | None:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return None
    out = [p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)]
    return "\n".join(out) if out else None


def _output_text(out) -> str | None:
    if isinstance(out, str):
        return out
    if isinstance(out, dict):  # {"content": ..., "success": ...} in some releases
        return _output_text(out.get("content")) or _text_parts(out.get("content_items"))
    return _text_parts(out)


def _int(v) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def tokens_of(u: dict | None, dedup_key: str | None, cumulative: bool = False) -> Tokens | None:
    """Codex usage -> Tokens (input excludes cached; reasoning is within output)."""
    if not isinstance(u, dict):
        return None
    inp, cached = _int(u.get("input_tokens")), _int(u.get("cached_input_tokens"))
    if cached is None and isinstance(u.get("input_tokens_details"), dict):
        cached = _int(u["input_tokens_details"].get("cached_tokens"))
    out = _int(u.get("output_tokens"))
    reasoning = _int(u.get("reasoning_output_tokens"))
    if reasoning is None and isinstance(u.get("output_tokens_details"), dict):
        reasoning = _int(u["output_tokens_details"].get("reasoning_tokens"))
    fresh = None
    if inp is not None:
        fresh = inp - (cached or 0)
        if fresh < 0:
            fresh = None
    return Tokens(input=fresh, output=out, cache_read=cached, cache_write=_int(u.get("cache_write_input_tokens")),
                  reasoning=reasoning, total=_int(u.get("total_tokens")), dedup_key=dedup_key,
                  cumulative=cumulative)


def _file_changes(changes) -> tuple[FileChange, ...]:
    """FileChange items from ``{path: {type: add|update|delete, content|unified_diff, move_path}}``
    (also the externally tagged ``{path: {"add": {...}}}`` shape of older releases)."""
    if not isinstance(changes, dict):
        return ()
    out = []
    for path, ch in changes.items():
        if not isinstance(ch, dict):
            out.append(FileChange(str(path), "unknown"))
            continue
        kind = ch.get("type")
        body = ch
        if kind is None and len(ch) == 1:
            kind, body = next(iter(ch.items()))
            body = body if isinstance(body, dict) else {}
        move = body.get("move_path")
        if kind == "add":
            out.append(FileChange(str(path), "create", new_content=body.get("content")))
        elif kind == "delete":
            out.append(FileChange(str(path), "delete", old_content=body.get("content")))
        elif kind == "update":
            out.append(FileChange(str(path), "move" if move else "update", diff=body.get("unified_diff"),
                                  move_to=str(move) if move else None))
        else:
            out.append(FileChange(str(path), "unknown", diff=body.get("unified_diff")))
    return tuple(out)


def changes_from_patch(text: str | None) -> tuple[FileChange, ...]:
    """FileChange items from apply_patch text (``*** Add File:`` with its ``+`` lines as the whole new
    content, ``*** Update File:`` [``*** Move to:``] with its hunks as ``diff``, ``*** Delete File:``)."""
    if not isinstance(text, str):
        return ()
    out: list[FileChange] = []
    cur: list = []  # [action, path, lines, move_to]

    def flush():
        if not cur:
            return
        action, path, body, move = cur
        if action == "create":
            out.append(FileChange(path, "create", new_content="".join(ln[1:] + "\n" for ln in body if ln.startswith("+"))))
        elif action == "delete":
            out.append(FileChange(path, "delete"))
        else:
            out.append(FileChange(path, "move" if move else "update", diff="".join(ln + "\n" for ln in body),
                                  move_to=move))
        cur.clear()

    for ln in text.splitlines():
        for tag, action in (("*** Add File: ", "create"), ("*** Update File: ", "update"),
                            ("*** Delete File: ", "delete")):
            if ln.startswith(tag):
                flush()
                cur.extend([action, ln[len(tag):].strip(), [], None])
                break
        else:
            if ln.startswith("*** Move to: ") and cur:
                cur[3] = ln[len("*** Move to: "):].strip()
            elif ln.startswith("*** End Patch") or ln.startswith("*** Begin Patch"):
                flush()
            elif cur:
                cur[2].append(ln)
    flush()
    return tuple(out)


def _exit_from_output(text: str | None) -> int | None:
    if not text:
        return None
    if text.startswith("{"):
        try:
            o = orjson.loads(text)
            if isinstance(o, dict) and isinstance(o.get("metadata"), dict):
                return _int(o["metadata"].get("exit_code"))
        except orjson.JSONDecodeError:
            pass
    head = text[:2000]
    for r in EXIT_RES:
        m = r.search(head)
        if m:
            return int(m.group(1))
    return None
