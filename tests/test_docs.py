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


# --- docs/claims.md: the rules the code relies on, each with its test -------------------------------

CLAIM_ID = re.compile(r"\b(?:BASH|BG|CLS|CMP|ELI|FH|IMG|MISC|NAR|PATH|PLAN|QT|REC|REG|SUB|SYS|TAIL|TURN)"
                      r"-\d{3}(?:\.\.\d{3})?\b")


def _claim_ids(text: str) -> list[str]:
    """Every claim id a text cites; a range ``TURN-022..024`` cites each id in it."""
    out = []
    for m in CLAIM_ID.finditer(text):
        s = m.group()
        if ".." in s:
            head, hi = s.split("..")
            pre, lo = head.rsplit("-", 1)
            out += [f"{pre}-{n:03d}" for n in range(int(lo), int(hi) + 1)]
        else:
            out.append(s)
    return out


def _cited_claims() -> dict[str, set[str]]:
    """claim id -> the files (src/, tests/, docs/) that cite it, docs/claims.md and this file left out."""
    out: dict[str, set[str]] = {}
    for base in ("src", "tests", "docs"):
        for p in sorted((REPO / base).rglob("*")):
            if p.suffix not in (".py", ".md") or not p.is_file() or p == DOCS / "claims.md" or p == Path(__file__):
                continue
            for cid in _claim_ids(p.read_text(errors="replace")):
                out.setdefault(cid, set()).add(str(p.relative_to(REPO)))
    return out


def _claim_entries() -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    cur = None
    for line in (DOCS / "claims.md").read_text().splitlines():
        if line.startswith("## "):
            cur = line[3:].strip()
            assert cur not in out, f"two entries for {cur}"
            out[cur] = {}
        elif cur is not None and line.startswith("- ") and ": " in line:
            k, v = line[2:].split(": ", 1)
            out[cur][k] = v
    return out


def test_a_claim_range_cites_each_id_in_it():
    assert _claim_ids("Survival (REC-033, TURN-022..024)") == ["REC-033", "TURN-022", "TURN-023", "TURN-024"]


def test_every_claim_id_cited_in_the_code_has_an_entry_and_every_entry_is_cited():
    cited, entries = _cited_claims(), _claim_entries()
    src = {c for c, fs in cited.items() if any(f.startswith("src/") for f in fs)}
    assert len(src) > 50, "the scan finds almost no id in src/: it is broken"
    assert sorted(set(cited) - set(entries)) == [], "an id is cited with no entry in docs/claims.md"
    assert sorted(set(entries) - set(cited)) == [], "an entry no file cites any more: drop it"


def test_every_claim_states_its_rule_and_names_the_tests_that_check_it_or_why_none_does():
    defs: dict[str, set[str]] = {}
    for cid, e in _claim_entries().items():
        assert len(e.get("rule", "")) > 30, (cid, "a rule in a sentence")
        assert ("tests" in e) != ("untested" in e), (cid, "either the tests that check it or `untested: why`")
        if "untested" in e:
            assert len(e["untested"]) > 20, (cid, "say why no test checks it")
            continue
        for t in e["tests"].split(", "):
            f, _, fn = t.partition("::")
            assert f.startswith("tests/") and fn, (cid, t)
            if f not in defs:
                p = REPO / f
                assert p.is_file(), (cid, t)
                defs[f] = set(re.findall(r"^def (test\w+)\(", p.read_text(), re.M))
            assert fn in defs[f], (cid, t, "no such test")


def test_no_source_comment_cites_a_ticket_instead_of_its_rule():
    hits = [f"{p.relative_to(REPO)}:{i}" for p in sorted((REPO / "src").rglob("*.py"))
            for i, line in enumerate(p.read_text().splitlines(), 1) if re.search(r"\b[Ii]ssue #?\d+\b|\bseed \d{3}\b", line)]
    assert hits == []
