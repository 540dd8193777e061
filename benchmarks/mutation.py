"""Mutation testing of the rules that decide answers (not run by .ci/run: minutes per area on two
cores). Each area is a few modules and the tests that hold their rules; mutmut (PyPI, installed
on demand into this venv: ``pip install mutmut``) mutates only the lines those tests cover,
runs them against each mutant and counts the mutants they kill.

    .venv/bin/python benchmarks/mutation.py [AREA ...] [--max-children N] [--limit N]

Every area runs in a scratch copy of the clone (mutmut writes ``mutants/`` beside the sources),
so the worktree is never touched. Prints per area: mutants, killed, survived, timeout, no tests,
score = killed / (killed + survived + no tests) (a mutant no test runs is a surviving one); and
``--json FILE`` writes them. ``--limit N`` takes the first N mutants of each area (by name, so the
same N every run) when the time is bounded; ``--sample N`` takes N spread evenly over them (every
function gets its share), also the same N every run.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

AREAS: dict[str, dict[str, list[str]]] = {
    # one message id is one response: the copy with the largest total, main lane first
    "dedup": {"modules": ["src/sessionsift/usage/events.py"],
              "tests": ["tests/test_usage.py", "tests/test_usage_groups.py", "tests/test_usage_merge_rule.py"]},
    # which record survives a rewind/compaction, and where a turn starts
    "survival_turns": {"modules": ["src/sessionsift/providers/claude/model/lane.py"],
                       "tests": ["tests/test_core_realdata.py", "tests/test_crash_bridges.py",
                                 "tests/test_child_turns.py", "tests/test_index_turns.py",
                                 "tests/test_rewind_survival.py", "tests/test_lane_entry_rules.py",
                                 # the streaming census and the split scan (Skeleton.extend) equal to the index
                                 "tests/test_lane_perf_equivalence.py"]},
    # the clean gates: activity (a client working there, a file held open), age, kept
    "clean_gates": {"modules": ["src/sessionsift/clean/activity.py"],
                    "tests": ["tests/test_clean_activity.py"]},
    # the worktree sweep's decision: removable, blocked, unknown
    "sweep": {"modules": ["src/sessionsift/worktrees/decide.py"],
              "tests": ["tests/test_worktrees.py"]},
    # recover: replaying a file's edits from the transcript
    "recover_replay": {"modules": ["src/sessionsift/providers/claude/files/replay.py"],
                       "tests": ["tests/test_recover_edges.py", "tests/test_recover_file_arg.py",
                                "tests/test_recover_replay_rules.py"]},
}

STATUS = re.compile(r"^\s*(?P<name>\S+): (?P<status>[a-z ]+)$")


def _copy(dst: Path) -> None:
    for name in ("src", "tests", "examples", "pyproject.toml", "docs"):
        p = REPO / name
        if p.is_dir():
            shutil.copytree(p, dst / name, symlinks=True, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        elif p.exists():
            shutil.copy2(p, dst / name)


def _cfg(area: dict[str, list[str]]) -> str:
    def lst(xs: list[str]) -> str:
        return "\n".join(f"    {x}" for x in xs)

    return (f"[mutmut]\nsource_paths=src/sessionsift\nonly_mutate=\n{lst(area['modules'])}\n"
            f"pytest_add_cli_args_test_selection=\n{lst(area['tests'])}\n"
            "pytest_add_cli_args=\n    -q\n    -p\n    no:cacheprovider\n    -x\n"
            "mutate_only_covered_lines=true\nalso_copy=\n    examples\n    docs\n")


def run_area(name: str, area: dict[str, list[str]], children: int, limit: int | None, keep: bool,
             sample: int | None = None) -> dict:
    missing = [t for t in area["modules"] + area["tests"] if not (REPO / t).exists()]
    if missing:
        return {"area": name, "error": f"missing: {', '.join(missing)}"}
    work = Path(tempfile.mkdtemp(prefix=f"ssift-mut-{name}-"))
    t0 = time.time()
    try:
        _copy(work)
        (work / "setup.cfg").write_text(_cfg(area))
        env = {**os.environ, "HOME": str(work / "home"), "PYTHONDONTWRITEBYTECODE": "1"}
        (work / "home").mkdir()
        mm = [sys.executable, "-m", "mutmut"]
        args = [f"--max-children={children}"]
        total = None
        if limit is not None or sample is not None:  # list the mutants first (a run of none generates them)
            subprocess.run(mm + ["run", *args, "none-such*"], cwd=work, env=env, capture_output=True, text=True)
            names = sorted(_statuses(work, mm, env))
            total = len(names)
            if limit is not None:  # the first N by name
                names = names[:limit]
            else:  # N spread evenly over the sorted names (every function gets its share)
                step = max(1.0, len(names) / sample)
                names = sorted({names[int(i * step)] for i in range(min(sample, len(names)))})
            args += names
        p = subprocess.run(mm + ["run", *args], cwd=work, env=env, capture_output=True, text=True)
        st = _statuses(work, mm, env)
        if limit is not None or sample is not None:
            st = {k: v for k, v in st.items() if k in set(args)}
        counts: dict[str, int] = {}
        for v in st.values():
            counts[v] = counts.get(v, 0) + 1
        killed, survived = counts.get("killed", 0), counts.get("survived", 0)
        notests = counts.get("no tests", 0)
        den = killed + survived + notests
        return {"area": name, "modules": area["modules"], "tests": area["tests"], "mutants": len(st),
                "of": total,
                "counts": counts, "score": None if den == 0 else round(killed / den, 3),
                "survivors": sorted(k for k, v in st.items() if v in ("survived", "no tests")),
                "seconds": round(time.time() - t0, 1), "rc": p.returncode,
                **({"stderr_tail": p.stderr[-2000:]} if not st else {})}
    finally:
        if not keep:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print(f"kept {work}", file=sys.stderr)


def _statuses(work: Path, mm: list[str], env: dict) -> dict[str, str]:
    p = subprocess.run(mm + ["results", "--all", "true"], cwd=work, env=env, capture_output=True, text=True)
    out = {}
    for line in p.stdout.splitlines():
        m = STATUS.match(line)
        if m:
            out[m["name"]] = m["status"].strip()
    return out


def _tests(area: dict[str, list[str]], without: list[str]) -> dict[str, list[str]]:
    return {**area, "tests": [t for t in area["tests"] if t not in without]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("areas", nargs="*", default=list(AREAS))
    ap.add_argument("--max-children", type=int, default=2)
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--sample", type=int, default=None,
                    help="N mutants spread evenly over all of the area's (sorted by name, the same N every run)")
    ap.add_argument("--json", default=None)
    ap.add_argument("--keep", action="store_true", help="keep the scratch copy (to read mutmut's mutants)")
    ap.add_argument("--without", action="append", default=[],
                    help="leave this test file out (the score before a test was added)")
    a = ap.parse_args(argv)
    try:
        import mutmut  # noqa: F401
    except ImportError:
        print("mutmut is not installed: .venv/bin/pip install mutmut", file=sys.stderr)
        return 2
    res = []
    for n in a.areas:
        r = run_area(n, _tests(AREAS[n], a.without), a.max_children, a.limit, a.keep, a.sample)
        res.append(r)
        print(json.dumps({k: v for k, v in r.items() if k != "survivors"}), flush=True)
    if a.json:
        Path(a.json).write_text(json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
