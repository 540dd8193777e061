"""`stats`, `usage daily` and `list` over many Codex CLI sessions: read from their records (index off),
the first run with the index on (read, and each session's answers kept: index/kept.py), and warm
(kept answers given back), with ripgrep over the same files in the same run.

    .venv/bin/python benchmarks/kept.py [--shape small|large|forked] [--copies 600] [--repeat 3]

Stores (benchmarks/_corpus/kept-codex-*/, gitignored), all from the real Codex CLI client's
sample (examples/codex-home/sessions, its uncompressed rollouts), every copy's ids (the client's
UUIDv7 ids, in the file name and inside) new, so every session is distinct:

- `small` (kept-codex-<copies>): every rollout copied `--copies` times over 28 day folders.
- `large` (kept-codex-large-<sessions>x<mb>): `--sessions` rollouts of ~`--mb` MB each: the
  sample's rollouts' records (session_meta first, once) followed by the records after it of every
  sample rollout, repeated until the size is reached (the same call ids recur within a session).
- `forked` (kept-codex-forked-<copies>): per copy, each sample rollout as a parent and two forks
  of it. A fork is written as a new rollout whose session_meta is the parent's with a new id and
  `forked_from_id` = the parent's id (as `codex exec fork` writes it, tests/realclient/codex
  `forked`), then a copy of every record of the parent after its session_meta (record ids and
  call ids shared with the parent, as clients that copy the history into the new rollout write
  it -- Codex 0.171.0 itself copies none: hand-made in that respect), then another sample rollout's
  records as the fork's own.

Nothing here is a timed test.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import sys
import tempfile
import time
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from speed import PY, SSIFT, machine, run  # noqa: E402

SRC = HERE.parent / "examples" / "codex-home" / "sessions" / "2026" / "12" / "01"
ID = re.compile(rb"01a230e8-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def build(dst: Path, copies: int) -> Path:
    home = dst / ".codex"
    mark = dst / f".built-{copies}"
    if mark.exists():
        return home
    shutil.rmtree(dst, ignore_errors=True)
    files = [p for p in sorted(SRC.iterdir()) if p.suffix == ".jsonl"]
    for i in range(copies):
        day = home / "sessions" / "2026" / "11" / f"{1 + i % 28:02d}"
        day.mkdir(parents=True, exist_ok=True)
        for p in files:
            b = p.read_bytes()
            ids = {m: str(uuid.uuid4()).encode() for m in set(ID.findall(b))}
            name = ID.sub(lambda m: ids[m.group(0)], p.name.encode()).decode()
            (day / name).write_bytes(ID.sub(lambda m: ids[m.group(0)], b))
    mark.touch()
    return home


def _remap(b: bytes) -> bytes:
    ids = {m: str(uuid.uuid4()).encode() for m in set(ID.findall(b))}
    return ID.sub(lambda m: ids[m.group(0)], b)


def _plain() -> list[Path]:
    return [p for p in sorted(SRC.iterdir()) if p.suffix == ".jsonl"]


def build_large(dst: Path, sessions: int, mb: int) -> Path:
    import json

    home = dst / ".codex"
    mark = dst / f".built-{sessions}x{mb}"
    if mark.exists():
        return home
    shutil.rmtree(dst, ignore_errors=True)
    files = [p.read_bytes().splitlines(keepends=True) for p in _plain()]
    body = b"".join(b"".join(ls[1:]) for ls in files)
    for i in range(sessions):
        day = home / "sessions" / "2026" / "11" / f"{1 + i % 28:02d}"
        day.mkdir(parents=True, exist_ok=True)
        src = _plain()[i % len(files)]
        head = files[i % len(files)][0]
        parts, size = [head], len(head)
        while size < mb * 1_000_000:
            parts.append(body)
            size += len(body)
        b = _remap(b"".join(parts))
        new = json.loads(b[:b.index(b"\n")])["payload"]["id"]  # the file name's id is the session_meta's
        (day / ID.sub(new.encode(), src.name.encode(), count=1).decode()).write_bytes(b)
    mark.touch()
    return home


def build_forked(dst: Path, copies: int) -> Path:
    import json

    home = dst / ".codex"
    mark = dst / f".built-{copies}"
    if mark.exists():
        return home
    shutil.rmtree(dst, ignore_errors=True)
    files = _plain()
    for i in range(copies):
        day = home / "sessions" / "2026" / "11" / f"{1 + i % 28:02d}"
        day.mkdir(parents=True, exist_ok=True)
        for j, p in enumerate(files):
            b = _remap(p.read_bytes())
            lines = b.splitlines(keepends=True)
            meta = json.loads(lines[0])
            pid = meta["payload"]["id"]
            name = ID.sub(pid.encode(), p.name.encode(), count=1).decode()
            (day / name).write_bytes(b)
            for k in (1, 2):
                own = _remap(files[(j + k) % len(files)].read_bytes()).splitlines(keepends=True)[1:]
                fid = str(uuid.uuid4())
                m = dict(meta, payload=dict(meta["payload"], id=fid, forked_from_id=pid))
                out = [json.dumps(m, separators=(",", ":")).encode() + b"\n", *lines[1:], *own]
                (day / ID.sub(fid.encode(), p.name.encode(), count=1).decode()).write_bytes(b"".join(out))
    mark.touch()
    return home


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--shape", choices=("small", "large", "forked"), default="small")
    ap.add_argument("--copies", type=int, default=600)
    ap.add_argument("--sessions", type=int, default=40)
    ap.add_argument("--mb", type=int, default=25)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    if a.shape == "small":
        home = build(HERE / "_corpus" / f"kept-codex-{a.copies}", a.copies)
    elif a.shape == "large":
        home = build_large(HERE / "_corpus" / f"kept-codex-large-{a.sessions}x{a.mb}", a.sessions, a.mb)
    else:
        home = build_forked(HERE / "_corpus" / f"kept-codex-forked-{a.copies}", a.copies)
    files = list(home.rglob("*.jsonl"))
    size = sum(p.stat().st_size for p in files)
    print(f"machine: {machine()}")
    print(f"shape: {a.shape}; store: {home}: {len(files)} rollouts, {size / 1e6:.1f} MB; "
          f"date {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; load {os.getloadavg()[0]:.2f}")
    tmp = Path(tempfile.mkdtemp(prefix="ssift-kept-"))
    base = dict(os.environ, NO_COLOR="1", HOME=str(tmp / "home"), SESSIONSIFT_INDEX_DIR=str(tmp / "idx"))
    base.pop("SESSIONSIFT_NO_INDEX", None)
    (tmp / "home").mkdir()
    rgc = min(run(["rg", "-c", '"type"', str(home)])[0] for _ in range(3))
    print(f"rg -c '\"type\"' {rgc:.3f} s")
    for name, args in (("stats", ["stats"]), ("usage daily", ["usage", "daily"]), ("list", ["list"])):
        cmd = [*SSIFT, *args, "--codex-home", str(home), "--format", "json"]
        off = [run(cmd, dict(base, SESSIONSIFT_NO_INDEX="1")) for _ in range(a.repeat)]
        shutil.rmtree(tmp / "idx", ignore_errors=True)
        first = run(cmd, base)
        # the full-text index a command brings up to date takes a budget per run (12 large sessions a
        # run): without settling it, "warm" measures its catching up, not the kept answers
        run([*SSIFT, "index", "update", "--codex-home", str(home)], base)
        run(cmd, base)
        warm = [run(cmd, base) for _ in range(a.repeat)]
        same = {r[3].split(b'"index"')[0] for r in (*off, first, *warm)}
        for label, rs in (("index off", off), ("first (keeps)", [first]), ("warm (kept)", warm)):
            best = min(rs, key=lambda r: r[0])
            print(f"{name:12} {label:14} {best[0]:7.3f} s (cpu {best[1]:5.2f}) = {best[0] / rgc:6.1f}x rg; "
                  f"{best[0] / (size / 1e9):6.2f} s/GB; rss {max(r[2] for r in rs) / 1024:4.0f} MB")
        print(f"{name:12} answers before the index field identical across runs: {len(same) == 1}")
    kept = tmp / "idx"
    kb = sum(p.stat().st_size for p in kept.rglob("kept-*.sqlite*"))
    print(f"kept answers: {kb / 1e6:.1f} MB = {100 * kb / size:.1f}% of the store; load after {os.getloadavg()[0]:.2f}")
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
