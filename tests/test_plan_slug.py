"""A plan is bound by the first record carrying a VALID slug (docs/claims.md PLAN-006, PLAN-007:
`^[a-z0-9][a-z0-9-]{0,119}$`). Hand-made records: the pinned client always writes a valid slug, so
no offline run can make it write another; the records are the builder of tests/test_recover_edges.py."""
from __future__ import annotations

from sessionsift.providers.claude.files import plan as plan_mod
from tests.test_recover_edges import T, scope


def test_an_invalid_slug_is_skipped_and_counted_and_the_first_valid_one_binds(tmp_path):
    t = T()
    t._base("user", message={"role": "user", "content": "x"}, slug="Not-A-Slug")
    t._base("user", message={"role": "user", "content": "y"}, slug="-leading-dash")
    t._base("user", message={"role": "user", "content": "z"}, slug="a" * 121)
    t._base("user", message={"role": "user", "content": "w"}, slug="good-slug-2")
    t._base("user", message={"role": "user", "content": "v"}, slug="later-slug")
    home = t.write(tmp_path / "home")
    b = plan_mod.bind(scope(home))[0]
    assert (b.source, b.slug, b.line) == ("slug", "good-slug-2", 4)
    assert b.plan_path == str(home / "plans" / "good-slug-2.md") and b.minted_at_compaction is False
    assert "3 record(s) carry an invalid slug (PLAN-007), skipped" in b.notes


def test_no_valid_slug_binds_nothing_and_says_so(tmp_path):
    t = T()
    t._base("user", message={"role": "user", "content": "x"}, slug="UPPER")
    b = plan_mod.bind(scope(t.write(tmp_path / "home")))[0]
    assert (b.source, b.plan_path, b.plan_exists) == (None, None, None)
    assert b.notes[-2:] == ["1 record(s) carry an invalid slug (PLAN-007), skipped",
                            "no plan_mode attachment and no valid slug: no plan is bound"]
