"""Prerequisites of a real-client run: one exception type for every harness, the host checks, and
the rule that a missing prerequisite skips naming it, or fails under ``CI=true``."""
from __future__ import annotations

import os
import shutil
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable


class PrerequisiteMissing(RuntimeError):
    """Raised with a message that names exactly which prerequisite is missing."""


def host_problems(tools: Iterable[str] = ("unshare", "ip"), checks: Iterable[Callable[[], str | None]] = (),
                  first: Iterable[Callable[[], str | None]] = ()) -> list[str]:
    """What the host lacks to run a client offline: each of ``first`` (a check returning a problem
    or None), root (for ``unshare -n`` and ``ip link set lo up``), each of ``tools`` on PATH, then,
    only when all those pass, each of ``checks`` and a working ``unshare -n``. The problems, in order."""
    problems = [p for p in (check() for check in first) if p]
    if os.geteuid() != 0:
        problems.append("not root (needed for `unshare -n` and `ip link set lo up`)")
    for tool in tools:
        if not shutil.which(tool):
            problems.append(f"`{tool}` not found on PATH")
    if not problems:
        problems += [p for p in (check() for check in checks) if p]
        r = subprocess.run(["unshare", "-n", "sh", "-c", "ip link set lo up"], capture_output=True, text=True)
        if r.returncode != 0:
            problems.append(f"`unshare -n` does not work here: {r.stderr.strip()[:200]}")
    return problems


def ensure(clientmod: Any, version: str):
    """``clientmod.check_host()`` then ``clientmod.ensure_client(version)``: the client executable, or
    ``PrerequisiteMissing`` naming every problem of the host."""
    problems = clientmod.check_host()
    if problems:
        raise PrerequisiteMissing("; ".join(problems))
    return clientmod.ensure_client(version)


def prereq(fn: Callable, *a, label: str = "real-client", **kw):
    """``fn(*a, **kw)``; on ``PrerequisiteMissing`` skip the test naming it (fail under ``CI=true``)."""
    import pytest

    try:
        return fn(*a, **kw)
    except PrerequisiteMissing as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{label} prerequisite missing under CI=true: {exc}")
        pytest.skip(f"{label} prerequisite missing: {exc}")


def require(clientmod: Any, version: str, label: str = "real-client"):
    """The client executable, or skip (fail under CI=true) naming the missing prerequisite."""
    return prereq(ensure, clientmod, version, label=label)


def poll(cond: Callable[[], Any], timeout: float, what: str, every: float = 0.2):
    """``cond()``'s first truthy value within ``timeout`` seconds, else AssertionError naming ``what``."""
    t0 = time.time()
    while time.time() - t0 < timeout:
        v = cond()
        if v:
            return v
        time.sleep(every)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


def run_parallel(run: Callable[[str], dict], names: Iterable[str], jobs: int) -> list[dict]:
    """``run(name)`` for every name, ``jobs`` at a time (each scenario in its own namespace); in order."""
    names = list(names)
    with ThreadPoolExecutor(max_workers=max(1, min(jobs, len(names)))) as ex:
        return list(ex.map(run, names))


@dataclass
class Corpus:
    """Scenario runs by name (``corpus[name]``, ``for run in corpus``, ``name in corpus``)."""

    root: Any
    client_version: str
    runs: dict = field(default_factory=dict)

    def __getitem__(self, name: str):
        return self.runs[name]

    def __iter__(self):
        return iter(self.runs.values())

    def __contains__(self, name: str) -> bool:
        return name in self.runs
