"""`export markdown|html` stream the document (export/stream.py: rendered and written as the
session is read, memory bounded by what waits for a tool result) and must write exactly what the
whole-document path (``render(build(...))``, kept as the oracle) gives: byte for byte, on every
session of every real-client corpus in examples/ (all five providers, both Claude Code clients
with their subagent lanes nested under the spawning call, the legacy Codex and opencode layouts,
the crash artefacts), plain and redacted, with children listed -- and again with every waiting
tool call written through a slot (``MAX_WAIT`` below zero), the path a call whose result comes
megabytes later takes. Only the export's time stamp may differ between two renderings."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from sessionsift.export import document as D, html as H, markdown as M, stream as ST
from sessionsift.providers.scope import RootRequest, select, survey
from sessionsift.export.source import pairs

EX = Path(__file__).resolve().parent.parent / "examples"
STAMP = re.compile(r"exported \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")


def _requests(crash_home: Path) -> list[RootRequest]:
    return [RootRequest(home=str(EX / "home")),
            RootRequest(roots={"claude-code": str(EX / "newest-client" / "2.1.332" / "claude-home")}),
            RootRequest(roots={"codex": str(EX / "codex-legacy-home")}),
            RootRequest(roots={"opencode": str(EX / "opencode-legacy-home")}),
            RootRequest(roots={"claude-code": str(crash_home)})]


@pytest.fixture(scope="module")
def sessions(tmp_path_factory):
    crash = tmp_path_factory.mktemp("crash-home")
    proj = crash / "projects" / "-crash"
    proj.mkdir(parents=True)
    for f in (EX / "crash").glob("*.jsonl"):
        shutil.copy(f, proj / f.name)
    out = [pr for rq in _requests(crash) for pr in pairs(select(survey(rq), []))]
    provs = {ref.provider for _, ref in out}
    assert provs == {"claude-code", "codex", "gemini-cli", "opencode", "crush", "pi", "qwen-code", "copilot-cli",
                     "kilo-code"}, provs
    return out


def _red(text: str) -> tuple[str, int]:
    return text.replace("a", "*"), text.count("a")


@pytest.mark.parametrize("max_wait", [ST.MAX_WAIT, -1])
@pytest.mark.parametrize("mod", [M, H], ids=["markdown", "html"])
def test_streamed_equals_whole_document(sessions, tmp_path, monkeypatch, mod, max_wait):
    monkeypatch.setattr(ST, "MAX_WAIT", max_wait)
    nested = slots = 0
    for i, (prov, ref) in enumerate(sessions):
        for redact in (None, _red):
            kids = [(ref, "../x/child.md")]
            doc = D.build(prov, ref, redact=redact)
            want = STAMP.sub("exported -", mod.render(doc, kids, secrets=3))
            dest = tmp_path / f"{i}-{redact is not None}.out"
            sdoc, title = ST.write_document(mod, prov, ref, dest, redact=redact, children=kids, secrets=3)
            got = STAMP.sub("exported -", dest.read_bytes().decode("utf-8"))
            assert got == want, (ref.provider, ref.session_id, redact is not None)
            assert title == H.title_of(doc)
            assert list(sdoc.lanes) == list(doc.lanes)
            assert (sdoc.counts, sdoc.redacted, sdoc.images_shown, sdoc.binary_attachments) == (
                doc.counts, doc.redacted, doc.images_shown, doc.binary_attachments)
            nested += len(D.nested_lanes(doc))
            slots += sum(1 for ln in doc.lanes.values() for t in ln.turns for b in t.blocks
                         if b.kind == "tool" and b.result is not None)
    assert nested >= 4 and slots >= 50  # subagent lanes nested, results folded: the cases that wait
    assert not list(tmp_path.glob(".tmp-*"))  # the spool and the temp file are gone


def test_a_result_that_never_comes_and_one_that_comes_twice(tmp_path, monkeypatch):
    """A call whose result never comes is written without one (as the whole-document path does);
    a second result of a call id is a block of its own, under either path. Hand-made records (no
    client writes a call id's result twice on purpose): a real Claude Code transcript
    (examples/claude-home's files_basic session) with one result line duplicated and another cut."""
    import orjson

    src = next((EX / "claude-home" / "projects").rglob("*.jsonl"))
    lines = src.read_bytes().splitlines(keepends=True)
    res = [i for i, ln in enumerate(lines) if b'"tool_result"' in ln and b'"tool_use_id"' in ln]
    assert len(res) >= 2, src
    dup = orjson.loads(lines[res[0]])
    dup["uuid"] = "0000dddd-0000-4000-8000-00000000d0d0"  # not a copy of the first: a second result
    lines.insert(res[0] + 1, orjson.dumps(dup) + b"\n")
    del lines[res[-1] + 1]
    home = tmp_path / "home"
    (home / "projects" / "-p").mkdir(parents=True)
    (home / "projects" / "-p" / src.name).write_bytes(b"".join(lines))
    (prov, ref), = pairs(select(survey(RootRequest(roots={"claude-code": str(home)})), []))
    for mw in (ST.MAX_WAIT, -1):
        monkeypatch.setattr(ST, "MAX_WAIT", mw)
        for mod in (M, H):
            want = STAMP.sub("-", mod.render(D.build(prov, ref)))
            ST.write_document(mod, prov, ref, tmp_path / "o")
            assert STAMP.sub("-", (tmp_path / "o").read_text(encoding="utf-8")) == want
    doc = D.build(prov, ref)
    kinds = [b.kind for ln in doc.lanes.values() for t in ln.turns for b in t.blocks]
    assert "result" in kinds  # the duplicated result stands on its own
    assert any(b.kind == "tool" and b.result is None for ln in doc.lanes.values() for t in ln.turns for b in t.blocks)
