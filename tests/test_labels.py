"""Taxonomy and selector expansion (CLS-001)."""

import pytest

from sessionsift.errors import UsageError
from sessionsift.providers.claude.model.labels import LEAVES, all_selectors, expand_selector, expand_selectors


def test_33_leaves_three_roles():
    assert len(LEAVES) == 33
    roles = {l.path.split(".")[0] for l in LEAVES}
    assert roles == {"user", "agent", "harness"}
    assert sum(l.path.startswith("harness.") for l in LEAVES) == 20


def test_dot_segment_prefix_not_string_prefix():
    assert expand_selector("agent.thinking") == {"agent.thinking", "agent.thinking.narration"}
    assert expand_selector("agent.thinking.narration") == {"agent.thinking.narration"}
    assert "harness.meta.system" in expand_selector("harness.meta")
    assert "user.message" not in expand_selector("user.m*") - {"user.message"}


def test_bare_role_expands_to_llm_visible_only():
    u = expand_selector("user")
    assert u == {"user.message", "user.answer", "user.rejection"}
    assert "user.queued" not in u and "user.unsent" not in u


def test_glob_and_exclude():
    sel = expand_selectors(["harness.notification.*"], ["harness.notification.monitor"])
    assert sel == {"harness.notification.background-command", "harness.notification.subagent",
                   "harness.notification.task"}
    assert expand_selectors([], []) is None
    d = expand_selectors([], ["agent"])
    assert "agent.message" not in d and "user.message" in d and "harness.meta.attachment" not in d


def test_unknown_label_lists_valid_ones():
    with pytest.raises(UsageError) as ei:
        expand_selector("nosuchleaf")
    msg = str(ei.value)
    assert "user.message" in msg and "harness.meta.stop-hooks" in msg
    assert len(all_selectors()) > 33


def test_the_search_kinds_are_the_label_readers_and_the_default_takes_shared_kinds_and_roles_only():
    """-t/-T go to the reader whose labels the selectors take (Provider.record_labels: Claude Code's);
    a registry without one answers with the base default, which knows shared kinds and roles only
    (no client writes such a registry: the classes are called directly)."""
    from sessionsift.providers import having, load
    from sessionsift.providers.base import Provider
    from sessionsift.providers.searchquery import selected_kinds

    assert having("record_labels") == ("claude-code",)
    assert selected_kinds(("user.answer",), ()) == frozenset({"tool_result"})
    assert load("claude-code").selected_kinds(("agent",), ("agent.thinking",)) == frozenset(
        {"message", "tool_call", "tool_result"})
    assert Provider.selected_kinds((), ("reasoning",)) == frozenset({"prompt", "message", "tool_call", "tool_result"})
    assert Provider.selected_kinds(("harness", "user"), ()) == frozenset({"meta", "prompt"})
    with pytest.raises(UsageError, match=r"unknown selector 'user.answer': use a shared kind \(prompt, message"):
        Provider.selected_kinds(("user.answer",), ())
