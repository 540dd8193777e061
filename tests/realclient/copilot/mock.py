"""The Chat Completions mock for running the real GitHub Copilot CLI offline: the shared one
(tests/realclient/common/chat.py) with Copilot's own request shapes.

Copilot CLI in "bring your own key" mode (``COPILOT_PROVIDER_BASE_URL``, wire API ``completions``, the
default) sends every model call to ``POST <base>/chat/completions`` with ``stream: true`` and
``stream_options.include_usage``, always WITH its tools -- its compaction call too. So:

1. a request whose last ``user`` message opens with Copilot's compaction prompt (``Please create a
   detailed summary of the conversation so far``) is a side call: it gets the scenario's summary
   (``route: "summary"``, kept in ``served`` with the usage it reported);
2. every other request is routed by its conversation marker (``[<scenario> P<n>]``, ``SUBAGENT-<X>`` in a
   ``task`` subagent's prompt) and answered with that conversation's NEXT step (a cursor per
   conversation): Copilot compacts in the background and drops messages from the history it sends, so
   counting the assistant messages after the marker (the shared mock's rule) would replay steps.
"""
from __future__ import annotations

from ..common.chat import MODEL, ChatMock, Conversation, SideReply, Step, text_of

__all__ = ["MODEL", "CopilotMock", "Conversation", "Step", "COMPACTION_PROMPT"]

COMPACTION_PROMPT = "Please create a detailed summary of the conversation so far"
SUMMARY_USAGE = {"prompt_tokens": 50, "completion_tokens": 5, "total_tokens": 55}


class CopilotMock(ChatMock):
    def __init__(self, conversations: list[Conversation], namespace: str, summary: str,
                 log_path: str | None = None, dump_dir: str | None = None):
        self.summary = summary
        self._cursor: dict[str, int] = {}
        super().__init__(conversations, namespace, log_path, side=self._side, dump_dir=dump_dir)

    def is_side(self, body: dict) -> bool:
        users = [m for m in body.get("messages") or [] if m.get("role") == "user"]
        return not body.get("tools") or (bool(users) and text_of(users[-1]).lstrip().startswith(COMPACTION_PROMPT))

    def _side(self, body: dict, rec: dict) -> SideReply:
        users = [m for m in body.get("messages") or [] if m.get("role") == "user"]
        if users and text_of(users[-1]).lstrip().startswith(COMPACTION_PROMPT):
            return SideReply("summary", self.summary, dict(SUMMARY_USAGE))
        return SideReply("side", "Done.", {"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11})

    def route(self, body: dict):
        route, conv, n = super().route(body)
        if route != "script" or conv is None:
            return route, conv, n
        with self._lock:
            idx = self._cursor.get(conv.name, 0)
            self._cursor[conv.name] = idx + 1
        return route, conv, idx
