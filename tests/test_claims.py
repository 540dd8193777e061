"""Citations a reader can follow: every catalog claim id cited in the code, the tests or the docs
has its entry in docs/claims.md (statement, where cited, the tests that cite it), every test an
entry names exists, and no source comment cites a ticket ("issue 16") instead of its rule."""

from __future__ import annotations

import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "scripts"))
import claims_catalog as CC  # noqa: E402


def _entries() -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    cur = None
    for line in (REPO / "docs" / "claims.md").read_text().splitlines():
        if line.startswith("## "):
            cur = line[3:].strip()
            out[cur] = []
        elif cur is not None and line.strip():
            out[cur].append(line)
    return out


def test_every_cited_claim_id_has_an_entry_with_a_statement():
    entries = _entries()
    cited = set(CC.citations())
    assert cited, "no claim id found: the scan is broken"
    assert sorted(cited - set(entries)) == [], "a new claim id is cited: add its entry (scripts/claims_catalog.py)"
    for cid, lines in entries.items():
        st = [x for x in lines if x.startswith("- statement: ")]
        assert len(st) == 1 and len(st[0]) > len("- statement: ") + 10, cid


def test_a_range_cites_each_id_in_it():
    assert CC.ids_in("Survival (REC-033, TURN-022..024)") == ["REC-033", "TURN-022", "TURN-023", "TURN-024"]


def test_every_test_an_entry_names_exists():
    for cid, lines in _entries().items():
        (t,) = [x for x in lines if x.startswith("- tests: ")]
        names = t[len("- tests: "):]
        if names == "none cites it":
            continue
        for n in names.split(", "):
            assert (REPO / n).is_file(), (cid, n)


def test_no_source_comment_cites_a_ticket_instead_of_its_rule():
    hits = [f"{p.relative_to(REPO)}:{i}" for p in sorted((REPO / "src").rglob("*.py"))
            for i, line in enumerate(p.read_text().splitlines(), 1) if re.search(r"\b[Ii]ssue #?\d+\b", line)]
    assert hits == []
