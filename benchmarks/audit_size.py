"""Benchmark `audit size` (issue 17): byte-level measurement of big lines against one literal scan.

Corpora (built once under benchmarks/_corpus/, gitignored), from REAL client transcripts:
- `many`: N sessions copied from the committed Claude Code corpora (2.1.258 and 2.1.332, whose
  `api-request*` dumps make lines long), fresh ids per copy;
- `images`: one transcript of copies of files_basic's real lines in which the Read tool result's
  4x4 PNG is replaced by an IMAGE_MB base64 payload (the record shape the client writes, a bigger
  image), the same payload every COPIES-th copy (duplicates to find), different otherwise:
  the lines are measured on their bytes (>= 256 KiB), never parsed whole.

Reference measured in the same run: `rg -c '"data":"'` over the same files (one literal scan, what
finding the payloads costs at the least). Prints best-of-N wall, peak RSS and the ratio.

Usage: .venv/bin/python benchmarks/audit_size.py [--sessions 2000] [--image-mb 2] [--copies 60] [--repeat 3]
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _corpus_util import REPO, build_many_sessions, peak_rss_run, remap  # noqa: E402

HERE = Path(__file__).resolve().parent
SS = [sys.executable, "-m", "sessionsift"]
FB = REPO / "examples" / "claude-home" / "projects" / "-tmp-ssift-rc-files-basic-work" / \
    "8414eb07-cca2-5cca-9059-e9baedac31e1.jsonl"


def build_images(dest: Path, image_mb: int, copies: int) -> Path:
    marker = dest / f".built-{image_mb}-{copies}"
    path = dest / "projects" / "-bench-images" / "cccccccc-0000-4000-8000-000000000000.jsonl"
    if marker.exists():
        return dest
    shutil.rmtree(dest, ignore_errors=True)
    path.parent.mkdir(parents=True)
    src = FB.read_bytes()
    png = json.loads(next(ln for ln in src.splitlines() if b'"type":"image"' in ln and b"tool_result" in ln))
    small = next(c["source"]["data"] for b in png["message"]["content"] if b.get("type") == "tool_result"
                 for c in b["content"] if c.get("type") == "image")
    n = image_mb * 1024 * 1024 * 3 // 4
    with open(path, "wb") as f:
        for k in range(copies):
            seed = b"same" if k % 3 == 0 else str(k).encode()  # every third copy repeats one payload
            blob = hashlib.shake_256(seed).digest(n)
            data = remap(src, f"img{k}").replace(small.encode(), base64.b64encode(blob))
            f.write(data)
    marker.write_text("ok")
    return dest


def best(cmd: list[str], repeat: int) -> tuple[float, int]:
    runs = [peak_rss_run(cmd) for _ in range(repeat)]
    return min(r[0] for r in runs), max(r[1] for r in runs)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sessions", type=int, default=2000)
    ap.add_argument("--image-mb", type=int, default=2)
    ap.add_argument("--copies", type=int, default=60)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    rg = shutil.which("rg")
    if not rg:
        raise SystemExit("ripgrep (rg) is needed as the reference: apt-get install -y ripgrep")
    many = build_many_sessions(HERE / "_corpus" / f"size-many-{a.sessions}", a.sessions,
                               src=REPO / "examples")
    imgs = build_images(HERE / "_corpus" / "size-images", a.image_mb, a.copies)
    print(f"load average before: {os.getloadavg()}")
    for name, home in (("many", many), ("images", imgs)):
        size = sum(p.stat().st_size for p in home.rglob("*.jsonl"))
        subprocess.run([rg, "-c", '"data":"', str(home)], capture_output=True)  # warm the page cache
        t_rg, _ = best([rg, "-c", '"data":"', str(home)], a.repeat)
        for extra in ([], ["--no-capture"]):
            t_ss, rss = best(SS + ["audit", "size", "--claude-home", str(home), "--format", "json", *extra], a.repeat)
            print(f"{name:7s} {size / 1e6:8.1f} MB  audit size{' ' + ' '.join(extra) if extra else '':13s} "
                  f"{t_ss:6.2f} s ({size / 1e6 / t_ss:6.1f} MB/s, peak {rss / 1e3:.0f} MB)  "
                  f"rg -c {t_rg:5.2f} s  ratio {t_ss / t_rg:5.1f}x")
    print(f"load average after: {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
