"""serve's heavy answers are made in worker processes (serve/worker.py), not in the server: the live
page's status of every session in one long-lived worker (which keeps Claude Code's per-file reads
between generations), each usage report in a process of its own. What a page shows must be what
the same library calls made in the server show: the live page's rows and counts and the usage
page, over a copy of examples/home (transcripts the real clients wrote), before and after the real
client's transcript is appended. The selector is the CLI's own (`cmd_serve._selection` over an
Invocation: what `sessionsift serve` hands the store)."""

from __future__ import annotations

import functools
import json
import os
import shutil
from pathlib import Path

import pytest

pytest.importorskip("starlette")

from sessionsift.cli.cmd_serve import _selection  # noqa: E402
from sessionsift.cli.invocation import Invocation  # noqa: E402
from sessionsift.serve import live, usage  # noqa: E402
from sessionsift.serve.store import Store  # noqa: E402
from sessionsift.serve.worker import KEEP  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def home(tmp_path, monkeypatch):
    for k in ("HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME"):
        monkeypatch.setenv(k, str(tmp_path / k.lower()))  # the workers are spawned with this environment
    for k in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME", "OPENCODE_DB", "KILO_DB"):
        monkeypatch.delenv(k, raising=False)
    h = tmp_path / "store"
    shutil.copytree(REPO / "examples" / "home", h, symlinks=False)
    return h


def _forget_live_reads() -> None:
    from sessionsift.providers.claude.live import todos
    from sessionsift.providers.claude.live import verdict as V

    V._SCANS.clear()
    V._TAIL_CACHE.clear()
    todos._TODO_CACHE.clear()


def _append_prompt(path: Path, text: str) -> None:
    """A new prompt after the transcript's last record, in the shape of the real client's first
    prompt of that file (its own keys; a new uuid, the last record as its parent)."""
    lines = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    proto = next(o for o in lines if o.get("type") == "user" and isinstance((o.get("message") or {}).get("content"), str))
    last = [o for o in lines if isinstance(o.get("uuid"), str)][-1]
    o = dict(proto, uuid="0badc0de-2828-4828-8828-000000000029", parentUuid=last["uuid"],
             message=dict(proto["message"], content=text))
    with open(path, "a") as f:
        f.write(json.dumps(o) + "\n")


def _json(ans) -> tuple:
    return [v.to_json() for v in ans.shown], ans.counts, ans.not_shown


def test_the_live_and_usage_answers_made_in_workers_are_the_servers_own(home):
    sel = functools.partial(_selection, Invocation("serve", home=str(home)))
    worked = Store(sel, workers=True)
    try:
        _forget_live_reads()
        got = live.state(worked)
        from sessionsift.providers.claude.live import verdict as V

        assert len(V._SCANS) == 0  # no session was assessed in this process: the worker did it
        pages = {q: usage.render(worked, dict(q)) for q in ((), (("period", "weekly"), ("by", "model")))}
        here = Store(sel)
        want = live.state(here)
        assert len(V._SCANS) > 0  # made here, the same question keeps each session's scan here
        assert got == want
        assert got["counts"] == {"idle-background-open": 1, "idle-eot": 57, "stale-dead": 9, "unknown": 1}
        assert len(got["rows"]) == 68
        for q, body in pages.items():
            assert body == usage.render(here, dict(q))
        t = home / ".claude" / "projects" / "-tmp-ssift-rc-files-basic-work" / "8414eb07-cca2-5cca-9059-e9baedac31e1.jsonl"
        now = 1_900_000_000.0
        last = {k: live._ts(r.last_at) for k, r in worked.snapshot().by_key.items()}
        first = _json(worked.compute(KEEP, live.answer, last, now))
        _append_prompt(t, "a turn the live worker reads 28")
        for s in (worked, here):
            s.bump([str(t)])
        got = live.state(worked)
        assert got == live.state(here)
        row = next(r for r in got["rows"] if r["session_id"] == t.stem)
        assert row["last_prompt"] == "a turn the live worker reads 28"
        kept = _json(worked.compute(KEEP, live.answer, last, now))  # the worker's kept scans, after the append
        _forget_live_reads()
        assert kept == _json(live.answer(sel(()), last, now)) != first
        assert worked.workers is not None
        pids = [p.pid for p in worked.workers._pools["keep"]._processes.values()]
        assert len(pids) == 1 and pids[0] != os.getpid()
    finally:
        assert worked.workers is not None
        worked.workers.close()
