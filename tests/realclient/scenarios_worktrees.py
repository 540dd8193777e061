"""Scenarios for `worktrees scan|sweep`, run with the REAL client's `--worktree NAME` option.

The client's work dir is made a git repository (one commit on `main`) before the client starts, so
`claude --worktree NAME` creates a real git worktree under `<work>/.claude/worktrees/NAME` on branch
`worktree-NAME` and locks it with its own auto-generated reason
`claude session NAME (pid <pid> start <ticks>)` (2.1.258, Linux). Everything else is the harness's
(runner.Inner): the mock, `env -i`, `unshare -n`.

`start(name, root)` returns the running runner without waiting (as scenarios_live), so a test can
observe the client while it is live: its registry row, its /proc/<pid>/cwd and its argv.

`start_codex_worktree_session(root)` does the same for Codex CLI 0.171.0's `codex exec --worktree`.
"""
from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

from . import client as clientmod
from .codex import client as codex_client, runner as codex_runner
from .common import host, netns
from .mock_api import Conversation, Turn, text, tool
from .runner import inside as runner_inside, run_scenario, start_scenario
from .scenarios import Prompt, Scenario, register

MODULE = "tests.realclient.scenarios_worktrees"

GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.invalid", "GIT_CONFIG_NOSYSTEM": "1", "HOME": "/nonexistent"}

WT_DIRTY = register(Scenario(
    name="wt_print_dirty",
    mode="print",
    extra_args=["--worktree", "wt-dirty"],
    notes="print mode, --worktree wt-dirty: the session leaves an untracked file in its worktree and ends.",
    prompts=[Prompt("Write a note in the worktree.", turns=[
        Turn([tool("Bash", command="echo from-the-session > note.txt; pwd", description="Write a note")]),
        Turn([text("Wrote the note.")]),
    ])],
))

WT_COMMIT = register(Scenario(
    name="wt_print_commit",
    mode="print",
    extra_args=["--worktree", "wt-commit"],
    notes="print mode, --worktree wt-commit: the session commits a file on its branch (not merged) and ends.",
    prompts=[Prompt("Commit a note on the worktree branch.", turns=[
        Turn([tool("Bash", command="echo committed > note.txt && git add note.txt && "
                   "git -c user.name=s -c user.email=s@example.invalid commit -q -m 'session note'",
                   description="Commit a note")]),
        Turn([text("Committed the note.")]),
    ])],
))

WT_CLEAN = register(Scenario(
    name="wt_print_clean",
    mode="print",
    extra_args=["--worktree", "wt-clean"],
    notes="print mode, --worktree wt-clean: the session only reads and ends; its worktree is clean and merged.",
    prompts=[Prompt("Look around the worktree.", turns=[
        Turn([tool("Bash", command="ls; git status --short", description="Look around")]),
        Turn([text("Nothing to change.")]),
    ])],
))

WT_LIVE = register(Scenario(
    name="wt_live_hold",
    mode="interactive",
    extra_args=["--worktree", "wt-live"],
    notes="interactive with --worktree wt-live; a foreground `sleep 10` holds the turn busy so a test "
          "can observe the live client (registry row, /proc/<pid>/cwd, argv) and the lock it wrote.",
    prompts=[Prompt("Run the slow command in the worktree.", turns=[
        Turn([tool("Bash", command="sleep 10; echo held", description="Held busy")]),
        Turn([text("Done.")]),
    ])],
))


WT_AGENT = register(Scenario(
    name="wt_agent",
    mode="print",
    notes="print mode, no --worktree: the session runs a subagent with isolation=worktree that leaves an "
          "untracked file in its isolated worktree.",
    prompts=[Prompt("Use an isolated helper.", turns=[
        Turn([tool("Agent", description="Isolated helper", subagent_type="general-purpose",
                   prompt="SUBAGENT-WT: write a note", isolation="worktree")]),
        Turn([text("The helper worked in its own worktree.")]),
    ])],
    subagents=[Conversation("SUBAGENT-WT", name="agent-wt", turns=[
        Turn([tool("Bash", command="echo from-the-agent > agent-note.txt; pwd", description="Write a note")]),
        Turn([text("Wrote agent-note.txt.")]),
    ])],
))


def git_init(work: Path) -> None:
    env = {"PATH": "/usr/bin:/bin"} | GIT_ENV
    (work / "README").write_text("a repository for the worktree scenarios\n")
    for args in (["init", "-q", "-b", "main"], ["add", "README"], ["commit", "-q", "-m", "initial"]):
        subprocess.run(["git", *args], cwd=work, env=env, check=True)


def inside(name: str, root: Path, exe: str) -> None:
    """runner.inside with one step more: the work dir becomes a git repository first."""
    runner_inside(name, root, exe, setup=lambda inner: git_init(inner.work))


def run(name: str, root: Path, version: str = clientmod.PINNED_VERSION) -> dict:
    return run_scenario(name, root, version, module=MODULE)


def start(name: str, root: Path, version: str = clientmod.PINNED_VERSION):
    return start_scenario(name, root, version, module=MODULE)


def paths(name: str, root: Path) -> dict:
    s_dir = Path(root) / name
    return {"work": s_dir / "work", "config": s_dir / "config", "home": s_dir / "home"}

WT_PRINT_HOLD = register(Scenario(
    name="wt_print_hold",
    mode="print",
    extra_args=["--worktree", "wt-print-live"],
    notes="print mode with --worktree wt-print-live; a foreground `sleep 12` holds the run so a test can "
          "observe a live print-mode session in its worktree.",
    prompts=[Prompt("Run the slow command in the worktree.", turns=[
        Turn([tool("Bash", command="sleep 12; echo held", description="Held busy")]),
        Turn([text("Done.")]),
    ])],
))


# --- Codex CLI: `codex exec --worktree` ------------------------------------------------------------

CODEX_VERSION = "0.171.0"


CODEX_CONFIG = codex_runner.CONFIG.format(model=codex_runner.MODEL, base_url="http://127.0.0.1:9/v1", extra="")
"""The Codex harness's config, its provider on a port nothing listens on."""


def start_codex_worktree_session(root: Path, prompt: str = "look around") -> tuple[subprocess.Popen, dict]:
    """Start `codex exec --worktree` in a fresh git repository, offline (`unshare -n`, loopback only,
    `env -i`, HOME and CODEX_HOME in `root`). Nothing listens on its provider's port, so the real
    session stays alive - its worktree made, its thread lock held - waiting for its model, until
    the caller ends it (its own process group, by id)."""
    exe = host.ensure(codex_client, CODEX_VERSION)
    repo, home, chome = root / "repo", root / "home", root / "codex-home"
    for d in (repo, home, chome):
        d.mkdir(parents=True)
    git_init(repo)
    (chome / "config.toml").write_text(CODEX_CONFIG)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "CODEX_HOME": str(chome), "MOCK_API_KEY": "x",
           "TERM": "dumb", "LANG": "C.UTF-8"}
    inner = "ip link set lo up && exec env -i " + " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items()) + \
        f" {shlex.quote(str(exe))} exec --skip-git-repo-check --dangerously-bypass-approvals-and-sandbox" \
        f" --worktree {shlex.quote(prompt)}"
    log = open(root / "codex.log", "w")
    p = subprocess.Popen(["unshare", "-n", "sh", "-c", inner], cwd=str(repo), stdout=log, stderr=subprocess.STDOUT,
                         stdin=subprocess.DEVNULL, start_new_session=True)
    return p, {"repo": repo, "home": home, "codex_home": chome, "log": root / "codex.log", "exe": exe}


def stop_group(p: subprocess.Popen) -> None:
    """End a process started with start_new_session=True: its own group, by id."""
    netns.stop_group(p, timeout=15)
