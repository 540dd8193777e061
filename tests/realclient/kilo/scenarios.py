"""The Kilo Code scenarios: opencode's (tests/realclient/opencode/scenarios.py; Kilo Code is built from
opencode's code and offers the same ``write``/``edit``/``bash``/``task`` tools), plus a kill while a tool
call runs.

A prompt's marker is ``[<scenario> P<n>]`` as for opencode, so the same scripts and mock serve both.
"""
from __future__ import annotations

from ..opencode import scenarios as oc
from ..opencode.scenarios import Prompt, Scenario, Step, bash, write

ALL: dict[str, Scenario] = {n: s for n, s in oc.ALL.items() if n != "live"}

ALL["killed_tool"] = Scenario(
    name="killed_tool",
    title="Killed mid-tool",
    prompts=[Prompt("[killed_tool P1] Write a file, then wait for a slow command.", [
        Step(calls=[write("before-kill.txt", "this landed before the kill\n")]),
        Step(calls=[bash("echo started; sleep 60; echo never", "Wait a minute")]),
        Step(text="never reached"),
    ])],
    kill_after=(0, 1),
    notes=["the client is SIGKILLed 1.5 s after the mock served the `sleep 60` bash call: the tool part is left "
           "`running` (no output, no time.end) and its message has no time.completed"],
)

SAMPLE = ("shell_write", "continued", "failing", "subagent", "killed", "killed_tool", "compacted")
"""The scenarios of the committed sample (examples/kilo-home)."""
FIXTURE = ("shell_write", "continued", "subagent", "killed_tool", "compacted")
"""The session fixture's (one run per test run, three at a time): `failing` and `killed` (mid-stream) are
opencode's own checks on the same code, run by tests/test_opencode_realclient.py, and are checked on the
committed sample here."""
