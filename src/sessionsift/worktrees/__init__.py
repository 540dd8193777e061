"""Agent worktrees: which exist, who made them, whether anything says they are alive, and
which can be removed with nothing lost (docs/worktrees.md).

- `scan.scan(repos, claude_home=, codex_home=)` -> `ScanReport`: every linked worktree in scope,
  each with its facts (HEAD, branch, size, clean/dirty, commits not on the main line, lock and
  lock reason, the agent and session that made it), the liveness signals and one decision
  (`decide.CATEGORIES`) with its reason.
- `sweep.sweep(report, apply=False)` -> `SweepResult`: the removals (dry run by default).

Layers: gitcmd (git itself), locks (lock reasons), procs (/proc), harness (the clients' own
listings and metadata), decide (the predicates), scan, sweep. Nothing here imports cli/.
"""
