"""MEANING: one record's shape -> labels, text, and the facts other commands key on.

Everything here works on the parsed JSON object of one line. Lane-level facts (survival,
turn numbers, drafts) live in `lane.py`.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any, Iterable

import orjson

# --- record-shape constants (turn-boundary, classification, elicitation claims) -------------

INTERRUPT_USER = "[Request interrupted by user]"
INTERRUPT_TOOL = "[Request interrupted by user for tool use]"
CONTINUATION_PREFIX = "Continue from where you left off."
LOOP_CHECK = "# Autonomous loop check"
LOOP_DRIVER = (
    "# Autonomous loop tick",
    "Run the autonomous check using the loop instructions established earlier",
)
HOOK_PREFIXES = ("Stop hook feedback:", "<local-command-caveat>")
EDIT_RETRY = "The last Edit failed because the target file was modified"
IMAGE_REF_PREFIXES = ("[Image: ", "[Image source: ")
RELAY_PREAMBLES = (
    "Another Claude session sent a message while you were working:",
    "A peer session sent a message while you were working:",
    "Another Claude session sent a message:",
)
REJECTION_MARKER = "The user doesn't want to proceed with this tool use."
REJECTION_TYPED = "To tell you how to proceed, the user said:"
# Live answer phrasings of 2.1.258 (TURN-009, ELI-004) plus the retired pre-2.1.258 one. Only a
# fallback for a carrier with no toolUseResult: the structured answers decide first (ELI-003).
AUQ_ANSWER_MARKERS = (
    "Your questions have been answered:",
    "The user answered:",
    "The user responded:",
    "User has answered your questions:",
)
# A fired timer tick whose prompt is a loop sentinel (CLS-014: ScheduleWakeup uses the -dynamic
# form, CronCreate loops the plain one).
LOOP_SENTINELS = ("<<autonomous-loop-dynamic>>", "<<autonomous-loop>>")
AGENTS_STOPPED = re.compile(
    r'^(Background agent ".*" was stopped by the user\.|\d+ background agents? (was|were) stopped by the user)',
    re.S,
)
SPAWN_TOOLS = frozenset({"Agent", "Task", "Workflow"})
# The structured file-writing tools and where each carries its written payload (FH-037, REC-083).
WRITE_PAYLOAD_KEY = {"Write": "content", "Edit": "new_string", "MultiEdit": "edits", "NotebookEdit": "new_source"}
MUTATING_FILE_TOOLS = frozenset(WRITE_PAYLOAD_KEY)


def file_tool_path(inp: object) -> str | None:
    """The target of a file tool call: `input.file_path`, or `input.notebook_path` (REC-079)."""
    if not isinstance(inp, dict):
        return None
    p = inp.get("file_path")
    if not isinstance(p, str):
        p = inp.get("notebook_path")
    return p if isinstance(p, str) else None
SECTION_OPEN = re.compile(r"<(task-notification|teammate-message|agent-message)(?=[\s>/])")
TASK_TAG = re.compile(r"<(task-id|tool-use-id|output-file|status|summary|event|result)>(.*?)</\1>", re.S)
COMMAND_NAME = re.compile(r"<command-name>(.*?)</command-name>", re.S)
COMMAND_ARGS = re.compile(r"<command-args>(.*?)</command-args>", re.S)
# A typed slash command as the client first writes it (plain string "/compact", before its
# wrapper record): a single leading token of command-name characters, no second slash in it.
TYPED_SLASH = re.compile(r"^/[A-Za-z][A-Za-z0-9:_-]*(?:\s.*)?$", re.S)


def get_message(obj: dict) -> dict | None:
    m = obj.get("message")
    return m if isinstance(m, dict) else None


def content_of(obj: dict) -> Any:
    m = get_message(obj)
    return m.get("content") if m else None


def blocks_of(obj: dict) -> list[dict]:
    c = content_of(obj)
    if isinstance(c, list):
        return [b for b in c if isinstance(b, dict)]
    return []


def string_text(obj: dict) -> str | None:
    """The prose of a user record: string content, or its text blocks joined."""
    c = content_of(obj)
    if isinstance(c, str):
        return c
    if isinstance(c, list):
        texts = [b.get("text") for b in c if isinstance(b, dict) and b.get("type") == "text"]
        texts = [t for t in texts if isinstance(t, str)]
        if texts:
            return "\n".join(texts)
    return None


def tool_result_text(block: dict) -> str:
    c = block.get("content")
    if isinstance(c, str):
        return c
    if isinstance(c, list):
        parts = []
        for p in c:
            if isinstance(p, dict):
                if p.get("type") == "text" and isinstance(p.get("text"), str):
                    parts.append(p["text"])
                elif p.get("type") == "tool_reference":
                    parts.append(str(p.get("tool_name", "")))
        return "\n".join(parts)
    return ""


def has_tool_result(obj: dict) -> bool:
    return any(b.get("type") == "tool_result" for b in blocks_of(obj))


def tool_uses(obj: dict) -> list[dict]:
    return [b for b in blocks_of(obj) if b.get("type") == "tool_use"]


def tool_results(obj: dict) -> list[dict]:
    return [b for b in blocks_of(obj) if b.get("type") == "tool_result"]


# --- narration: the tag inside the thinking signature (NAR-002, NAR-006) ---------------------


def _pb_last_ld(buf: bytes, field: int) -> bytes | None:
    """The LAST length-delimited field `field` at this protobuf level; None if the scan overruns."""
    i, n, found = 0, len(buf), None
    while i < n:
        key, i = _varint(buf, i)
        if key is None:
            return None
        fno, wt = key >> 3, key & 7
        if wt == 0:
            _, i = _varint(buf, i)
            if i is None:
                return None
        elif wt == 1:
            i += 8
        elif wt == 5:
            i += 4
        elif wt == 2:
            ln, i = _varint(buf, i)
            if ln is None or i + ln > n:
                return None
            if fno == field:
                found = buf[i : i + ln]
            i += ln
        else:
            return None
        if i > n:
            return None
    return found


def _varint(buf: bytes, i: int) -> tuple[int | None, int]:
    shift = 0
    val = 0
    while i < len(buf):
        b = buf[i]
        i += 1
        val |= (b & 0x7F) << shift
        if not b & 0x80:
            return val, i
        shift += 7
        if shift > 63:
            return None, i
    return None, i


# `narration` base64-encoded at its three stream alignments (NAR-007): a standard base64 text whose
# decoding contains the bytes `narration` contains one of these (each character of a needle encodes
# six bits that lie wholly inside `narration`, so neighbouring bytes cannot change it).
NARRATION_B64 = ("bmFycmF0aW9u", "5hcnJhdGlv", "uYXJyYXRp")
_B64_ALPHABET = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


def is_narration(signature: str) -> bool:
    """`signature_tag(signature) == "narration"`, decoding only signatures that can say so.

    The needle test is exact for a standard base64 text (alphabet characters, `=` padding at the
    end only). Anything else (URL-safe characters, whitespace, inner padding: the lenient decoder
    skips or reinterprets those) is decoded in full, as before."""
    if any(n in signature for n in NARRATION_B64):
        return signature_tag(signature) == "narration"
    try:
        raw = signature.encode("ascii")
    except UnicodeEncodeError:
        return signature_tag(signature) == "narration"
    if raw.rstrip(b"=").translate(None, _B64_ALPHABET):
        return signature_tag(signature) == "narration"
    return False


def signature_tag(signature: str) -> str | None:
    """Decode a thinking signature's kind tag (`thinking` / `narration` / other); None if untagged."""
    try:
        raw = base64.b64decode(signature + "=" * (-len(signature) % 4), validate=False)
    except (binascii.Error, ValueError):
        return None
    cur: bytes | None = raw
    for f in (2, 1, 8):
        if cur is None:
            return None
        cur = _pb_last_ld(cur, f)
    if cur is None:
        return None
    try:
        return cur.decode("utf-8")
    except UnicodeDecodeError:
        return None


# --- task notifications -------------------------------------------------------------------


def parse_task_notification(text: str) -> list[dict[str, str]]:
    """Every <task-notification> section in a record (CLS-006: records batch several)."""
    out = []
    for sec in re.finditer(r"<task-notification>(.*?)</task-notification>", text, re.S):
        fields: dict[str, str] = {}
        for m in TASK_TAG.finditer(sec.group(1)):
            fields.setdefault(m.group(1), m.group(2).strip())
        out.append(fields)
    return out


def notification_kind(summary: str, task_id: str = "") -> str:
    """Leaf suffix from the summary's leading classifier, never the quoted name (CLS-004)."""
    s = summary.lstrip().lower()
    if task_id.startswith("__orphan_summary__"):
        return "task"
    if s.startswith("background command "):
        return "background-command"
    if s.startswith("monitor event") or s.startswith("monitor ") or s.startswith("[monitor"):
        return "monitor"
    if s.startswith("agent ") or s.startswith("dynamic workflow ") or s.startswith("workflow "):
        return "subagent"
    return "task"


def notification_label_text(fields: dict[str, str]) -> str:
    """`[<kind> <task-id> <status>] <summary>`: the rendered form, never raw XML."""
    kind = notification_kind(fields.get("summary", ""), fields.get("task-id", ""))
    # status slot: <status>, else the <event> the pulse really carries (CLS-005), else unknown
    ev = fields.get("event")
    status = fields.get("status") or ev or "?"
    summ = fields.get("summary", "")
    tail = f" {ev}" if ev and fields.get("status") and ev not in summ else ""
    return f"[{kind} {fields.get('task-id', '?')} {status}] {summ}{tail}".rstrip()


# --- classification -----------------------------------------------------------------------

GATED_SYSTEM = {"turn_duration": "harness.meta.turn-duration",
                "away_summary": "harness.meta.away-summary",
                "stop_hook_summary": "harness.meta.stop-hooks"}


def is_answered_auq(obj: dict, block: dict) -> bool:
    """An answered AskUserQuestion carrier (TURN-010, ELI-002/003): a non-errored tool_result and a
    non-empty structured answer (the `answers` map, or the freeform `response` 2.1.258 writes when
    the operator typed instead of selecting). An empty map (the idle auto-resolve, ELI-007) is no
    answer. Only a carrier with no toolUseResult at all falls back to the answer phrasings."""
    if block.get("is_error"):
        return False
    tur = obj.get("toolUseResult")
    if isinstance(tur, dict):
        if isinstance(tur.get("answers"), dict) and tur["answers"]:
            return True
        r = tur.get("response")
        return isinstance(r, str) and bool(r.strip())
    if tur is None:
        return tool_result_text(block).lstrip().startswith(AUQ_ANSWER_MARKERS)
    return False


def is_typed_rejection(block: dict) -> bool:
    t = tool_result_text(block)
    return t.startswith(REJECTION_MARKER) and REJECTION_TYPED in t


def _strip_preamble(s: str) -> tuple[str, bool]:
    for p in RELAY_PREAMBLES:
        if s.startswith(p):
            return s[len(p):].lstrip(), True
    return s, False


def sections(text: str) -> list[tuple[str, str]]:
    """The harness sections of one record, recognised only at a BOUNDARY (CLS-006, TURN-017):
    content start, right after a relay preamble, or right after a prior section's close tag.
    Returns `(tag, inner)` pairs (inner includes the open tag's attributes); a tag quoted mid-prose,
    or inside an earlier section's span (a peer tag inside a notification's <result>), is not a
    section. [] when the content does not open with one."""
    s, _ = _strip_preamble(text.lstrip())
    out: list[tuple[str, str]] = []
    while True:
        m = SECTION_OPEN.match(s)
        if m is None:
            return out
        tag = m.group(1)
        close = f"</{tag}>"
        end = s.find(close, m.end())
        if end < 0:
            out.append((tag, s[m.end():]))
            return out
        out.append((tag, s[m.end():end]))
        s, _ = _strip_preamble(s[end + len(close):].lstrip())


def _peer_label(inner: str) -> str:
    """A peer section's body that is a JSON object with a `type` is a control signal (CLS-011)."""
    body = inner.split(">", 1)[1].strip() if ">" in inner else inner.strip()
    if body.startswith("{"):
        try:
            v = orjson.loads(body)
        except orjson.JSONDecodeError:
            v = None
        if isinstance(v, dict) and isinstance(v.get("type"), str):
            return "agent.communication.signal"
        if v is None and '"type"' in body[:200]:
            return "agent.communication.signal"
    return "agent.communication.inbox"


def section_labels(secs: list[tuple[str, str]]) -> list[str]:
    """Labels of every section, unioned in order of first appearance (CLS-006)."""
    out: list[str] = []
    for tag, inner in secs:
        if tag == "task-notification":
            f = parse_task_notification(f"<task-notification>{inner}</task-notification>")
            f0 = f[0] if f else {}
            labs = ["harness.notification." + notification_kind(f0.get("summary", ""), f0.get("task-id", ""))]
            if "result" in f0:  # a background agent's report: also an inbound child message (CLS-003)
                labs.append("agent.communication.inbox")
        else:
            labs = [_peer_label(inner)]
        for lab in labs:
            if lab not in out:
                out.append(lab)
    return out


def user_string_labels(text: str, is_meta: bool) -> list[str]:
    """Every label of a user record whose content is prose (string or text blocks); [] = unmodelled."""
    s = text.lstrip()
    if is_meta:
        if s.startswith(CONTINUATION_PREFIX):  # bare, or one of the longer variants (TURN-004)
            return ["harness.schedule.continuation"]
        if s.startswith(LOOP_CHECK) or s.strip() in LOOP_SENTINELS:
            return ["harness.schedule.wakeup"]
        if any(s.startswith(p) for p in LOOP_DRIVER):
            return ["harness.meta.loop"]
        if any(s.startswith(p) for p in HOOK_PREFIXES) or EDIT_RETRY in s:
            return ["harness.meta.hook"]
        secs = sections(s)
        if not secs and "\n<task-notification>" in s:
            # a pulse behind a hook-written preamble line (BG-024) or delivered to an idle
            # subagent lane (BG-014): isMeta, so harness-authored; the pulse starts a line
            secs = sections(s[s.index("\n<task-notification>"):])
        if secs:
            return section_labels(secs)
        if _strip_preamble(s)[1]:
            return ["agent.communication.inbox"]
        return []  # image refs (CLS-017), skill preambles, custom-prompt ticks: unmodelled
    if text == INTERRUPT_USER:  # exact content only (TURN-005): a prompt quoting it is prose
        return ["harness.interrupt.user"]
    if text == INTERRUPT_TOOL:
        return ["harness.interrupt.tool"]
    if s.startswith("<local-command-stdout>") or s.startswith("<local-command-stderr>"):
        return ["harness.command.stdout"]
    if s.startswith("<command-name>") or s.startswith("<command-message>"):
        # typed prose after the command rides <command-args> (TURN-008): also operator prose
        m = COMMAND_ARGS.search(s)
        if m and m.group(1).strip():
            return ["harness.command.invocation", "user.message"]
        return ["harness.command.invocation"]
    if TYPED_SLASH.match(text):
        return ["harness.command.invocation"]
    if s[:1] == "<" or s[:1] == "A":
        secs = sections(s)
        if secs:
            return section_labels(secs)
        if _strip_preamble(s)[1]:
            return ["agent.communication.inbox"]
    if AGENTS_STOPPED.match(s):
        return ["harness.notification.subagent"]
    if s.startswith(IMAGE_REF_PREFIXES) and s.endswith("]") and "\n" not in s:
        return []  # the harness's image reference (CLS-017); `[Image #N]` stays operator prose
    return ["user.message"]


def user_string_label(text: str, is_meta: bool) -> str | None:
    """Primary label for a user record whose content is prose (string or text blocks)."""
    labs = user_string_labels(text, is_meta)
    return labs[0] if labs else None


def classify(obj: dict) -> list[str]:
    """The labels of one record, primary first. [] = unmodelled (never a crash)."""
    t = obj.get("type")
    if t == "assistant":
        labels: list[str] = []
        for b in blocks_of(obj):
            bt = b.get("type")
            if bt == "text":
                lab = "agent.message"
            elif bt in ("thinking", "redacted_thinking"):
                sig = b.get("signature")
                lab = (
                    "agent.thinking.narration"
                    if isinstance(sig, str) and sig and is_narration(sig)
                    else "agent.thinking"
                )
            elif bt == "tool_use":
                # a tool call is a tool call: every tool_use carries agent.tool.use; a spawn or a
                # SendMessage carries its communication leaf as well
                if "agent.tool.use" not in labels:
                    labels.append("agent.tool.use")
                name = b.get("name")
                if isinstance(name, str) and name in SPAWN_TOOLS:
                    lab = "agent.communication.sent"
                elif name == "SendMessage":
                    inp = b.get("input") if isinstance(b.get("input"), dict) else {}
                    ty = inp.get("type")
                    msg = inp.get("message")
                    if isinstance(msg, dict):
                        ty = msg.get("type", ty)
                    lab = (
                        "agent.communication.sent"
                        if ty in (None, "message", "direct")
                        else "agent.communication.signal"
                    )
                else:
                    continue
            else:
                continue
            if lab not in labels:
                labels.append(lab)
        return labels
    if t == "user":
        if obj.get("isCompactSummary"):
            return ["harness.compaction.summary"]
        is_meta = bool(obj.get("isMeta"))
        trs = tool_results(obj)
        if trs:
            labels = []
            for b in trs:
                if is_answered_auq(obj, b):
                    lab = "user.answer"
                elif is_typed_rejection(b):
                    lab = "user.rejection"
                else:
                    lab = "agent.tool.result"
                if lab not in labels:
                    labels.append(lab)
            # a result-bearing notification is also an inbound child message (BG-005)
            return labels
        text = string_text(obj)
        if text is None:
            return [] if is_meta else (["user.message"] if blocks_of(obj) else [])
        labs = user_string_labels(text, is_meta)
        if labs == ["user.message"]:
            # a record the harness enqueued whose text matches no template: its origin says
            # who wrote it (CLS-007, QT-006), so it is not the operator
            o = obj.get("origin")
            kind = o.get("kind") if isinstance(o, dict) else None
            if kind == "task-notification":
                return ["harness.notification.task"]
            if kind == "peer":
                return ["agent.communication.inbox"]
        return labs
    if t == "system":
        st = obj.get("subtype")
        if st == "compact_boundary":
            return ["harness.compaction.boundary"]
        return [GATED_SYSTEM.get(st, "harness.meta.system") if isinstance(st, str) else "harness.meta.system"]
    if t == "attachment":
        a = obj.get("attachment")
        if isinstance(a, dict) and a.get("type") == "hook_additional_context":
            return ["harness.meta.hook"]
        return ["harness.meta.attachment"]
    if t in ("file-history-snapshot", "file-history-delta"):
        return ["harness.meta.snapshot"]
    if t == "queue-operation":
        if obj.get("operation") == "enqueue":
            c = obj.get("content")
            if isinstance(c, str):
                s = c.lstrip()
                # riders (QT-005) are delivered as a notification / peer record of their own
                if s and not _is_rider(s):
                    return ["user.queued"]
        return []
    return []


def _is_rider(s: str) -> bool:
    """Queue content the harness rides on the input queue (QT-005): a notification or peer message,
    delivered as a record of its own, never an operator prompt."""
    return (s.startswith("<task-notification>") or s.startswith("<agent-message")
            or s.startswith("<teammate-message") or _strip_preamble(s)[1])


def is_queued_prompt(obj: dict) -> bool:
    """A `queued_command` attachment delivering a prompt the operator typed while the agent was busy
    (2.1.258 delivers it mid-turn this way, QT-006): `commandMode` "prompt" (or absent), `origin.kind`
    human (or absent), and prose rather than a rider."""
    a = obj.get("attachment")
    if obj.get("type") != "attachment" or not isinstance(a, dict) or a.get("type") != "queued_command":
        return False
    if a.get("commandMode") not in (None, "prompt"):
        return False
    o = a.get("origin")
    if isinstance(o, dict) and o.get("kind") not in (None, "human"):
        return False
    p = a.get("prompt")
    s = p.lstrip() if isinstance(p, str) else ""
    return bool(s) and not _is_rider(s)


def opens_turn(obj: dict, labels: Iterable[str]) -> bool:
    """True iff this record opens a turn (TURN-003, TURN-018): genuine prose, an answered
    question, a typed rejection, an inbound peer message, or an automation pulse."""
    labels = list(labels)
    if not labels:
        return False
    first = labels[0]
    if first in ("user.message", "user.answer", "user.rejection", "agent.communication.inbox",
                 "agent.communication.signal"):
        return obj.get("type") == "user"
    if first.startswith("harness.notification."):
        # the agents-stopped notice is enqueued without triggering a generation (CLS-008, TURN-019)
        return not AGENTS_STOPPED.match((string_text(obj) or "").lstrip())
    if first == "harness.command.invocation":
        text = string_text(obj) or ""
        m = COMMAND_ARGS.search(text)
        return bool(m and m.group(1).strip())
    if first == "harness.schedule.wakeup":
        return True
    return False


# --- text --------------------------------------------------------------------------------


def _dumps(v: Any) -> str:
    return orjson.dumps(v).decode("utf-8", "replace")


def record_text(obj: dict) -> str:
    """The matchable text of a record: what the transcript holds, never a rendered label."""
    t = obj.get("type")
    if t in ("user", "assistant"):
        c = content_of(obj)
        if isinstance(c, str):
            return c
        parts: list[str] = []
        for b in blocks_of(obj):
            bt = b.get("type")
            if bt == "text":
                parts.append(str(b.get("text", "")))
            elif bt == "thinking":
                parts.append(str(b.get("thinking", "")))
            elif bt == "redacted_thinking":  # opaque `data` only (REC-012)
                parts.append("[redacted thinking]")
            elif bt == "tool_use":
                parts.append(f"{b.get('name', '')} {_dumps(b.get('input'))}")
            elif bt == "tool_result":
                parts.append(tool_result_text(b))
        return "\n".join(parts)
    if t == "system":
        c = obj.get("content")
        return c if isinstance(c, str) else ""
    if t == "attachment":
        a = obj.get("attachment")
        if isinstance(a, dict):
            if a.get("type") == "hook_additional_context":
                c = a.get("content")
                if isinstance(c, list):
                    return "\n".join(str(x) for x in c)
                return str(c or "")
            return _dumps(a)
        return ""
    if t == "queue-operation":
        c = obj.get("content")
        return c if isinstance(c, str) else ""
    return ""


def display_text(obj: dict, labels: list[str]) -> str:
    """Human rendering: automation pulses as labels, slash commands by name, else the text."""
    t = obj.get("type")
    if labels and labels[0].startswith("harness.notification.") and t == "user":
        text = string_text(obj) or ""
        secs = parse_task_notification(text)
        if secs:
            return "\n".join(notification_label_text(f) for f in secs)
        if AGENTS_STOPPED.match(text.lstrip()):
            return "[subagent stopped] " + text.strip()
        return text
    if labels and labels[0] == "harness.command.invocation":
        text = string_text(obj) or ""
        name = COMMAND_NAME.search(text)
        if name is None:
            return text  # a typed slash command as first written: the text is the command
        args = COMMAND_ARGS.search(text)
        return f"{name.group(1).strip()} {args.group(1).strip() if args else ''}".rstrip()
    if labels and labels[0] == "user.answer":
        return answer_text(obj)
    if labels and labels[0] == "user.rejection":
        for b in tool_results(obj):
            tx = tool_result_text(b)
            if REJECTION_TYPED in tx:
                return "[rejected] " + tx.split(REJECTION_TYPED, 1)[1].strip()
    if t == "system" and obj.get("subtype") == "compact_boundary":
        cm = obj.get("compactMetadata") if isinstance(obj.get("compactMetadata"), dict) else {}
        return f"[compaction {cm.get('trigger', '?')}: {cm.get('preTokens', '?')} -> {cm.get('postTokens', '?')} tokens] {obj.get('content', '')}"
    return record_text(obj)


def answer_text(obj: dict) -> str:
    """`<question> = <answer>` per question; typed notes (ELI-005: the answer is then the
    `(notes only)` placeholder) and a freeform `response` (ELI-002) are the operator's words too."""
    tur = obj.get("toolUseResult")
    if not isinstance(tur, dict):
        return record_text(obj)
    answers = tur.get("answers") if isinstance(tur.get("answers"), dict) else {}
    ann = tur.get("annotations") if isinstance(tur.get("annotations"), dict) else {}
    parts = []
    for q, a in answers.items():
        note = ann.get(q, {}).get("notes") if isinstance(ann.get(q), dict) else None
        parts.append(f"{q} = {a}" + (f" (notes: {note})" if isinstance(note, str) and note else ""))
    r = tur.get("response")
    if isinstance(r, str) and r.strip():
        parts.append(f"response: {r.strip()}")
    return "; ".join(parts) if parts else record_text(obj)


def tool_names(obj: dict) -> list[str]:
    return [str(b.get("name")) for b in tool_uses(obj) if b.get("name") is not None]


def attachment_kind(obj: dict) -> str | None:
    a = obj.get("attachment")
    if isinstance(a, dict) and isinstance(a.get("type"), str):
        return a["type"]
    return None
