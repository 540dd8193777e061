"""The Chat Completions mock for running the real opencode offline: the shared one
(tests/realclient/common/chat.py) with opencode's side calls.

Routing of a completion request (see tests/realclient/opencode/README.md):

1. no ``tools`` in the body: a side call -> opencode's title agent gets the scenario's title, its
   compaction ("context summarization") agent the scenario's summary;
2. with ``tools``: the mock finds the LAST ``user`` message whose text holds one of the script's
   conversation markers (``[<scenario> P<n>]`` for a prompt, ``SUBAGENT-<X>`` for a ``task`` child
   session), counts the ``assistant`` messages after it and answers with that conversation's step
   number n. Past the end of the script it answers ``Done.`` with ``stop``.

Every request is logged as one JSON line (route, conversation, step, tool names, message count),
and every served step is remembered with the usage it reported: the ground truth of tokens.
"""
from __future__ import annotations

from ..common.chat import (MODEL, ChatMock, Conversation, SideReply, Step, call_id, chunk, default_usage,
                           usage_chunk)
from ..common.chat import text_of as _text_of

__all__ = ["MODEL", "MockChat", "Conversation", "Step", "call_id", "chunk", "default_usage", "usage_chunk",
           "_text_of"]


class MockChat(ChatMock):
    unique_ids = False

    def __init__(self, conversations: list[Conversation], namespace: str, title: str = "Mock title",
                 log_path: str | None = None, port: int = 0, summary: str = "Summary: a file was written."):
        self.title = title
        self.summary = summary
        super().__init__(conversations, namespace, log_path, port, side=self._side)

    def _side(self, body: dict, rec: dict) -> SideReply:
        # opencode's title agent writes no message; its compaction agent writes the summary as an
        # assistant message of the session: its usage is remembered (ground truth)
        # Kilo Code's compaction agent (the same code under its own prompt) sends the history as the last
        # user message: "Here is the conversation so far: <conversation>..."
        summary = "summarization" in rec.get("first_system", "") or \
            (rec.get("last_user") or "").startswith("Here is the conversation so far")
        return SideReply("summary" if summary else "title", self.summary if summary else self.title,
                         {"prompt_tokens": 50, "completion_tokens": 5, "total_tokens": 55})
