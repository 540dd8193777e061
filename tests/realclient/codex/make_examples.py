"""Regenerate the committed Codex CLI sample corpus ``examples/codex-home`` from real runs.

    .venv/bin/python -m tests.realclient.codex.make_examples            # pinned client -> examples/
    .venv/bin/python -m tests.realclient.codex.make_examples --version 0.169.0 --out /tmp/codex-0.169.0
    .venv/bin/python -m tests.realclient.codex.make_examples --legacy     # 0.50.0 -> examples/codex-legacy-home

Every scenario runs once, one after another, against ONE shared CODEX_HOME (so the client's own
``state_5.sqlite`` / ``thread_history_1.sqlite`` hold every thread, as on a real machine). Written
under --out (default ``examples/``):

* ``codex-home/``: what ``--codex-home`` points at: ``sessions/YYYY/MM/DD/rollout-*.jsonl``,
  ``archived_sessions/`` (the ``failing_command`` thread, archived by ``codex archive``), and the two
  side stores. The side stores are checkpointed copies: the scratch home's main file, ``-wal`` and
  ``-shm`` are copied together, then opened once in the copy so SQLite folds the WAL into the main
  file (the client is not running; the live files are never touched), then VACUUMed; the empty
  ``-wal`` and the ``-shm`` beside them are what a read-only reader leaves (committed, so reading
  the corpus leaves the clone clean).
  One rollout (``compaction``) is stored only as ``.jsonl.zst`` (compressed here with ``zstandard``,
  as Codex stores old rollouts), and the ``killed`` rollout also gets a ``.jsonl.zst`` sibling that
  the plain file shadows.
* ``codex-ground-truth/<scenario>.json``: what each script implies (see README.md); paths in it are
  the scratch paths of the run, ``example_rollouts`` the paths inside ``codex-home``.
* ``codex-mock-logs/<scenario>.jsonl``: every request the mock saw.

Trimmed: ``session_meta.payload.base_instructions.text`` (the client's long system prompt, ~20 KB
per rollout) is cut to its first 160 characters plus a marker. The reader does not use it; the
script reads every rollout before and after trimming and refuses to write if any record differs
in anything but ``raw``/``offset``/``length``.
Dropped: ``config.toml`` (mock port), ``installation_id``, ``skills/`` (the client's bundled system
skills), ``logs_2/goals_1/memories_1/queue_1.sqlite``, ``shell_snapshots/``, ``.tmp/``, locks.
"""
from __future__ import annotations

import argparse
import json
import re
import shutil
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

from . import client as clientmod
from ..common import isolate
from .runner import FAKE_KEY, run_scenario
from .scenarios import ALL, LEGACY_ALL

REPO = Path(__file__).resolve().parents[3]
SIDE_STORES = ("state_5.sqlite", "thread_history_1.sqlite")
COMPRESS_ONLY = "compaction"
COMPRESS_SIBLING = "killed"
TRIM = 160
LEGACY_VERSION = "0.50.0"


def run_all(names: list[str], root: Path, home: Path, version: str) -> dict[str, dict]:
    out = {}
    for n in names:
        gt = run_scenario(n, root, version, codex_home=home)
        out[n] = gt
        print(f"  {n}: {gt['seconds']}s, {len(gt['rollouts'])} rollout(s)", flush=True)
    return out


def checkpointed_copy(src: Path, dst: Path) -> None:
    """Copy a quiescent WAL database with its -wal/-shm, then fold the WAL into the copy."""
    tmp = Path(tempfile.mkdtemp(prefix="ssift-codex-db-"))
    try:
        for suffix in ("", "-wal", "-shm"):
            if Path(str(src) + suffix).exists():
                shutil.copy2(str(src) + suffix, tmp / (src.name + suffix))
        con = sqlite3.connect(tmp / src.name)
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        con.execute("VACUUM")
        con.close()
        shutil.copy2(tmp / src.name, dst)
    finally:
        shutil.rmtree(tmp)


def trim_line(first: bytes) -> bytes:
    o = json.loads(first)
    bi = o.get("payload", {}).get("base_instructions")
    if isinstance(bi, dict) and isinstance(bi.get("text"), str) and len(bi["text"]) > TRIM:
        n = len(bi["text"])
        bi["text"] = bi["text"][:TRIM] + f" [... trimmed by make_examples: {n} characters in the original]"
    elif isinstance(bi, str) and len(bi) > TRIM:
        o["payload"]["base_instructions"] = bi[:TRIM] + f" [... trimmed by make_examples: {len(bi)} characters]"
    return json.dumps(o, separators=(",", ":"), ensure_ascii=False).encode()


def reading(home: Path) -> list[tuple]:
    """Every record of every session under ``home`` as comparable tuples (not raw/offset/length)."""
    from sessionsift.providers.base import ReadReport, Root
    from sessionsift.providers.codex import Codex

    c = Codex()
    d = c.discover(Root(home, "make_examples"))
    out = []
    for ref in sorted(d.sessions, key=lambda r: r.session_id):
        rep = ReadReport()
        for r in c.read(ref, rep):
            out.append((ref.session_id, r.locator, r.role, r.kind, r.native, r.instant, r.text, r.tool_name,
                        json.dumps(r.tool_input, sort_keys=True, default=str), r.call_id, r.exit_code, r.is_error,
                        r.file_changes, r.tokens, r.model, r.copy_of, r.turn))
        out.append((ref.session_id, "report", rep.records, rep.duplicates, dict(rep.unknown_kinds),
                    rep.omissions()))
    return out


def assemble(out: Path, scratch_home: Path, root: Path, gts: dict[str, dict], prefix: str = "codex") -> None:
    import zstandard

    home = out / f"{prefix}-home"
    for sub in (f"{prefix}-home", f"{prefix}-ground-truth", f"{prefix}-mock-logs"):
        if (out / sub).exists():
            shutil.rmtree(out / sub)
    home.mkdir(parents=True)
    for sub in ("sessions", "archived_sessions"):
        if (scratch_home / sub).is_dir():
            shutil.copytree(scratch_home / sub, home / sub)
    for db in SIDE_STORES:
        if (scratch_home / db).exists():
            checkpointed_copy(scratch_home / db, home / db)
    before = reading(home)
    for f in sorted(home.rglob("rollout-*.jsonl")):
        data = f.read_bytes()
        nl = data.index(b"\n")
        f.write_bytes(trim_line(data[:nl]) + data[nl:])
    after = reading(home)
    if before != after:
        diff = next(i for i, (a, b) in enumerate(zip(before, after)) if a != b) if len(before) == len(after) else -1
        raise SystemExit(f"refusing: trimming base_instructions changed the reading (first difference at {diff})")
    cctx = zstandard.ZstdCompressor(level=19)
    for name, keep_plain in ((COMPRESS_ONLY, False), (COMPRESS_SIBLING, True)):
        if name not in gts:
            continue
        for rel in gts[name]["rollouts"]:
            f = home / rel
            f.with_name(f.name + ".zst").write_bytes(cctx.compress(f.read_bytes()))
            if not keep_plain:
                f.unlink()
    (out / f"{prefix}-ground-truth").mkdir()
    (out / f"{prefix}-mock-logs").mkdir()
    for name, gt in sorted(gts.items()):
        gt = dict(gt)
        gt["example_rollouts"] = [
            str(Path(f"{prefix}-home") / rel) + (".zst" if name == COMPRESS_ONLY else "") for rel in gt["rollouts"]]
        (out / f"{prefix}-ground-truth" / f"{name}.json").write_text(json.dumps(gt, indent=2, sort_keys=True) + "\n")
        shutil.copy2(root / name / "mock-requests.jsonl", out / f"{prefix}-mock-logs" / f"{name}.jsonl")
    scan_secrets(out, prefix)


def scan_secrets(out: Path, prefix: str = "codex") -> None:
    bad = []
    pat = re.compile(rb"sk-(?!mock-)[A-Za-z0-9_-]{16,}")
    for sub in (f"{prefix}-home", f"{prefix}-ground-truth", f"{prefix}-mock-logs"):
        for f in (out / sub).rglob("*"):
            if f.is_file():
                b = f.read_bytes()
                if FAKE_KEY.encode() in b or pat.search(b) or f.name in ("auth.json", "installation_id"):
                    bad.append(str(f))
    if bad:
        raise SystemExit(f"refusing: files look like they hold secrets or ids: {bad}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--version", default=clientmod.PINNED_VERSION)
    ap.add_argument("--out", default=str(REPO / "examples"))
    ap.add_argument("--root", default=None, help="scratch root for the runs (default /tmp/ssift-codex, or "
                                                  "/tmp/ssift-codex-<version> for another version: a fixed "
                                                  "path, so the recorded cwds are the same each time)")
    ap.add_argument("--only", nargs="*", help="scenario names (default: all)")
    ap.add_argument("--legacy", action="store_true", help=f"the older-release corpus: Codex CLI {LEGACY_VERSION} "
                    "and the legacy scenarios -> examples/codex-legacy-home (unless --version is given)")
    a = ap.parse_args(argv)
    if a.legacy and a.version == clientmod.PINNED_VERSION:
        a.version = LEGACY_VERSION
    root = Path(a.root) if a.root else Path(
        "/tmp/ssift-codex" if a.version == clientmod.PINNED_VERSION else f"/tmp/ssift-codex-{a.version}")
    if not a.root:
        rc = isolate.private_fixed_roots([root], "tests.realclient.codex.make_examples", list(sys.argv[1:] if argv is None else argv))
        if rc is not None:  # the canonical root, as this run's own (common/isolate.py)
            return rc
    scratch_home = root / "shared-codex-home"
    if scratch_home.exists():
        shutil.rmtree(scratch_home)
    names = a.only or list(LEGACY_ALL if a.legacy else ALL)
    t0 = time.time()
    print(f"running {len(names)} Codex CLI {a.version} scenarios under {root} (one shared CODEX_HOME)", flush=True)
    gts = run_all(names, root, scratch_home, a.version)
    prefix = "codex-legacy" if a.legacy else "codex"
    assemble(Path(a.out), scratch_home, root, gts, prefix)
    print(f"wrote {a.out}/{prefix}-home in {time.time() - t0:.0f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
