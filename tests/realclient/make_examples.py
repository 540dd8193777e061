"""Regenerate the committed sample corpus in ``examples/`` from real Claude Code runs.

    .venv/bin/python -m tests.realclient.make_examples            # all scenarios, pinned client -> examples/
    .venv/bin/python -m tests.realclient.make_examples --version 2.1.332 --out /tmp/ssift-examples-2.1.332

What it writes (under --out, default ``examples/``):

* ``claude-home/``   laid out like a CLAUDE_CONFIG_DIR: ``projects/<encoded-cwd>/<session>.jsonl``,
  ``<session>/subagents/agent-*.jsonl`` + ``.meta.json``, ``file-history/``, ``plans/``, ``tasks/``,
  ``history.jsonl`` (all scenarios merged; session ids never collide);
* ``claude-tmp/<encoded-cwd>/<session>/tasks/<id>.output``: background-task output files, which the client
  writes to ``/tmp/claude-<uid>/`` (outside CLAUDE_CONFIG_DIR);
* ``live-snapshots/<scenario>/<label>/sessions/<pid>.json``: the live registry rows captured while a
  turn was held busy (the client deletes them on exit, so they are not in claude-home);
* ``ground-truth/<scenario>.json``: what each script implies and what was on disk at the end;
* ``mock-logs/<scenario>.jsonl``: every request the mock API saw;
* ``crash/<mutation>.jsonl`` + ``crash/manifest.json``: crash artefacts (see mutations.py);
* ``CENSUS.md`` / ``census.json``: the record shapes the corpus holds.

Dropped on purpose: ``.claude.json`` (+ backups), ``settings.json``, ``plugins/``, ``shell-snapshots/``,
``session-env/``, ``*.key`` files (a local IPC secret), caches.  A final scan refuses to write anything that
looks like an API key.
"""
from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from . import census as censusmod
from . import client as clientmod
from .common import isolate
from .mutations import MUTATIONS
from .runner import DEFAULT_ROOT, FAKE_KEY, run_scenario
from .scenarios import ALL

REPO = Path(__file__).resolve().parents[2]
KEEP_DIRS = ("projects", "file-history", "plans", "tasks", "todos")
SECRET_RE = re.compile(rb"sk-ant-[A-Za-z0-9_-]{8,}|ANTHROPIC_API_KEY=\S+")


def run_all(names: list[str], root: Path, version: str, jobs: int = 4) -> dict[str, dict]:
    def one(n):
        try:
            return n, run_scenario(n, root, version), None
        except Exception as exc:  # keep going: report which scenario failed and why
            return n, None, exc
    out = {}
    with ThreadPoolExecutor(max_workers=jobs) as ex:
        for n, gt, exc in ex.map(one, names):
            if exc is not None:
                print(f"  {n}: FAILED: {str(exc)[-600:]}", flush=True)
                continue
            out[n] = gt
            print(f"  {n}: {gt['seconds']}s, sessions {gt['session_ids_on_disk']}", flush=True)
    return out


def assemble(out: Path, root: Path, gts: dict[str, dict]) -> None:
    home = out / "claude-home"
    for sub in ("claude-home", "claude-tmp", "live-snapshots", "ground-truth", "mock-logs", "crash"):
        if (out / sub).exists():
            shutil.rmtree(out / sub)
    home.mkdir(parents=True)
    history = []
    for name in sorted(gts):
        cfg = root / name / "config"
        for d in KEEP_DIRS:
            if (cfg / d).is_dir():
                shutil.copytree(cfg / d, home / d, dirs_exist_ok=True,
                                ignore=shutil.ignore_patterns("*.key"))
        if (cfg / "history.jsonl").is_file():
            history.append((cfg / "history.jsonl").read_bytes())
        ctmp = Path(gts[name].get("client_tmp_dir", "/nonexistent"))
        if ctmp.is_dir():
            copy_client_tmp(ctmp, out / "claude-tmp" / ctmp.name, cfg, home)
        snaps = root / name / "snapshots"
        for f in sorted(snaps.rglob("*.json")):
            dst = out / "live-snapshots" / name / f.relative_to(snaps)
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(f, dst)
        (out / "ground-truth").mkdir(exist_ok=True)
        gt = dict(gts[name])
        gt["example_transcripts"] = [str(Path("claude-home") / t) for t in gt["transcripts"]]
        (out / "ground-truth" / f"{name}.json").write_text(json.dumps(gt, indent=2, sort_keys=True) + "\n")
        (out / "mock-logs").mkdir(exist_ok=True)
        shutil.copy2(root / name / "mock-requests.jsonl", out / "mock-logs" / f"{name}.jsonl")
    if history:
        (home / "history.jsonl").write_bytes(b"".join(history))
    make_crash(out, gts)
    c = censusmod.census(home)
    (out / "census.json").write_text(json.dumps(c, indent=2, sort_keys=True) + "\n")
    md = censusmod.to_markdown(c, title=f"Census of examples/claude-home (Claude Code {next(iter(gts.values()))['client_version']})")
    md += "\n## Scenarios\n\n| scenario | mode | session | project dir |\n| --- | --- | --- | --- |\n"
    for name in sorted(gts):
        g = gts[name]
        md += f"| {name} | {g['mode']} | `{g['session_id']}` | `{g['project_dir']}` |\n"
    (out / "CENSUS.md").write_text(md)
    scan_secrets(out)


def copy_client_tmp(src: Path, dst: Path, cfg: Path, home: Path) -> None:
    """Copy task output files; a symlink into the config dir (async agents' output -> their transcript)
    becomes a relative symlink into examples/claude-home, as the client made it."""
    import os
    for f in sorted(src.rglob("*")):
        rel = f.relative_to(src)
        d = dst / rel
        if f.is_symlink():
            target = Path(os.readlink(f))
            d.parent.mkdir(parents=True, exist_ok=True)
            if target.is_absolute() and str(target).startswith(str(cfg) + "/"):
                os.symlink(os.path.relpath(home / target.relative_to(cfg), d.parent), d)
            else:
                shutil.copy2(f, d)
        elif f.is_file():
            d.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(f, d)


def make_crash(out: Path, gts: dict[str, dict]) -> None:
    """Crash artefacts from the files_basic main transcript (or the first scenario's)."""
    src_name = "files_basic" if "files_basic" in gts else sorted(gts)[0]
    g = gts[src_name]
    src = out / "claude-home" / f"{g['project_dir']}/{g['session_id']}.jsonl"
    data = src.read_bytes()
    crash = out / "crash"
    crash.mkdir(parents=True, exist_ok=True)
    manifest = {"source": str(src.relative_to(out)), "source_bytes": len(data), "mutations": {}}
    for mname, fn in MUTATIONS.items():
        mutated, info = fn(data)
        (crash / f"{mname}.jsonl").write_bytes(mutated)
        manifest["mutations"][mname] = {"file": f"crash/{mname}.jsonl", "doc": (fn.__doc__ or "").strip(),
                                        **info}
    (crash / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")


def scan_secrets(out: Path) -> None:
    bad = []
    for f in out.rglob("*"):
        if f.is_file():
            b = f.read_bytes()
            if SECRET_RE.search(b) or FAKE_KEY.encode() in b or f.suffix == ".key":
                bad.append(str(f))
    if bad:
        raise SystemExit(f"refusing: files look like they hold secrets: {bad}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--version", default=clientmod.PINNED_VERSION)
    ap.add_argument("--out", default=str(REPO / "examples"))
    ap.add_argument("--root", default=None, help="scratch root for the runs (default /tmp/ssift-rc, or "
                                                  "/tmp/ssift-rc-<version> for a non-pinned version, "
                                                  "mounted as this run's own: common/isolate.py)")
    ap.add_argument("--only", nargs="*", help="scenario names (default: all)")
    ap.add_argument("--jobs", type=int, default=4)
    ap.add_argument("--allow-failures", action="store_true", help="assemble even if some scenarios failed")
    a = ap.parse_args(argv)
    root = Path(a.root) if a.root else (DEFAULT_ROOT if a.version == clientmod.PINNED_VERSION
                                        else Path(f"/tmp/ssift-rc-{a.version}"))
    if not a.root:  # the canonical root, as this run's own (no other run sees or touches it)
        rc = isolate.private_fixed_roots([root], "tests.realclient.make_examples",
                                         list(sys.argv[1:] if argv is None else argv))
        if rc is not None:
            return rc
    names = a.only or list(ALL)
    t0 = time.time()
    print(f"running {len(names)} scenarios with Claude Code {a.version} under {root}", flush=True)
    gts = run_all(names, root, a.version, a.jobs)
    failed = sorted(set(names) - set(gts))
    if failed and a.version == clientmod.PINNED_VERSION and not a.allow_failures:
        print(f"scenarios failed: {failed}; examples/ left unchanged")
        return 1
    assemble(Path(a.out), root, gts)
    print(f"wrote {a.out} in {time.time() - t0:.0f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
