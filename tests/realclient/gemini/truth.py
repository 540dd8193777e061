"""Comparing what the reader says about a scenario with the scenario's ground truth (the script that
drove the real client, plus what the mock served and what was on disk). Used by the tests on both the
fresh runs (``gemini_corpus``) and the committed corpus (``gemini_examples``)."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from sessionsift.providers import get
from sessionsift.providers.base import Discovery, ReadReport, Record, SessionRef


@dataclass
class Read:
    ref: SessionRef
    records: list[Record]
    report: ReadReport

    @property
    def originals(self) -> list[Record]:
        return [r for r in self.records if r.copy_of is None]

    def of(self, kind: str) -> list[Record]:
        return [r for r in self.originals if r.kind == kind]


@dataclass
class ScenarioRead:
    main: Read
    subagents: list[Read] = field(default_factory=list)


def provider():
    p = get("gemini-cli")
    assert p is not None, "the gemini-cli entry point did not load"
    return p


def discover(gemini_dir: Path) -> Discovery:
    p = provider()
    return p.discover(p.locate(explicit=str(gemini_dir)))


def read_ref(ref: SessionRef, raw: bool = False) -> Read:
    rep = ReadReport()
    recs = list(provider().read(ref, rep, raw=raw))
    return Read(ref, recs, rep)


def scenario_read(disc: Discovery, gt: dict) -> ScenarioRead:
    mains = [r for r in disc.sessions if r.session_id in gt["session_ids"] and r.parent_session_id is None]
    assert len(mains) == 1, f"{gt['scenario']}: expected one main session, found {[r.session_id for r in mains]}"
    subs = [read_ref(r) for r in disc.sessions if r.parent_session_id == mains[0].session_id]
    return ScenarioRead(read_ref(mains[0]), subs)


def conv_of(read: Read, gt: dict) -> list[str]:
    """The scripted conversations a session's records come from (main: P1.., a subagent: its marker)."""
    if read.ref.parent_session_id is None:
        return [f"P{i + 1}" for i in range(len(gt["prompts"]))]
    return [c["conversation"] for c in gt["responses"] if not c["conversation"].startswith("P")]


def expected_calls(gt: dict, convs: list[str]) -> list[dict]:
    order = {c: i for i, c in enumerate(convs)}
    calls = [c for c in gt["tool_calls"] if c["conversation"] in order and c["served"]]
    return sorted(calls, key=lambda c: (order[c["conversation"]], c["turn"], c["part"]))


def expected_tokens(gt: dict, convs: list[str]) -> list[dict]:
    """The usage the mock sent for every response the client received in full, normalised the way the
    reader documents it (input without the cached share, output with the thinking tokens)."""
    order = {c: i for i, c in enumerate(convs)}
    out = []
    for r in sorted((r for r in gt["responses"] if r["conversation"] in order and r["completed"]),
                    key=lambda r: (order[r["conversation"]], r["turn"])):
        u = r["usage"]
        cached = u.get("cachedContentTokenCount", 0)
        th = u.get("thoughtsTokenCount", 0)
        out.append({"input": u["promptTokenCount"] - cached, "cache_read": cached,
                    "output": u["candidatesTokenCount"] + th, "reasoning": th, "total": u["totalTokenCount"]})
    return out


def tokens_seen(read: Read) -> list[dict]:
    return [{"input": r.tokens.input, "cache_read": r.tokens.cache_read, "output": r.tokens.output,
             "reasoning": r.tokens.reasoning, "total": r.tokens.total}
            for r in read.originals if r.tokens is not None]


def expected_file_states(gt: dict, calls: list[dict]) -> list[tuple[str, str]]:
    """(path, whole file content after the call) for every scripted write_file/replace that succeeds,
    starting from the files the scenario set up before the session."""
    cur = dict(gt["setup_files"])
    out = []
    for c in calls:
        a = c["args"]
        if c["name"] == "write_file":
            cur[a["file_path"]] = a["content"]
            out.append((a["file_path"], a["content"]))
        elif c["name"] == "replace":
            old = cur.get(a["file_path"])
            if old is not None and old.count(a["old_string"]) == 1:
                cur[a["file_path"]] = old.replace(a["old_string"], a["new_string"])
                out.append((a["file_path"], cur[a["file_path"]]))
    return out
