"""The documentation says what the code does: every command has an `Example:` in its help and is
described in docs/cli.md's command table and in its family doc; docs/labels.md lists exactly the
label leaves; the README's test command is the one `.ci/run` runs."""
from __future__ import annotations

import importlib
import os
import re
from pathlib import Path

from sessionsift.cli import COMMANDS
from sessionsift.providers.claude.model.labels import LEAVES

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"


def _command(name: str):
    mod, attr = COMMANDS[name].split(":")
    return getattr(importlib.import_module(f"sessionsift.cli.{mod}"), attr)


def _command_table() -> dict[str, str]:
    """command name -> family doc, from docs/cli.md's `## Commands` table."""
    text = (DOCS / "cli.md").read_text()
    section = text.split("## Commands", 1)[1].split("\n## ", 1)[0]
    out: dict[str, str] = {}
    for row in section.splitlines():
        if not row.startswith("| `"):
            continue
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", row)[1:-1]]
        for name in re.findall(r"`([a-z]+)[ `]", cells[0]):
            out[name] = cells[1]
    return out


def test_every_command_has_a_docstring_with_an_example():
    for name in COMMANDS:
        cmd = _command(name)
        assert cmd is not None and cmd.name == name, name
        lines = [l.strip() for l in (cmd.help or "").splitlines()]
        ex = [l for l in lines if l.startswith("Example: sessionsift ")]
        assert ex, f"{name}: no 'Example: sessionsift ...' line in its docstring"
        assert all(l.split()[2] == name for l in ex), (name, ex)


def test_every_command_is_in_the_cli_table_and_its_family_doc():
    table = _command_table()
    assert set(table) == set(COMMANDS), (sorted(set(COMMANDS) - set(table)), sorted(set(table) - set(COMMANDS)))
    for name, fam in table.items():
        assert re.fullmatch(r"docs/[a-z]+\.md", fam), (name, fam)
        doc = (REPO / fam).read_text()
        # a heading or a backticked mention that names the command
        assert re.search(rf"^#+ .*`{name}[ `]|^#+ .*\b{name}\b|`{name}`|`{name} ", doc, re.M), (name, fam)


def test_labels_doc_lists_exactly_the_leaves():
    text = (DOCS / "labels.md").read_text()
    rows = re.findall(r"^\| `([a-z.-]+)` \| (yes|no) \| (yes|no) \|", text, re.M)
    assert len(rows) == len({r[0] for r in rows}), "a leaf is listed twice"
    documented = {r[0]: (r[1] == "yes", r[2] == "yes") for r in rows}
    code = {l.path: (l.llm_visible, l.gated) for l in LEAVES}
    assert documented == code
    assert f"{len(LEAVES)}-leaf" in (REPO / "README.md").read_text()


def _fenced_commands(md: str) -> list[str]:
    return [b.strip() for b in re.findall(r"```sh\n(.*?)```", md, re.S)]


def test_readme_two_commands_are_what_ci_and_a_fresh_clone_run():
    readme = (REPO / "README.md").read_text()
    section = readme.split("## Two commands", 1)[1].split("\n## ", 1)[0]
    cmds = _fenced_commands(section)
    assert len(cmds) == 2, cmds
    demo, tests = cmds
    ci = [l.strip() for l in (REPO / ".ci" / "run").read_text().splitlines()
          if l.strip() and not l.lstrip().startswith("#") and not l.startswith(("set ", "cd "))]
    assert ci == [tests], (ci, tests)
    # a fresh clone: only Python and pip are assumed; both commands create the venv they use
    for c in (demo, tests):
        assert c.startswith("python3 -m venv .venv && .venv/bin/pip install -q -e ")
    assert "pytest" in tests and "'.[test]'" in tests
    # the demo points at the committed corpus, which exists
    for m in re.findall(r"--claude-home (\S+)", demo):
        assert (REPO / m / "projects").is_dir(), m
    # a --home the demo lists links only sample dirs that exist (relative links, so a clone anywhere works)
    for m in re.findall(r"--home (\S+)", demo):
        links = [p for p in (REPO / m).rglob("*") if p.is_symlink()]
        assert links, m
        for link in links:
            target = os.readlink(link)
            assert not os.path.isabs(target) and link.resolve().is_dir(), (link, target)
    # the extra the test command installs is declared
    assert re.search(r"^\s*test\s*=", (REPO / "pyproject.toml").read_text(), re.M)


def test_exit_code_table_is_the_code():
    """docs/cli.md's exit-code table lists exactly the statuses `ExitStatus` defines."""
    from sessionsift.cli.exit import ExitStatus

    text = (DOCS / "cli.md").read_text()
    section = text.split("## Exit codes", 1)[1].split("\n## ", 1)[0]
    documented = {int(m) for m in re.findall(r"^\| (\d+) \|", section, re.M)}
    assert documented == {int(s) for s in ExitStatus}
