"""Regenerate the committed Gemini CLI sample corpus from real runs of the pinned client.

    .venv/bin/python -m tests.realclient.gemini.make_examples             # every scenario -> examples/
    .venv/bin/python -m tests.realclient.gemini.make_examples --only shell_write,failing --out /tmp/x

What it writes (under --out, default ``examples/``):

* ``gemini-home/``: ONE ``.gemini`` directory (what ``--gemini-home`` names) holding every scenario's
  sessions: ``projects.json`` (all scenarios' entries merged; each scenario's work dir has its own basename,
  hence its own short name), ``tmp/<short name>/chats/...`` with ``.project_root``, the legacy hash-named
  ``tmp/<sha256>/`` dir of ``legacy_migrated``, and ``history/<short name>/.project_root``;
* ``gemini-ground-truth/<scenario>.json``: what each script implies and what was on disk at the end.

Scenario work dirs are ``/tmp/ssift-gem/<scenario>/gem-<scenario>``, so the paths inside the chat files
are the same on every run. Dropped on purpose: ``settings.json`` (harness config, not client data). A
final scan refuses to write anything that looks like the fake API key.
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from . import client as clientmod
from ..common import isolate
from .runner import DEFAULT_ROOT, FAKE_KEY, run_scenario
from .scenarios import ALL

REPO = Path(__file__).resolve().parents[3]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=str(REPO / "examples"))
    ap.add_argument("--root", default=None, help=f"scratch root (default {DEFAULT_ROOT}, this run's own)")
    ap.add_argument("--version", default=clientmod.PINNED_VERSION)
    ap.add_argument("--only", default="")
    ap.add_argument("--jobs", type=int, default=4)
    a = ap.parse_args(argv)
    names = [n for n in a.only.split(",") if n] or list(ALL)
    root = Path(a.root or DEFAULT_ROOT)
    if not a.root:
        rc = isolate.private_fixed_roots([root], "tests.realclient.gemini.make_examples", list(sys.argv[1:] if argv is None else argv))
        if rc is not None:  # the canonical root, as this run's own (common/isolate.py)
            return rc

    def one(n):
        try:
            return n, run_scenario(n, root, a.version), None
        except Exception as exc:  # report which scenario failed and why, keep going
            return n, None, exc

    truths = {}
    with ThreadPoolExecutor(max_workers=a.jobs) as ex:
        for n, gt, exc in ex.map(one, names):
            if exc is not None:
                print(f"  {n}: FAILED: {str(exc)[-800:]}", flush=True)
                continue
            truths[n] = gt
            print(f"  {n}: {gt['seconds']}s, sessions {gt['session_ids']}", flush=True)
    if len(truths) != len(names):
        print("not writing examples: some scenarios failed", file=sys.stderr)
        return 1
    out = Path(a.out)
    home, gt_dir = out / "gemini-home", out / "gemini-ground-truth"
    for d in (home, gt_dir):
        if d.exists():
            shutil.rmtree(d)
        d.mkdir(parents=True)
    projects: dict[str, str] = {}
    for n, gt in sorted(truths.items()):
        src = Path(gt["gemini_dir"])
        for sub in ("tmp", "history"):
            if (src / sub).is_dir():
                shutil.copytree(src / sub, home / sub, dirs_exist_ok=True)
        projects.update(json.loads((src / "projects.json").read_text())["projects"])
        (gt_dir / f"{n}.json").write_text(json.dumps(gt, indent=2, sort_keys=True) + "\n")
    (home / "projects.json").write_text(json.dumps({"projects": dict(sorted(projects.items()))}, indent=2))
    for f in list(home.rglob("*")) + list(gt_dir.rglob("*")):
        if f.is_file() and FAKE_KEY.encode() in f.read_bytes():
            raise SystemExit(f"refusing: {f} holds the fake API key")
    print(f"wrote {home} and {gt_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
