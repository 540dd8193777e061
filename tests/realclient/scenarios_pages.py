"""A real-client scenario for what an exported page shows a person (issue 27): the real Claude Code
client, print mode, offline, writes replies whose TEXT is Markdown (a heading, a list, a table, a
code fence, a link, an image) carrying hostile parts (raw `<script>`, an `onerror` image, a
`javascript:` link, a remote image address), and runs a command whose output holds terminal colour
escapes (ESC bytes the client writes into the transcript as they came).

`python -m tests.realclient.scenarios_pages [--root R]` runs it from a shell.
"""
from __future__ import annotations

import sys
from pathlib import Path

from . import runner
from .mock_api import Turn, text, tool
from .scenarios import Prompt, Scenario, register

MODULE = "tests.realclient.scenarios_pages"
DEFAULT_ROOT = Path("/tmp/ssift-rc-pages")
NAME = "export_pages"

MD_REPLY = ("## Plan MDHEAD\n\n"
            "1. **first** step with `inline code`\n"
            "2. second step\n\n"
            "| file | lines |\n|---|---|\n| app.py | 12 |\n\n"
            "```python\nprint('MDCODE')\n```\n\n"
            "See [the docs](https://example.com/docs) and [this](javascript:alert('PWNED-LINK')).\n\n"
            "![remote](https://example.com/track.png)\n\n"
            "<script>document.title='PWNED-MD'</script><img src=x onerror=\"document.title='PWNED-MDIMG'\">\n")
COLOUR_CMD = r"printf '\033[31mRED-TEXT\033[0m plain \033]0;PWNED-TITLE\007 done\n'"

EXPORT_PAGES = Scenario(
    name=NAME,
    mode="print",
    notes="A Markdown reply with hostile parts; a command printing ANSI colour and an OSC title sequence; "
          "a second prompt answered in plain text (two turns to navigate).",
    prompts=[
        Prompt("Plan the work.", turns=[Turn([text(MD_REPLY)])]),
        Prompt("Show colours.", how="continue", turns=[
            Turn([tool("Bash", command=COLOUR_CMD, description="Print colours")]),
            Turn([text("Printed.")]),
        ]),
    ],
)

register(EXPORT_PAGES)
ALL = {EXPORT_PAGES.name: EXPORT_PAGES}


def run_pages_scenario(root: Path = DEFAULT_ROOT, timeout: float = 300) -> dict:
    """Run the scenario inside `unshare -n`; return its ground truth."""
    return runner.run_scenario(NAME, root, timeout=timeout, module=MODULE)


if __name__ == "__main__":
    sys.exit(runner.main(module=MODULE, root=DEFAULT_ROOT, scenario=NAME))
