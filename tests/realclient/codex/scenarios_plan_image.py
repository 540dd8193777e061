"""A Codex CLI scenario for `plan` and `image`: the model keeps a plan with ``update_plan`` (three
calls: the steps, one in progress, all completed), the prompt attaches an image file
(``codex exec --image=red.png``), and the model views another with ``view_image``. 0.171.0's
`exec` offers ``update_plan`` only with ``-c tools.update_plan.enabled=true`` (without it the call is
answered "unsupported call: update_plan", measured).

Run: ``python -m tests.realclient.codex.runner tests.realclient.codex.scenarios_plan_image:plan_image --root R``."""
from __future__ import annotations

from ..common.images import BLUE, RED
from .mock_api import Turn, call, say
from .scenarios import W, Prompt, Scenario, exec_cmd

STEPS = ["Look at the images", "Write notes.txt", "Report"]


def plan(statuses: list[str], explanation: str | None = None) -> dict:
    args: dict = {"plan": [{"step": s, "status": st} for s, st in zip(STEPS, statuses)]}
    if explanation:
        args["explanation"] = explanation
    return call("update_plan", **args)


PLAN_IMAGE = Scenario(
    name="plan_image",
    notes="P1 attaches red.png (--image); the model calls update_plan (3 steps, the first in progress), views "
          "blue.png with view_image, updates the plan (two completed), writes notes.txt with the shell, marks "
          "every step completed, answers.",
    setup_files={"red.png": RED, "blue.png": BLUE},
    config=["tools.update_plan.enabled=true"],  # 0.171.0 `exec` offers no update_plan otherwise ("unsupported call")
    prompts=[Prompt("Look at the attached image and blue.png, then write notes.txt.", flags=["--image=red.png"],
                    turns=[
        Turn([plan(["in_progress", "pending", "pending"], "Three steps.")]),
        Turn([call("view_image", path=f"{W}/blue.png")]),
        Turn([plan(["completed", "in_progress", "pending"])]),
        Turn([exec_cmd("echo 'red and blue' > notes.txt")]),
        Turn([plan(["completed", "completed", "completed"], "Done.")]),
        Turn([say("red.png is red, blue.png is blue; notes.txt written.")]),
    ])],
)

ALL: dict[str, Scenario] = {s.name: s for s in (PLAN_IMAGE,)}
