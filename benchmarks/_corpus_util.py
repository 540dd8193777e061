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


ID_RE = re.compile(rb"(?:msg|req|toolu|srvtoolu)_[0-9A-Za-z]{8,}")


def remap_ids(data: bytes, salt: str) -> bytes:
    """`remap` plus every API message, request and tool-use id (`msg_…`, `req_…`, `toolu_…`):
    copies that share message ids would make token deduplication meaningless (a usage report
    would rightly count them once)."""
    data = remap(data, salt)
    cache: dict[bytes, bytes] = {}

    def sub(m: re.Match[bytes]) -> bytes:
        k = m.group(0)
        v = cache.get(k)
        if v is None:
            pre, _, _rest = k.partition(b"_")
            h = uuid.uuid5(uuid.NAMESPACE_URL, salt + k.decode()).hex[:24].encode()
            v = cache[k] = pre + b"_" + h
        return v

    return ID_RE.sub(sub, data)


def source_sessions(roots: list[Path]) -> list[tuple[Path, list[Path]]]:
    """(main transcript, its subagent lanes) of every real session under the given homes."""
    out = []
    for r in roots:
        for main in sorted(r.rglob("projects/*/*.jsonl")):
            lanes = sorted((main.parent / main.stem / "subagents").rglob("*.jsonl"))
            out.append((main, [l for l in lanes if l.name != "journal.jsonl"]))
    if not out:
        raise SystemExit("no real transcripts found (examples/ or SSIFT_BENCH_SRC)")
    return out


def build_usage_home(dest: Path, size_mb: int, roots: list[Path]) -> Path:
    """A claude home of about `size_mb` MB: whole real sessions (main + subagent lanes) copied
    with every uuid and message/request/tool id remapped per copy, one project dir per 100."""
    marker = dest / f".built-{size_mb}"
    if marker.exists():
        return dest
    shutil.rmtree(dest, ignore_errors=True)
    srcs = [(m.read_bytes(), [(l.relative_to(m.parent / m.stem), l.read_bytes()) for l in lanes], m.stem)
            for m, lanes in source_sessions(roots)]
    target = size_mb << 20
    written = k = 0
    while written < target:
        main, lanes, stem = srcs[k % len(srcs)]
        salt = f"usage{k}"
        sid = str(uuid.uuid5(uuid.NAMESPACE_URL, salt + stem))
        proj = dest / "projects" / f"-bench-usage-p{k // 100}"
        proj.mkdir(parents=True, exist_ok=True)
        (proj / f"{sid}.jsonl").write_bytes(remap_ids(main, salt).replace(stem.encode(), sid.encode()))
        written += len(main)
        for rel, data in lanes:
            p = proj / sid / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(remap_ids(data, salt).replace(stem.encode(), sid.encode()))
            written += len(data)
        k += 1
    marker.write_text(str(k))
    return dest
