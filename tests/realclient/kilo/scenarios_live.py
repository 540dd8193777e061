"""Kilo Code scenarios for the live-state questions: opencode's (tests/realclient/opencode/scenarios_live.py,
the same tools and mock), with the environment record widened to Kilo Code's own variables (``KILO_PID``).

Run one with ``runner.start_scenario("tests.realclient.kilo.scenarios_live:<name>", root)``.
"""
from __future__ import annotations

from dataclasses import replace

from ..opencode import scenarios_live as oc
from ..opencode.scenarios import Prompt, Scenario, Step, bash

WHOAMI = oc.WHOAMI.replace("^(OPENCODE|AGENT|", "^(KILO|OPENCODE|AGENT|")

LIVE_HOLD = Scenario(
    name="live_hold",
    title="Live hold",
    notes=oc.LIVE_HOLD.notes,
    prompts=[Prompt("[live_hold P1] Record who runs this, then answer.", [
        Step(calls=[bash(WHOAMI, "Record the environment")]),
        Step(text="Answered after the hold.", gate="reply"),
    ])],
)
LIVE_TOOL = replace(oc.LIVE_TOOL)
LIVE_QUESTION = replace(oc.LIVE_QUESTION, extra_env={"KILO_ENABLE_QUESTION_TOOL": "1"})
"""opencode's, over ``kilo serve``; the switch is Kilo's own (``KILO_ENABLE_QUESTION_TOOL``: its tool registry,
``["app","cli","desktop","vscode"].includes(client) || enableQuestionTool``)."""

ALL = {s.name: s for s in (LIVE_HOLD, LIVE_TOOL, LIVE_QUESTION)}
