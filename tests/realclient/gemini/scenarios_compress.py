"""A Gemini CLI scenario for `verbatim`: an automatic chat compression written by the real client.

Gemini CLI 0.61.0 compresses before a model request when the last prompt's token count passes
``model.compressionThreshold`` x the model's token limit (1,048,576 for gemini-2.5-pro; default
threshold 0.5; chatCompressionService.js). The scenario sets the threshold to 0.002 (2,097 tokens) so
that a real compression happens on a small mock: prompt 1's shell call prints about 12,000 characters;
no request of prompt 1 passes the threshold (its last prompt count before the long output is the
context and the prompt only), and prompt 2 (``--resume latest``, in a later minute) starts with the
resumed history's estimate (about 3,500 tokens) above it, so the client compresses the whole of
prompt 1 into a summary (two calls without tools: the summary, then its verification; the mock
answers both with ``SUMMARY``), starts a new chat from it and writes the new history into the session
file (``{"$set": {"messages": [<context>, <summary as a user message>, "Got it. Thanks for the
additional context!"]}}``).

Run: ``python -m tests.realclient.gemini.runner tests.realclient.gemini.scenarios_compress:compressed --root R``."""
from __future__ import annotations

from .mock_api import Turn, text
from .scenarios import Prompt, Scenario, sh

LONG = "seq 1 2500"
SUMMARY = ("<state_snapshot>\n<overall_goal>List the numbers 1 to 2500 and report how many there are."
           "</overall_goal>\n<key_knowledge>seq 1 2500 printed 2500 lines.</key_knowledge>\n</state_snapshot>")

COMPRESSED = Scenario(
    "compressed",
    [Prompt("List the numbers from 1 to 2500 with seq and say how many lines there are.", [
        Turn([sh(LONG, "print 2500 numbers")]),
        Turn([text("There are 2500 lines.")]),
    ]), Prompt("Now say which number came last.", [
        Turn([text("The last number was 2500.")]),
    ], how="resume", new_minute=True)],
    settings={"model": {"compressionThreshold": 0.002}},
    summary=SUMMARY,
    notes="prompt 2 resumes a history above model.compressionThreshold: the client compresses prompt 1's "
          "turn into the mock's summary before prompt 2's first request and appends the new history as a "
          "$set.messages (its context, the summary as a user message, the client's fixed acknowledgement)",
    exit_codes={LONG: 0},
)

ALL = {"compressed": COMPRESSED}
