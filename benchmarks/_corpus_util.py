"""Shared by the benchmark scripts: build large corpora by replicating REAL transcripts with
fresh ids (every uuid in a copy is remapped consistently, so each copy is a distinct session)."""

from __future__ import annotations

import os
import re
import shutil
import uuid
from pathlib import Path

UUID_RE = re.compile(rb"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
REPO = Path(__file__).resolve().parent.parent


def source_transcripts(src: Path | None = None) -> list[Path]:
    env = os.environ.get("SSIFT_BENCH_SRC")
    roots = [src] if src else ([Path(env)] if env else [REPO / "examples"])
    out = []
    for r in roots:
        if r and r.exists():
            out += [p for p in r.rglob("*.jsonl") if p.parent.parent.name == "projects"]
    if not out:
        raise SystemExit("no real transcripts found under examples/ (run the real-client harness first)")
    return sorted(out)


def remap(data: bytes, salt: str) -> bytes:
    cache: dict[bytes, bytes] = {}

    def sub(m: re.Match[bytes]) -> bytes:
        k = m.group(0)
        v = cache.get(k)
        if v is None:
            v = str(uuid.uuid5(uuid.NAMESPACE_URL, salt + k.decode())).encode()
            cache[k] = v
        return v

    return UUID_RE.sub(sub, data)


def build_many_sessions(dest: Path, n: int, src: Path | None = None) -> Path:
    """A claude home with `n` top-level sessions (copies of real ones with fresh ids)."""
    marker = dest / f".built-{n}"
    if marker.exists():
        return dest
    shutil.rmtree(dest, ignore_errors=True)
    srcs = source_transcripts(src)
    proj = dest / "projects" / "-bench-many"
    proj.mkdir(parents=True)
    for i in range(n):
        s = srcs[i % len(srcs)]
        data = remap(s.read_bytes(), f"copy{i}")
        sid = UUID_RE.search(remap(s.stem.encode(), f"copy{i}"))
        name = (sid.group(0).decode() if sid else f"{uuid.uuid4()}") + ".jsonl"
        (proj / name).write_bytes(data)
    marker.write_text("ok")
    return dest


def build_big_transcript(dest: Path, size_mb: int, src: Path | None = None) -> Path:
    """A claude home holding ONE transcript of about `size_mb` MB: real sessions concatenated,
    each copy with fresh uuids (so the DAG stays consistent per copy)."""
    marker = dest / f".built-{size_mb}"
    sid = "bbbbbbbb-0000-4000-8000-000000000000"
    path = dest / "projects" / "-bench-big" / f"{sid}.jsonl"
    if marker.exists():
        return path
    shutil.rmtree(dest, ignore_errors=True)
    path.parent.mkdir(parents=True)
    srcs = [s.read_bytes() for s in source_transcripts(src)]
    target = size_mb * 1024 * 1024
    written = 0
    k = 0
    with open(path, "wb") as f:
        while written < target:
            data = remap(srcs[k % len(srcs)], f"big{k}")
            f.write(data if data.endswith(b"\n") else data + b"\n")
            written += len(data)
            k += 1
    marker.write_text("ok")
    return path


def peak_rss_run(cmd: list[str], env: dict | None = None) -> tuple[float, int, bytes]:
    """(wall seconds, peak RSS KiB of the child, stdout) using /usr/bin/time when present."""
    import subprocess
    import time

    t0 = time.perf_counter()
    if shutil.which("/usr/bin/time") or os.path.exists("/usr/bin/time"):
        p = subprocess.run(["/usr/bin/time", "-f", "%M", *cmd], capture_output=True, env=env)
        wall = time.perf_counter() - t0
        try:
            rss = int(p.stderr.strip().splitlines()[-1])
        except (ValueError, IndexError):
            rss = -1
        return wall, rss, p.stdout
    import resource

    p = subprocess.run(cmd, capture_output=True, env=env)
    wall = time.perf_counter() - t0
    return wall, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, p.stdout
