"""HAND-MADE PLUMBING, NOT A CLIENT FORMAT. A minimal outside reader registered the way an
outside package registers one (an entry point in the ``sessionsift.providers`` group, written as
a dist-info directory on the path by the tests), to test the providers LAYER: coverage states,
root rules, cross-provider target resolution and the generic commands. Its file format is made
up here (one JSON object per line, fields named after the shared Record) and says nothing about
any real client; tests of real clients' formats use their own real-client corpora.

Layout: ``<root>/sessions/<session-id>.jsonl``; the first line may carry ``cwd``.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

from sessionsift.providers.base import (Discovery, FileChange, Problem, Provider, ReadReport, Record, Root,
                                        SessionRef, Tokens)


class Plumb(Provider):
    name = "plumb"
    display = "Plumbing (test)"
    home_flag = "--root plumb=DIR"
    env_var = "PLUMB_HOME"
    default_rel = ".plumb"

    def discover(self, root: Root) -> Discovery:
        d = root.path / "sessions"
        try:
            names = sorted(os.listdir(d))
        except FileNotFoundError:
            return Discovery([], self.coverage(root, "absent", 0, f"no {d}"))
        except OSError as exc:
            return Discovery([], self.coverage(root, "unreadable", None, f"{d}: {exc.strerror}"))
        refs = []
        for n in names:
            if not n.endswith(".jsonl"):
                continue
            p = d / n
            first = {}
            try:
                with open(p, "rb") as f:
                    first = json.loads(f.readline() or b"{}")
            except (OSError, ValueError):
                pass
            refs.append(SessionRef(self.name, n[:-6], [p], project=first.get("cwd"), size=p.stat().st_size,
                                   first_at=first.get("ts"), parent_session_id=first.get("parent")))
        return Discovery(refs, self.coverage(root, "ok", len(refs)))

    def read(self, ref: SessionRef, report: ReadReport, *, raw: bool = False):
        p = ref.paths[0]
        report.files += 1
        try:
            data = p.read_bytes()
        except OSError as exc:
            report.problems.append(Problem(str(p), exc.strerror or str(exc)))
            return
        report.bytes += len(data)
        for no, line in enumerate(data.split(b"\n")[:-1] if data.endswith(b"\n") else data.split(b"\n"), 1):
            try:
                o = json.loads(line)
            except ValueError:
                report.malformed_lines.append(f"{p}:{no}")
                continue
            kind = o.get("kind", "unknown")
            if kind == "unknown":
                report.unknown_kinds[o.get("native", "?")] += 1
            t = o.get("tokens")
            ch = o.get("change")
            report.records += 1
            yield Record(
                provider=self.name, session_id=ref.session_id, locator=f"L{no}", role=o.get("role", "harness"),
                kind=kind, native=o.get("native", kind), path=str(p), line=no, instant=o.get("ts"),
                text=o.get("text"), tool_name=o.get("tool"), tool_input=o.get("input"), call_id=o.get("call"),
                exit_code=o.get("exit"), is_error=o.get("err"), model=o.get("model"), copy_of=o.get("copy_of"),
                tokens=Tokens(input=t.get("in"), output=t.get("out"), dedup_key=t.get("key"),
                              cumulative=bool(t.get("cum"))) if t else None,
                file_changes=(FileChange(ch["path"], ch.get("action", "update"), new_content=ch.get("new"),
                                         diff=ch.get("diff")),) if ch else (),
                raw=o if raw else None)


class Broken(Provider):
    """A reader whose discovery raises: the answer must go on, with this provider unreadable."""

    name = "broken"
    display = "Broken (test)"
    home_flag = "--root broken=DIR"
    default_rel = ".broken"

    def discover(self, root: Root) -> Discovery:
        raise RuntimeError("boom")


def register(site: Path, *, missing: bool = False, broken: bool = False) -> dict:
    """Write a dist-info registering Plumb (and optionally a missing module and a broken reader)
    under ``site``; returns the env additions that put it and this repo on the path."""
    di = site / "ssift_plumbing-0.0.dist-info"
    di.mkdir(parents=True, exist_ok=True)
    (di / "METADATA").write_text("Metadata-Version: 2.1\nName: ssift-plumbing\nVersion: 0.0\n")
    eps = ["[sessionsift.providers]", "plumb = tests.plumbing_provider:Plumb"]
    if missing:
        eps.append("acme = ssift_no_such_module_acme:Acme")
    if broken:
        eps.append("broken = tests.plumbing_provider:Broken")
    (di / "entry_points.txt").write_text("\n".join(eps) + "\n")
    repo = Path(__file__).resolve().parents[1]
    return {"PYTHONPATH": os.pathsep.join([str(site), str(repo)])}


def write_session(root: Path, sid: str, records: list[dict]) -> Path:
    d = root / "sessions"
    d.mkdir(parents=True, exist_ok=True)
    p = d / f"{sid}.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in records))
    return p
