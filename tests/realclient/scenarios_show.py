"""A real-client scenario for what `show SESSION` shows a person on a terminal (issue 27: "the reply
rendered"): the real Claude Code client, print mode, offline, writes a reply whose TEXT is Markdown
(headings, a bulleted and a numbered list, inline code, a fenced code block, a paragraph longer
than a terminal line) carrying hostile parts: terminal escape sequences (SGR colour, an OSC window
title ended by BEL, a cursor move), a bidi override and rich console markup (`[bold]`,
`[link=...]`), all as the API sent them, which the client keeps in the transcript.

`python -m tests.realclient.scenarios_show [--root R]` runs it from a shell.
"""
from __future__ import annotations

import sys
from pathlib import Path

from . import runner
from .mock_api import Turn, text
from .scenarios import Prompt, Scenario, register

MODULE = "tests.realclient.scenarios_show"
DEFAULT_ROOT = Path("/tmp/ssift-rc-show")
NAME = "show_markdown"

HOSTILE = ("\x1b[31mRED-ESC\x1b[0m \x1b]0;PWNED-TITLE\x07 \x1b[2J\x1b[H "
           "[bold]NOT-BOLD[/bold] [link=https://example.com/x]NOT-LINK[/link] \u202eEVIL-BIDI")
MD_REPLY = ("# Summary MDH1\n\n"
            "## Steps MDH2\n\n"
            "- first bullet with `inline_code_here`\n"
            "- second bullet with **strong words**\n\n"
            "1. numbered one\n"
            "2. numbered two\n\n"
            "```python\n"
            "def mdcode():\n"
            "    return 'MDCODE'\n"
            "```\n\n"
            "A paragraph long enough to be broken across lines on an eighty-column terminal, "
            "so that the renderer has to wrap it within the width the view leaves: WRAPEND.\n\n"
            f"Hostile: {HOSTILE}\n")

SHOW_MARKDOWN = Scenario(
    name=NAME,
    mode="print",
    notes="A Markdown reply (headings, lists, inline code, a code fence, a long paragraph) with terminal "
          "escape sequences, a bidi override and rich markup in its text.",
    prompts=[Prompt("Summarise the plan.", turns=[Turn([text(MD_REPLY)])])],
)

register(SHOW_MARKDOWN)
ALL = {SHOW_MARKDOWN.name: SHOW_MARKDOWN}


def run_show_scenario(root: Path = DEFAULT_ROOT, timeout: float = 300) -> dict:
    """Run the scenario inside `unshare -n`; return its ground truth."""
    return runner.run_scenario(NAME, root, timeout=timeout, module=MODULE)


if __name__ == "__main__":
    sys.exit(runner.main(module=MODULE, root=DEFAULT_ROOT, scenario=NAME))
