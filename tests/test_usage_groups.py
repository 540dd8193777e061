"""`usage --by project|model`: an assistant message that recorded no usage is counted on the row
of its own project / model, never on another group's row of the same day. Data: examples/home
(Claude Code, Codex CLI, Gemini CLI and opencode written by the real clients; Crush databases
built by Crush's own migrations, tests/crush/vendor/SOURCE.md). Crush records no per-message
usage at all, opencode's killed session one assistant message without a step-finish."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stdout
from pathlib import Path

from sessionsift.cli import main

REPO = Path(__file__).resolve().parent.parent
HOME = REPO / "examples" / "home"
CRUSH_TRUTH = json.loads((REPO / "examples" / "crush-ground-truth.json").read_text())


def run(args: list[str]) -> tuple[int, list[dict]]:
    buf = io.StringIO()
    with redirect_stdout(buf):
        try:
            main(args)
        except SystemExit as exc:
            code = int(exc.code or 0)
        else:
            code = 0
    return code, [json.loads(x) for x in buf.getvalue().splitlines() if x.strip()]


def _rows(by: str) -> list[dict]:
    code, rows = run(["usage", "daily", "--home", str(HOME), "--by", by, "--format", "json", "--timezone", "UTC"])
    assert code == 0
    return [r for r in rows if r["kind"] == "period"]


def _unpaid_per_provider() -> dict[str, int]:
    """From the per-session report (each session row names its one provider)."""
    code, rows = run(["usage", "session", "--home", str(HOME), "--format", "json", "--timezone", "UTC"])
    assert code == 0
    out: dict[str, int] = {}
    for r in rows:
        if r["kind"] == "session" and r["messages_without_usage"]:
            out[r["provider"]] = out.get(r["provider"], 0) + r["messages_without_usage"]
    return out


def test_unpaid_messages_sit_on_their_own_providers_rows():
    want = _unpaid_per_provider()
    assert want == {"crush": 9, "opencode": 1, "kilo-code": 1}
    for by in ("project", "provider"):
        got: dict[str, int] = {}
        for r in _rows(by):
            if r["messages_without_usage"]:
                # a row that counts a message without usage holds that message's provider
                assert len(r["providers"]) == 1, (by, r["group"], r["providers"])
                p = r["providers"][0]
                got[p] = got.get(p, 0) + r["messages_without_usage"]
        assert got == want, by


def test_crush_projects_have_rows_of_their_own():
    rows = _rows("project")
    crush = {r["group"]: r for r in rows if r["providers"] == ["crush"]}
    # the two project directories Crush's databases were made in
    assert set(crush) == set(CRUSH_TRUTH["projects"].values())
    for r in crush.values():
        assert (r["messages"], r["total_tokens"], r["cost_usd"]) == (0, None, None)
    codex = [r for r in rows if r["providers"] == ["codex"]]
    assert codex and all(r["messages_without_usage"] == 0 for r in codex)


def test_by_model_keeps_codex_rows_free_of_other_providers_messages():
    rows = _rows("model")
    gpt = [r for r in rows if r["group"] == "gpt-5.5"]
    assert len(gpt) == 1
    assert (gpt[0]["providers"], gpt[0]["messages_without_usage"], gpt[0]["cost_complete"]) == (["codex"], 0, True)
    # Crush's, opencode's, pi's, Qwen Code's, Copilot CLI's and Kilo Code's mocks all answer as `mock-model`: the
    # messages without usage (Crush's, opencode's and Kilo Code's killed mid-stream step; every pi, Qwen Code and
    # Copilot CLI response recorded its usage) are on that model's row, each provider named
    unpaid = [(r["group"], r["providers"], r["messages_without_usage"]) for r in rows if r["messages_without_usage"]]
    assert unpaid == [("mock-model", ["copilot-cli", "crush", "kilo-code", "opencode", "pi", "qwen-code"], 11)]
