"""Record classification against every record shape the catalog documents.

Shapes the real client writes offline and the committed sample corpus holds (examples/, Claude Code
2.1.258 and 2.1.332) are tested on THOSE records (`real(...)` below): compaction boundaries and
summaries, queue operations, plan approval, turn_duration, file-history snapshots and deltas,
local-command records, a notification riding a queue-operation. Every other record here is HAND-MADE,
built to the letter of the catalog claim cited on each case, because the offline real client cannot
produce that shape (background agents stopped from the UI, peer sessions, Monitor timeouts, orphan
reconciliation, idle AskUserQuestion auto-resolve, /fork children, redacted thinking, hook preambles,
resumes after a crash...); each hand-made case that sits next to a real one says why it is still
hand-made. The last test checks that the shapes the real client does write keep the labels the
ground truth expects.

Each case asserts the labels (primary first), whether the record opens a turn and, for pulses,
commands, answers and rejections, the rendered text.
"""

from __future__ import annotations

import base64
import json

import pytest

from sessionsift.providers.claude.model import record as R
from sessionsift.providers.claude.model.labels import LEAVES

LEAF_PATHS = {l.path for l in LEAVES}


# --- real records from the committed corpus ----------------------------------------------------

from pathlib import Path  # noqa: E402

_EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
_REAL: list[tuple[str, int, dict]] | None = None


def _corpus() -> list[tuple[str, int, dict]]:
    global _REAL
    if _REAL is None:
        from sessionsift.read.lines import read_records

        _REAL = []
        for home in (_EXAMPLES / "claude-home", _EXAMPLES / "newest-client" / "2.1.332" / "claude-home"):
            for f in sorted((home / "projects").rglob("*.jsonl")):
                _REAL += [(str(f), line.no, obj) for line, obj in read_records(f, None)]
    return _REAL


def real(pred, at_least: int = 1) -> list[dict]:
    """Every record of the committed real-client corpus that satisfies `pred` (at least N)."""
    out = [o for _f, _n, o in _corpus() if pred(o)]
    assert len(out) >= at_least, "the committed corpus no longer holds this shape"
    return out


def _str(o: dict) -> str:
    c = R.content_of(o)
    return c.lstrip() if isinstance(c, str) else ""


# --- builders -------------------------------------------------------------------------------


def user(content, **kw) -> dict:
    return {"type": "user", "message": {"role": "user", "content": content}, **kw}


def meta(content, **kw) -> dict:
    return user(content, isMeta=True, **kw)


def text_block(text: str) -> list[dict]:
    return [{"type": "text", "text": text}]


def carrier(text: str, *, is_error: bool | None = None, tur=None, with_tur: bool = True) -> dict:
    block = {"type": "tool_result", "tool_use_id": "toolu_01ABC", "content": text}
    if is_error is not None:
        block["is_error"] = is_error
    obj = user([block])
    if with_tur:
        obj["toolUseResult"] = tur
    return obj


def notification(task_id: str, summary: str, status: str | None = None, *, event: str | None = None,
                 result: str | None = None, tool_use_id: str | None = "toolu_01XYZ") -> str:
    parts = [f"<task-id>{task_id}</task-id>"]
    if tool_use_id and event is None:
        parts.append(f"<tool-use-id>{tool_use_id}</tool-use-id>")
        parts.append(f"<output-file>/tmp/tasks/{task_id}.output</output-file>")
    if status is not None:
        parts.append(f"<status>{status}</status>")
    parts.append(f"<summary>{summary}</summary>")
    if event is not None:
        parts.append(f"<event>{event}</event>")
    if result is not None:
        parts.append(f"<result>{result}</result>")
    return "<task-notification>\n" + "\n".join(parts) + "\n</task-notification>"


def check(obj: dict, labels: list[str], opens: bool, display: str | None = None) -> None:
    got = R.classify(obj)
    assert got == labels
    assert set(got) <= LEAF_PATHS
    assert R.opens_turn(obj, got) is opens
    if display is not None:
        assert R.display_text(obj, got) == display


def assistant(*blocks) -> dict:
    return {"type": "assistant", "message": {"role": "assistant", "content": list(blocks)}}


# --- interrupts, local commands, slash commands ----------------------------------------------


@pytest.mark.parametrize("text,label", [
    (R.INTERRUPT_USER, "harness.interrupt.user"),
    (R.INTERRUPT_TOOL, "harness.interrupt.tool"),
])
def test_interrupts_exact_match_only(text, label):
    # TURN-005: a text-block record whose content is EXACTLY one of the two strings
    check(user(text_block(text)), [label], False, text)
    check(user(text), [label], False)
    # a prompt quoting them (or with extra prose) stays the operator's
    check(user(text_block(f"why did I get {text} there?")), ["user.message"], True)
    check(user(text_block(text + " and then")), ["user.message"], True)
    check(user(" " + text), ["user.message"], True)


def test_local_command_records_real():
    # TURN-006 on the records /compact wrote (interactive scenario): stdout non-isMeta, the caveat
    # wrapper isMeta, the invocation rendered by name
    for o in real(lambda o: o.get("type") == "user" and _str(o).startswith("<local-command-stdout>")):
        assert not o.get("isMeta")
        check(o, ["harness.command.stdout"], False)
    for o in real(lambda o: o.get("type") == "user" and _str(o).startswith("<local-command-caveat>")):
        assert o.get("isMeta") is True
        check(o, ["harness.meta.hook"], False)
    for o in real(lambda o: o.get("type") == "user" and _str(o).startswith("<command-name>/compact")):
        check(o, ["harness.command.invocation"], False, "/compact")


def test_local_command_stderr():
    # HAND-MADE: no offline run of a local command wrote stderr; TURN-006 names it the stdout sibling
    check(user("<local-command-stderr>boom</local-command-stderr>"), ["harness.command.stdout"], False)


@pytest.mark.parametrize("content", [
    # TURN-007: the older order, command-name leading
    "<command-name>/clear</command-name>\n            <command-message>clear</command-message>\n"
    "            <command-args></command-args>",
    # the current order, command-message first
    "<command-message>clear</command-message>\n<command-name>/clear</command-name>\n"
    "<command-args></command-args>",
])
def test_slash_command_both_orders_without_args(content):
    check(user(content), ["harness.command.invocation"], False, "/clear")


@pytest.mark.parametrize("content", [
    "<command-name>/csift</command-name>\n<command-message>csift</command-message>\n"
    "<command-args>what is the id of this session?</command-args>",
    "<command-message>csift</command-message>\n<command-name>/csift</command-name>\n"
    "<command-args>what is the id of this session?</command-args>",
])
def test_slash_command_args_carry_typed_prose(content):
    # TURN-008: the typed prose lives in <command-args>: the record is also operator prose and
    # opens a turn; it renders `/name args`, never the XML
    check(user(content), ["harness.command.invocation", "user.message"], True,
          "/csift what is the id of this session?")


def test_typed_slash_command_first_form():
    check(user("/compact"), ["harness.command.invocation"], False, "/compact")
    # a path is prose, not a command
    check(user("/tmp/foo is broken"), ["user.message"], True)


# --- AskUserQuestion carriers ----------------------------------------------------------------

QS = [{"question": "Which colour?", "header": "Colour", "multiSelect": False,
       "options": [{"label": "red", "description": "warm"}, {"label": "blue", "description": "cool"}]}]


@pytest.mark.parametrize("text", [
    # TURN-009 live branches (2.1.258) and the retired phrasing still on older disks
    'Your questions have been answered: "Which colour?"="red". You can now continue with these '
    'answers in mind.',
    'The user answered: "Which colour?"="red". Read the answers carefully \u2014 they may request '
    'clarification, changes, or that you not proceed \u2014 and follow what they actually say.',
    'User has answered your questions: "Which colour?"="red".',
])
def test_answered_question_all_phrasings(text):
    # TURN-010: non-errored tool_result AND non-empty toolUseResult.answers
    tur = {"questions": QS, "answers": {"Which colour?": "red"}, "annotations": {}}
    check(carrier(text, tur=tur), ["user.answer"], True, "Which colour? = red")
    check(carrier(text, is_error=False, tur=tur), ["user.answer"], True)


def test_answered_question_notes_and_freeform_response():
    # ELI-005: typed prose lands as the `(notes only)` placeholder plus annotations[q].notes
    tur = {"questions": QS, "answers": {"Which colour?": "(notes only)"},
           "annotations": {"Which colour?": {"notes": "neither, use green"}}}
    check(carrier('The user answered: "Which colour?"=(no option selected) notes: neither, use green',
                  tur=tur), ["user.answer"], True, "Which colour? = (notes only) (notes: neither, use green)")
    # ELI-002: 2.1.258 writes `response` when the operator typed instead of selecting
    tur = {"questions": QS, "answers": {}, "response": "just pick one for me"}
    check(carrier("The user responded: just pick one for me", tur=tur), ["user.answer"], True,
          "response: just pick one for me")


def test_answer_marker_fallback_only_without_tool_use_result():
    # ELI-003/004: the phrasings decide only when the carrier has no toolUseResult at all
    check(carrier('The user answered: "Which colour?"="red".', with_tur=False), ["user.answer"], True)
    check(carrier('Your questions have been answered: "Q"="A".', with_tur=False), ["user.answer"], True)
    # start-anchored: a quote mid-result is a tool result
    check(carrier('grep hit: "Your questions have been answered:" in docs', with_tur=False),
          ["agent.tool.result"], False)


@pytest.mark.parametrize("obj", [
    # TURN-011: rejected / validation-errored: is_error true, toolUseResult a plain string
    carrier("Error: The user doesn't want to proceed with this tool use. The tool use was rejected "
            "(eg. if it was a file edit, the new_string was NOT written to the file). STOP what you "
            "are doing and wait for the user to tell you how to proceed.", is_error=True,
            tur="Error: The user doesn't want to proceed with this tool use."),
    carrier("<tool_use_error>InputValidationError: AskUserQuestion was called with input that could "
            "not be parsed as JSON.</tool_use_error>", is_error=True,
            tur="InputValidationError: AskUserQuestion was called with input that could not be parsed"),
    carrier("<tool_use_error>InputValidationError: bad</tool_use_error>", is_error=True, with_tur=False),
    # ELI-007 / TURN-012: idle auto-resolve: is_error absent, answers {} (even with answer wording)
    carrier("No response after 60s - the user may be away from keyboard. Proceed with your best "
            "judgement.", tur={"questions": QS, "answers": {}, "annotations": {}, "afkTimeoutMs": 60000}),
    carrier("No response after 60s - the user may be away from keyboard. Before going idle the user "
            "had selected: red.", tur={"questions": QS, "answers": {}, "annotations": {},
                                        "afkTimeoutMs": 60000}),
    # TURN-012: the unanswered branch
    carrier("The user did not answer the questions.", tur={"questions": QS, "answers": {}}),
    # an errored carrier never counts as an answer, whatever its payload says
    carrier('Your questions have been answered: "Q"="A".', is_error=True,
            tur={"questions": QS, "answers": {"Q": "A"}}),
])
def test_non_answer_shapes_are_tool_results(obj):
    check(obj, ["agent.tool.result"], False)


# --- rejections and plan approval ------------------------------------------------------------

REJ = ("The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it "
       "was a file edit, the new_string was NOT written to the file). ")


def test_typed_rejection_opens_turn_bare_does_not():
    typed = carrier(REJ + "To tell you how to proceed, the user said:\nuse the other file instead",
                    is_error=True, tur="Error: ...")
    check(typed, ["user.rejection"], True, "[rejected] use the other file instead")
    bare = carrier(REJ + "STOP what you are doing and wait for the user to tell you how to proceed.",
                   is_error=True, tur="Error: ...")
    check(bare, ["agent.tool.result"], False)


def test_auq_clarify_rejection_is_a_rejection():
    # ELI-007 / TURN-003: the harness's clarify body rides the same typed delimiter
    obj = carrier(REJ + "To tell you how to proceed, the user said:\nThe user wants to clarify these "
                  "questions. This means they may have additional information", is_error=True,
                  tur="Error: ...")
    check(obj, ["user.rejection"], True)


def test_plan_approval_is_a_tool_result_real():
    # TURN-014, PLAN-009 on the approval the plan_mode scenario's TUI dialog wrote: no is_error, no
    # typed message: the harness greenlight, no turn
    recs = real(lambda o: o.get("type") == "user" and any(
        "User has approved your plan" in R.tool_result_text(b) for b in R.tool_results(o)))
    for o in recs:
        assert not any(b.get("is_error") for b in R.tool_results(o))
        check(o, ["agent.tool.result"], False)


def test_plan_approval_without_a_plan():
    # HAND-MADE: the "approved exiting plan mode" branch answers an ExitPlanMode with an empty plan,
    # which the scripted offline sessions never make
    check(carrier("User has approved exiting plan mode. You can now proceed.", tur={"plan": "", "isAgent": False}),
          ["agent.tool.result"], False)


def test_plan_rejection_with_typed_instruction():
    # PLAN-010: an ExitPlanMode rejection carrying the typed tail
    obj = carrier(REJ + "To tell you how to proceed, the user said:\nsplit step 2", is_error=True,
                  tur="Error: The user doesn't want to proceed with this tool use.")
    check(obj, ["user.rejection"], True, "[rejected] split step 2")


def test_async_launch_ack_is_a_tool_result():
    # CLS-009: the launch ack is not the child's report
    obj = carrier("Async agent launched successfully.\nagentId: a1b2c3d4e5f6a7b8c (internal ID)",
                  tur={"isAsync": True, "status": "async_launched", "agentId": "a1b2c3d4e5f6a7b8c"})
    check(obj, ["agent.tool.result"], False)


# --- peer messages ---------------------------------------------------------------------------

PREAMBLES = ("Another Claude session sent a message:",
             "Another Claude session sent a message while you were working:",
             "A peer session sent a message while you were working:")


def test_bare_teammate_message_prose_and_signal():
    # TURN-015: the preamble-less majority
    check(user('<teammate-message teammate_id="researcher" color="blue">found it in lib/x.py'
               '</teammate-message>'), ["agent.communication.inbox"], True)
    # CLS-011: a JSON body with a type is a control signal
    for sig in ("idle_notification", "task_assignment", "shutdown_request", "teammate_terminated",
                "shutdown_approved"):
        body = json.dumps({"type": sig, "from": "researcher", "timestamp": "2026-09-02T10:00:00Z"})
        check(user(f'<teammate-message teammate_id="researcher">\n{body}\n</teammate-message>'),
              ["agent.communication.signal"], True)


@pytest.mark.parametrize("preamble", PREAMBLES)
def test_relay_preambles(preamble):
    # TURN-015/016: all three preambles 2.1.258 defines; <agent-message> rides isMeta
    check(meta(f'{preamble}\n\n<agent-message from="peer-7">please rebase</agent-message>'),
          ["agent.communication.inbox"], True)
    check(user(f'{preamble} <teammate-message teammate_id="x">hello</teammate-message>'),
          ["agent.communication.inbox"], True)


def test_batched_peer_sections_union_labels():
    # CLS-006: one record, several sections of mixed kind behind the relay preamble
    idle = json.dumps({"type": "idle_notification", "from": "a"})
    term = json.dumps({"type": "teammate_terminated", "from": "b"})
    text = (f'Another Claude session sent a message: <teammate-message teammate_id="a">{idle}'
            f'</teammate-message>\n<teammate-message teammate_id="b">{term}</teammate-message>\n'
            f'<teammate-message teammate_id="c">done with the refactor</teammate-message>')
    check(user(text), ["agent.communication.signal", "agent.communication.inbox"], True)


def test_notification_then_peer_section():
    # TURN-017: a notification section followed by a peer section carries both labels
    text = notification("b1a2c3d4e", 'Background command "make" completed (exit code 0)', "completed") \
        + '\n<teammate-message teammate_id="x">hi</teammate-message>'
    check(user(text), ["harness.notification.background-command", "agent.communication.inbox"], True)


def test_peer_tag_quoted_inside_notification_result_is_masked():
    # CLS-006: notification precedence over a peer tag quoted inside its <result> span
    text = notification("a0123456789abcdef", 'Agent "review" finished', "completed",
                        result='the peer said <teammate-message teammate_id="x">{"type":"shutdown_request"}'
                               '</teammate-message>')
    check(user(text), ["harness.notification.subagent", "agent.communication.inbox"], True)


def test_prose_quoting_section_tags_stays_operator():
    # TURN-017, CLS-006: tags mid-prose are not sections
    check(user('what does <teammate-message teammate_id="x"> mean in the transcript?'),
          ["user.message"], True)
    check(user("the record starts with <task-notification> and then <summary>"), ["user.message"], True)


def test_send_message_signal_vs_prose():
    # CLS-011: SendMessage input.type other than message/direct is a signal
    sm = {"type": "tool_use", "id": "toolu_1", "name": "SendMessage",
          "input": {"to": "researcher", "recipient": "researcher", "type": "message", "message": "hi"}}
    # a tool call is a tool call (issue 11): every tool_use carries agent.tool.use first
    check(assistant(sm), ["agent.tool.use", "agent.communication.sent"], False)
    sig = {"type": "tool_use", "id": "toolu_2", "name": "SendMessage",
           "input": {"to": "researcher", "type": "shutdown_request", "message": "bye"}}
    check(assistant(sig), ["agent.tool.use", "agent.communication.signal"], False)
    # CLS-012: the three spawn tools
    for name in ("Agent", "Task", "Workflow"):
        check(assistant({"type": "tool_use", "id": "t", "name": name, "input": {"prompt": "x"}}),
              ["agent.tool.use", "agent.communication.sent"], False)
    # a record with a spawn and an ordinary call carries each leaf once
    check(assistant({"type": "tool_use", "id": "a", "name": "Agent", "input": {}},
                    {"type": "tool_use", "id": "b", "name": "Read", "input": {}}),
          ["agent.tool.use", "agent.communication.sent"], False)


# --- task notifications ----------------------------------------------------------------------
# HAND-MADE: in the committed offline runs the pinned client delivered every background completion
# as a queued_command attachment and a queue-operation rider (test_queue_operations_real), never as
# the string-content user record below; stopped, failed, monitor-event and orphan pulses need UI
# actions or timeouts no scripted session makes.


@pytest.mark.parametrize("summary,kind", [
    # CLS-004 / BG-039: the leading classifier decides, never the quoted name
    ('Background command "monitor liveness re-arm" completed (exit code 0)', "background-command"),
    ('Background command "Monitor the build" failed with exit code 2', "background-command"),
    ('Background command "tail log" was stopped', "background-command"),
    ('Background command "sleep 5" finished', "background-command"),
    ('Monitor event: "build watcher"', "monitor"),
    ('Monitor "build watcher" completed', "monitor"),
    ('Agent "review the diff" finished', "subagent"),
    ('Agent "review the diff" completed', "subagent"),
    ('Dynamic workflow "nightly" completed', "subagent"),
    ('Dynamic workflow "nightly" failed: timeout', "subagent"),
    ('Remote task "deploy" completed', "task"),
    ("Remote task blocked on input: approve deploy?", "task"),
    ("Cloud review failed: quota", "task"),
    ("Stopped by a worker restart: b1", "task"),
    ("The container running this session was restarted before background work reported back: b1",
     "task"),
    ("consolidated 3 memory files", "task"),
    ('background command "lower case" completed (exit code 0)', "background-command"),
])
def test_notification_kind_by_leading_classifier(summary, kind):
    text = notification("b7k2m9q1z", summary, "completed")
    check(user(text), [f"harness.notification.{kind}"], True,
          f"[{kind} b7k2m9q1z completed] {summary}")
    assert R.notification_kind(summary) == kind


def test_notification_shape_exactly_as_written():
    # CLS-003 / CLS-007: no isMeta key, string content, origin task-notification
    obj = user(notification("bx1y2z3w4", 'Background command "pytest" completed (exit code 0)', "completed"),
               userType="external", isSidechain=False, origin={"kind": "task-notification"},
               promptSource="system")
    check(obj, ["harness.notification.background-command"], True)


@pytest.mark.parametrize("status", ["completed", "failed", "killed", "stopped", "some-new-status"])
def test_status_is_an_open_set(status):
    # BG-011
    text = notification("b1", 'Background command "x" done', status)
    check(user(text), ["harness.notification.background-command"], True,
          f'[background-command b1 {status}] Background command "x" done')


def test_monitor_event_pulse_without_status():
    # CLS-005, BG-010, BG-016, BG-017: three tags, the event payload fills the status slot
    ev = "[Monitor timed out \u2014 re-arm if needed.]"
    text = notification("m1n2o3p4q", 'Monitor event: "build watcher"', event=ev)
    assert "<status>" not in text and "<tool-use-id>" not in text
    check(user(text), ["harness.notification.monitor"], True,
          f'[monitor m1n2o3p4q {ev}] Monitor event: "build watcher"')
    text = notification("m1", 'Monitor event: "w"', event="STEP=[113/124]")
    check(user(text), ["harness.notification.monitor"], True, '[monitor m1 STEP=[113/124]] Monitor event: "w"')


def test_result_bearing_pulse_is_also_inbox():
    # CLS-003, CLS-009: a <result> pulse is the child's report
    text = notification("a1b2c3d4e5f6a7b8c", 'Agent "review" finished', "completed", result="LGTM")
    check(user(text), ["harness.notification.subagent", "agent.communication.inbox"], True)
    text = notification("w1", 'Dynamic workflow "n" completed', "completed", result="ok")
    check(user(text), ["harness.notification.subagent", "agent.communication.inbox"], True)


def test_batched_notifications_render_one_line_each():
    # CLS-006: several pulses in one record: labels unioned, one rendered line per section
    a = notification("b1", 'Background command "a" completed (exit code 0)', "completed")
    b = notification("m1", 'Monitor event: "w"', event="READY")
    c = notification("b2", 'Background command "c" failed with exit code 1', "failed")
    check(user(a + "\n" + b + "\n" + c),
          ["harness.notification.background-command", "harness.notification.monitor"], True,
          '[background-command b1 completed] Background command "a" completed (exit code 0)\n'
          '[monitor m1 READY] Monitor event: "w"\n'
          '[background-command b2 failed] Background command "c" failed with exit code 1')
    assert len(R.parse_task_notification(a + b + c)) == 3


def test_optional_notification_tags():
    # BG-010: <usage>, <note>, <diagnostics>, <failures>, <recovery> ride some pulses
    text = notification("a1", 'Agent "x" finished', "completed", result="done").replace(
        "</task-notification>",
        "<usage>total_tokens: 5</usage>\n<note>A task-notification fires each time this agent stops "
        "with no live background children of its own.</note>\n</task-notification>")
    check(user(text), ["harness.notification.subagent", "agent.communication.inbox"], True)
    f = R.parse_task_notification(text)[0]
    assert f["task-id"] == "a1" and f["status"] == "completed" and f["result"] == "done"


def test_orphan_summaries():
    # BG-020/021: the aggregate sentinel and a single orphan below the threshold
    summ = ("3 background shell task(s) from the previous session have no completion record. They may "
            "have been stopped (via the UI, Monitor timeout, or agent teardown \u2014 these leave no "
            "transcript marker). They have been marked stopped. Task ids: b1, b2, b3. Task ids in this "
            'notification beginning with "__orphan_summary" are internal scan markers, not tasks.')
    text = notification("__orphan_summary__:shell", summ, "stopped")
    check(user(text), ["harness.notification.task"], True)
    assert R.display_text(user(text), ["harness.notification.task"]).startswith(
        "[task __orphan_summary__:shell stopped] 3 background shell task(s)")
    for kind in ("agent", "workflow"):
        check(user(notification(f"__orphan_summary__:{kind}", 'Agent "x" orphaned', "failed")),
              ["harness.notification.task"], True)
    single = notification("b9", "No completion record was found for this background shell command "
                          "from the previous session", "stopped")
    check(user(single), ["harness.notification.task"], True)


@pytest.mark.parametrize("text", [
    'Background agent "Review the parser changes and report any regressions in the tokeni..." was '
    "stopped by the user.",
    '3 background agents were stopped by the user: "Investigate the flaky test in test_live_sc...", '
    '"Audit docs for stale claims about the wait comm...", "Benchmark the search prefilter on the bi...".',
    '1 background agent was stopped by the user: "x...".',  # never emitted (TURN-019), tolerated
])
def test_agents_stopped_notice(text):
    # CLS-008, TURN-019, BG-025: plain string, no XML, no isMeta; triggers no generation
    obj = user(text, origin={"kind": "task-notification"}, promptSource="system")
    check(obj, ["harness.notification.subagent"], False, "[subagent stopped] " + text)


def test_task_stopped_meta_notice_is_not_a_human_turn():
    # CLS-008 note: `Task "..." (<id>) was stopped by the user.` is written isMeta
    obj = meta('Task "build" (b1c2d3e4f) was stopped by the user.')
    assert "user.message" not in R.classify(obj)
    assert R.opens_turn(obj, R.classify(obj)) is False


def test_untemplated_task_notification_origin_is_not_the_operator():
    # CLS-007: origin.kind is the authoritative discriminator when no template matches
    obj = user("Some future plain-text notice the harness enqueued.", origin={"kind": "task-notification"})
    check(obj, ["harness.notification.task"], True)
    # a genuine prompt says origin human
    check(user("fix the bug", origin={"kind": "human"}, promptSource="typed"), ["user.message"], True)


def test_meta_delivered_notifications():
    # BG-014: a pulse delivered to an idle subagent lane is an isMeta user record
    text = notification("b1", 'Background command "x" completed (exit code 0)', "completed")
    check(meta(text, isSidechain=True), ["harness.notification.background-command"], True)
    # BG-024: behind a hook preamble line, isMeta + isSidechain
    check(meta("[SYSTEM NOTIFICATION - NOT USER INPUT]\n" + text, isSidechain=True),
          ["harness.notification.background-command"], True)


# --- continuation, loop ticks, hooks, images -------------------------------------------------


@pytest.mark.parametrize("text", [
    "Continue from where you left off.",
    "Continue from where you left off. Note: this session was automatically restarted after its "
    "process exited unexpectedly; the user has not sent a new message since the restart",
    "Continue from where you left off. This session moved to a new runner; files you created earlier "
    "may no longer exist, so verify the working directory state before relying on",
])
def test_continuation_marker(text):
    # CLS-013, MISC-003 (block form), TURN-004 (a prefix, three lengths)
    check(meta(text_block(text)), ["harness.schedule.continuation"], False)
    check(meta(text), ["harness.schedule.continuation"], False)
    # the operator typing the phrase is prose
    check(user(text), ["user.message"], True)


def test_loop_check_vs_driver_ticks():
    # CLS-014: the fired tick opens a turn; driver ticks are meta
    tick = ("# Autonomous loop check\n\nYou're being invoked on a timer while the user is away or "
            "occupied. Review the loop instructions.")
    check(meta(tick), ["harness.schedule.wakeup"], True)
    check(meta("<<autonomous-loop-dynamic>>"), ["harness.schedule.wakeup"], True)
    check(meta("<<autonomous-loop>>"), ["harness.schedule.wakeup"], True)
    check(meta("# Autonomous loop tick (dynamic pacing)\n\nDo the next step."), ["harness.meta.loop"], False)
    check(meta("Run the autonomous check using the loop instructions established earlier in this "
               "conversation."), ["harness.meta.loop"], False)
    # CLS-014 note: a non-meta prompt quoting the sentinel is the operator's
    check(user("please arm <<autonomous-loop-dynamic>> every 5 minutes"), ["user.message"], True)
    check(user(tick), ["user.message"], True)
    # CLS-015: a custom-prompt fired tick carries no marker: unmodelled, never user.message
    check(meta("check the deploy and report"), [], False)


def test_hook_feedback_shapes():
    # CLS-016: Stop hook feedback, the edit-retry marker nested inside it, and alone
    check(meta("Stop hook feedback:\nrun the tests before stopping"), ["harness.meta.hook"], False)
    check(meta("Stop hook feedback:\nThe last Edit failed because the target file was modified by a "
               "formatter; re-read it"), ["harness.meta.hook"], False)
    check(meta("Note: The last Edit failed because the target file was modified"), ["harness.meta.hook"], False)


def test_image_reference_pseudo_records():
    # CLS-017: both prefixes, isMeta, single line, ending ]
    check(meta("[Image: source: /tmp/shot.png, original 1920x1080, displayed at 960x540]"), [], False)
    check(meta("[Image source: /tmp/shot.png]"), [], False)
    check(meta(text_block("[Image source: https://example.com/a.png]")), [], False)
    # the pasted-image placeholder inside a genuine prompt is operator prose
    check(user("[Image #1] what is wrong with this layout?"), ["user.message"], True)
    check(user(text_block("[Image #1]")), ["user.message"], True)


def test_skill_preamble_meta_is_unmodelled():
    # TURN-004: harness-authored isMeta prose is never user.message
    check(meta("Base directory for this skill: /home/u/.claude/skills/x\n\n# Skill"), [], False)


# --- assistant blocks -----------------------------------------------------------------------


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _ld(field: int, payload: bytes) -> bytes:
    return _varint(field << 3 | 2) + _varint(len(payload)) + payload


def _vi(field: int, v: int) -> bytes:
    return _varint(field << 3) + _varint(v)


def signature(tags: list[bytes], *, version: int | None = 2, pad: int = 0) -> tuple[str, bytes]:
    """Real protobuf bytes: [1: version varint] [4: opaque bytes] 2 { 1 { 8: tag ... } 9: opaque }."""
    inner = b"".join(_ld(8, t) for t in tags)
    lvl1 = _vi(3, 1) + _ld(1, inner) + _ld(9, b"\x01\x02opaque")
    raw = (_vi(1, version) if version is not None else b"") + _ld(4, b"z" * pad) + _ld(2, lvl1) + _vi(3, 1)
    return base64.b64encode(raw).decode(), raw


def thinking(sig: str, text: str = "I should read the file first.") -> dict:
    return {"type": "thinking", "thinking": text, "signature": sig}


def test_narration_tag_at_all_three_alignments():
    # NAR-002 (field path 2 -> 1 -> 8), NAR-007 (all three base64 alignments)
    seen = set()
    for pad in range(6):
        sig, raw = signature([b"narration"], pad=pad)
        seen.add(raw.index(b"narration") % 3)
        assert any(n in sig for n in R.NARRATION_B64)
        assert R.signature_tag(sig) == "narration"
        check(assistant(thinking(sig, "Reading the config.")), ["agent.thinking.narration"], False)
        # without padding characters, as some writers strip them
        assert R.signature_tag(sig.rstrip("=")) == "narration"
        sig_t, _ = signature([b"thinking"], pad=pad)
        check(assistant(thinking(sig_t)), ["agent.thinking"], False)
    assert seen == {0, 1, 2}


def test_narration_last_field_wins_and_version_is_no_discriminator():
    # NAR-002: the LAST length-delimited field at each level
    sig, _ = signature([b"narration", b"thinking"])
    check(assistant(thinking(sig)), ["agent.thinking"], False)
    sig, _ = signature([b"thinking", b"narration"])
    check(assistant(thinking(sig)), ["agent.thinking.narration"], False)
    # NAR-003: format version 2, 4 or absent carries either tag
    for v in (2, 4, None):
        assert R.signature_tag(signature([b"narration"], version=v)[0]) == "narration"
        assert R.signature_tag(signature([b"thinking"], version=v)[0]) == "thinking"
    # NAR-005: a third value is reasoning to every consumer
    check(assistant(thinking(signature([b"summarized"])[0])), ["agent.thinking"], False)
    # NAR-010: the word in the reasoning text decides nothing
    check(assistant(thinking(signature([b"thinking"])[0], "is this narration?")), ["agent.thinking"], False)
    # a broken signature is plain reasoning, never a crash
    check(assistant(thinking("not*base64!!")), ["agent.thinking"], False)
    check(assistant(thinking("")), ["agent.thinking"], False)


def test_narration_with_reasoning_sibling_and_other_blocks():
    # NAR-001: one assistant message, reasoning + narration + text + tool call
    obj = assistant(thinking(signature([b"thinking"])[0]), thinking(signature([b"narration"])[0]),
                    {"type": "text", "text": "Done."},
                    {"type": "tool_use", "id": "t", "name": "Bash", "input": {"command": "ls"}})
    check(obj, ["agent.thinking", "agent.thinking.narration", "agent.message", "agent.tool.use"], False)


def test_redacted_thinking_is_thinking():
    # CLS-018, REC-012: opaque `data`, no text: same class as thinking
    obj = assistant({"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT"})
    check(obj, ["agent.thinking"], False)
    assert "[redacted thinking]" in R.record_text(obj)


# --- non-message lines -----------------------------------------------------------------------


def test_hook_additional_context_array_content():
    # CLS-019: content is a string ARRAY in real data (bare string tolerated)
    obj = {"type": "attachment", "attachment": {"type": "hook_additional_context",
                                                "content": ["first block", "second block"],
                                                "hookName": "SessionStart"}}
    check(obj, ["harness.meta.hook"], False)
    assert R.record_text(obj) == "first block\nsecond block"
    obj["attachment"]["content"] = "bare"
    assert R.record_text(obj) == "bare"
    # CLS-020: any other payload kind
    for kind in ("hook_success", "queued_command", "task_reminder", "plan_mode", "opened_file_in_ide"):
        check({"type": "attachment", "attachment": {"type": kind}}, ["harness.meta.attachment"], False)


def test_turn_duration_real():
    # QT-031 on the records the interactive scenarios wrote: no message{}, a gated leaf, no turn
    for o in real(lambda o: o.get("type") == "system" and o.get("subtype") == "turn_duration", at_least=3):
        assert "message" not in o
        check(o, ["harness.meta.turn-duration"], False)


@pytest.mark.parametrize("subtype,label", [
    # HAND-MADE: the offline scenarios write none of these subtypes (no away timer, no Stop hook
    # summary, no scheduled task, refusal, API-error retry, agent kill or warning was provoked)
    ("away_summary", "harness.meta.away-summary"),
    ("stop_hook_summary", "harness.meta.stop-hooks"),
    ("scheduled_task_fire", "harness.meta.system"),
    ("model_refusal_fallback", "harness.meta.system"),
    ("model_refusal_no_fallback", "harness.meta.system"),
    ("api_error", "harness.meta.system"),
    ("local_command", "harness.meta.system"),
    ("agents_killed", "harness.meta.system"),
    ("informational", "harness.meta.system"),
    ("some_future_subtype", "harness.meta.system"),
])
def test_system_subtypes(subtype, label):
    # QT-031, CLS-023: no message{}, one leaf per promoted subtype
    obj = {"type": "system", "subtype": subtype, "uuid": "u", "parentUuid": "p", "isMeta": False,
           "timestamp": "2026-09-02T10:00:00Z"}
    if subtype == "informational":
        obj.update(level="warning", content="Remote Control disconnected")
    if subtype == "api_error":
        obj.update(error={}, retryAttempt=1, maxRetries=10, retryInMs=500, level="error")
    check(obj, [label], False)


def test_queue_operations_real():
    # QT-001..005 on the queue-operations the print scenarios wrote: an enqueue of the typed prompt
    # is queued operator text; an enqueue (and its remove) of a task-notification rides along (its
    # delivered twin is the notification); dequeue carries no content (QT-002)
    qs = real(lambda o: o.get("type") == "queue-operation", at_least=10)
    typed = [o for o in qs if o.get("operation") == "enqueue" and str(o.get("content", "")).startswith("[")]
    riders = [o for o in qs if str(o.get("content", "")).startswith("<task-notification>")]
    deq = [o for o in qs if o.get("operation") == "dequeue"]
    removes = [o for o in qs if o.get("operation") == "remove"]
    assert typed and riders and deq and removes
    for o in typed:
        check(o, ["user.queued"], False)
    for o in riders + deq + removes:
        check(o, [], False)
    assert all("content" not in o for o in deq)


@pytest.mark.parametrize("obj,labels", [
    # HAND-MADE from here: shapes no offline run wrote (a slash command queued behind a busy turn,
    # peer-message riders, a content-bearing popAll, a remove of typed text)
    ({"type": "queue-operation", "operation": "enqueue", "timestamp": "t", "sessionId": "s",
      "content": "/compact"}, ["user.queued"]),
    ({"type": "queue-operation", "operation": "enqueue", "timestamp": "t", "sessionId": "s",
      "content": '<agent-message from="p">hi</agent-message>'}, []),
    ({"type": "queue-operation", "operation": "enqueue", "timestamp": "t", "sessionId": "s",
      "content": 'Another Claude session sent a message: <teammate-message teammate_id="x">hi'
                 '</teammate-message>'}, []),
    # A content-bearing remove / popAll repeats text its enqueue already holds. csift labels it
    # user.queued too (QT-002/QT-005); we label the enqueue only (docs/labels.md), so one queued
    # prompt counts once.
    ({"type": "queue-operation", "operation": "remove", "timestamp": "t", "sessionId": "s",
      "content": "also update the docs", "reason": "absorbed_mid_turn"}, []),
    ({"type": "queue-operation", "operation": "popAll", "timestamp": "t", "sessionId": "s",
      "content": "also update the docs"}, []),
])
def test_queue_operations(obj, labels):
    check(obj, labels, False)


def test_compaction_summary_and_boundary_real():
    # CMP-001, TURN-020 on the manual /compact the interactive scenario ran (both client versions):
    # the summary is a user record with isCompactSummary, not a turn opener
    for o in real(lambda o: o.get("type") == "user" and o.get("isCompactSummary"), at_least=2):
        check(o, ["harness.compaction.summary"], False)
    # CMP-002..005: the boundary: no message, parentUuid null, logicalParentUuid set
    for b in real(lambda o: o.get("type") == "system" and o.get("subtype") == "compact_boundary", at_least=2):
        assert b.get("parentUuid") is None and isinstance(b.get("logicalParentUuid"), str) and "message" not in b
        cm = b["compactMetadata"]
        check(b, ["harness.compaction.boundary"], False,
              f"[compaction {cm['trigger']}: {cm['preTokens']} -> {cm['postTokens']} tokens] {b['content']}")


def test_compaction_boundary_legacy_is_meta_key():
    # HAND-MADE: the legacy `isMeta: false` key (CMP-005) is on older disks; neither pinned client writes it
    b = {"type": "system", "subtype": "compact_boundary", "content": "Conversation compacted",
         "parentUuid": None, "logicalParentUuid": "abc", "isMeta": False,
         "compactMetadata": {"trigger": "auto", "preTokens": 787488, "postTokens": 22073}}
    check(b, ["harness.compaction.boundary"], False, "[compaction auto: 787488 -> 22073 tokens] Conversation compacted")


def test_subagent_seed_and_fork_context_ref():
    # TURN-021: the seed is a sidechain user record carrying the spawn prompt
    check(user("Review the diff in src/ and report regressions.", isSidechain=True, agentId="a1"),
          ["user.message"], True)
    check(user(text_block("Review the diff."), isSidechain=True), ["user.message"], True)
    # REC-027: the fork child's line 1 carries no message: unmodelled machinery
    check({"type": "fork-context-ref", "agentId": "a1", "parentSessionId": "s", "parentLastUuid": "u",
           "contextLength": 7725}, [], False)


def test_snapshot_lines_real():
    # CLS-025 on the snapshot and delta lines the interactive scenarios wrote
    for t in ("file-history-snapshot", "file-history-delta"):
        for o in real(lambda o, t=t: o.get("type") == t):
            check(o, ["harness.meta.snapshot"], False)


@pytest.mark.parametrize("t", ["last-prompt", "permission-mode", "mode", "ai-title", "agent-name",
                               "atis-latch", "bridge-session", "cost-state", "summary", None])
def test_other_line_types_unmodelled(t):
    # CLS-002: the other line types carry no message{}: no leaf, never a crash
    check({"type": t}, [], False)


def test_malformed_shapes_never_crash():
    for obj in ({"type": "user"}, {"type": "user", "message": "x"}, {"type": "user", "message": {}},
                {"type": "user", "message": {"content": [1, None, "x"]}},
                {"type": "assistant", "message": {"content": "plain"}},
                {"type": "attachment", "attachment": None}, {"type": "queue-operation", "content": 3}):
        labels = R.classify(obj)
        R.opens_turn(obj, labels)
        R.display_text(obj, labels)


# --- the real client's own shapes keep their labels ------------------------------------------


def test_real_client_corpus_labels(realclient_examples):
    """Across the committed real-client corpus every label is a leaf, every prompt the ground truth
    says was typed classifies as the operator's (a slash command as its invocation), and no
    harness pulse, command wrapper or isMeta record reads as the operator."""
    from sessionsift.read.lines import read_records

    n = 0
    for run in realclient_examples:
        transcripts = [realclient_examples.root / t for t in run.ground_truth["example_transcripts"]]
        by_text: dict[str, list[list[str]]] = {}
        for path in transcripts:
            for _line, obj in read_records(path, None):
                labels = R.classify(obj)
                n += 1
                assert set(labels) <= LEAF_PATHS
                text = R.string_text(obj) if obj.get("type") == "user" else None
                if text is not None:
                    by_text.setdefault(text.strip(), []).append(labels)
                if labels[:1] == ["user.message"]:
                    assert not obj.get("isMeta")
                    assert not (text or "").lstrip().startswith((
                        "<task-notification>", "<local-command", "<command-", "<teammate-message",
                        "<agent-message"))
                if isinstance(R.content_of(obj), str) and R.content_of(obj).startswith("<task-notification>"):
                    assert labels[0].startswith("harness.notification.")
                    assert R.display_text(obj, labels).startswith(f"[{labels[0].rsplit('.', 1)[1]} ")
        for prompt in run.ground_truth["prompts"]:
            want = "harness.command.invocation" if prompt["text"].startswith("/") else "user.message"
            seen = by_text.get(prompt["text"].strip(), [])
            assert seen and all(ls[:1] == [want] for ls in seen), (run.name, prompt["text"], seen)
    assert n > 100


def test_a_background_launchs_result_follows_its_call_within_a_second_in_every_real_transcript():
    # BG-003 / TAIL-011, on every Claude Code transcript in examples/ (real clients: 2.1.258,
    # 2.1.332, the captured rewind): each run_in_background call's own tool_result, found by the
    # call's id, is written less than a second after it (the window search relies on)
    from datetime import datetime
    from pathlib import Path

    ex = Path(__file__).resolve().parents[1] / "examples"

    def at(s: str) -> float:
        return datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp()

    gaps = []
    for p in sorted(ex.glob("**/projects/**/*.jsonl")):
        calls = {}
        for ln in p.read_text(errors="replace").splitlines():
            try:
                r = json.loads(ln)
            except ValueError:
                continue
            c = r.get("message", {}).get("content") if isinstance(r, dict) and isinstance(r.get("message"), dict) else None
            for b in c if isinstance(c, list) else []:
                if not isinstance(b, dict):
                    continue
                if b.get("type") == "tool_use" and isinstance(b.get("input"), dict) and b["input"].get("run_in_background"):
                    calls[b["id"]] = r["timestamp"]
                elif b.get("type") == "tool_result" and b.get("tool_use_id") in calls:
                    gaps.append((p.name, at(r["timestamp"]) - at(calls.pop(b["tool_use_id"]))))
        assert calls == {}, (p, "a launch with no result")
    assert len(gaps) >= 6
    assert [g for g in gaps if not 0 <= g[1] < 1.0] == []
