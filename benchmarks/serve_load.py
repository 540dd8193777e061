"""Load benchmark for `sessionsift serve` (issue 28): 50 concurrent clients over a ~1 GB store,
page time warm (goal: p95 <= 300 ms). Not a timed test.

    .venv/bin/python benchmarks/serve_load.py [--size-mb 1024] [--clients 50] [--requests 40]
        [--appends 3] [--no-search] [--src OTHER_CHECKOUT/src]

The store is built once under benchmarks/_corpus/serve-<size>/ (gitignored, never committed): a
Claude Code home of whole REAL client sessions (examples/ or $SSIFT_BENCH_SRC: each main
transcript with its subagent lanes) copied with every uuid and message/request/tool id remapped
per copy (`_corpus_util.build_usage_home`), so every copy is a distinct session with distinct
usage. The server is the real command (`sessionsift serve --home STORE --port 0`) in its own
process; the clients are asyncio tasks in this one, each with its own connection (httpx), so a
figure includes the client's own overhead on the same 2 cores.

"Warm": the server has read the listing (before it prints its address), and every URL of the mix
has been asked once (its first render is reported on its own line: cold render); then each of the
clients asks `--requests` URLs of the mix, each client starting at its own place in it. Search
is reported apart (one client; a query not asked before runs over the whole store).

After the load, a transcript is appended (`--appends` times; each cut off again after): the time
from the write to the sessions list, the live page and the live event stream showing the new
prompt. The store is restored to its bytes after each (its mtimes are not).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _corpus_util import REPO, build_usage_home  # noqa: E402

HERE = Path(__file__).resolve().parent
SRC = [REPO / "src"]
"""The sessionsift source the server runs (--src: another checkout's, for a before/after run)."""


def build(size_mb: int) -> Path:
    root = HERE / "_corpus" / f"serve-{size_mb}"
    src = [Path(os.environ["SSIFT_BENCH_SRC"])] if os.environ.get("SSIFT_BENCH_SRC") else [REPO / "examples"]
    build_usage_home(root / "home" / ".claude", size_mb, src)
    return root / "home"


def store_figures(home: Path) -> tuple[int, int]:
    files = size = 0
    for d, _, fs in os.walk(home):
        for f in fs:
            if f.endswith(".jsonl"):
                files += 1
                size += os.path.getsize(os.path.join(d, f))
    return files, size


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, int(round(p / 100 * len(xs) + 0.5)) - 1))]


def prompt_line(path: Path, text: str) -> bytes:
    """A new genuine prompt after the transcript's last record, in the shape of the file's own first
    prompt (the real client's keys), a new uuid, the last record its parent, the time now."""
    import json
    import uuid
    from datetime import datetime, timezone

    lines = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    proto = next(o for o in lines if o.get("type") == "user"
                 and isinstance((o.get("message") or {}).get("content"), str))
    last = [o for o in lines if isinstance(o.get("uuid"), str)][-1]
    now = datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    o = dict(proto, uuid=str(uuid.uuid4()), parentUuid=last["uuid"], timestamp=now,
             message={**proto["message"], "content": text})
    return json.dumps(o, separators=(",", ":")).encode() + b"\n"


async def append_figures(base: str, cookies: dict, home: Path, sid: str, n: int) -> None:
    """`n` times: append a new prompt to session `sid`'s transcript (then cut it off again), and
    time from the write to (a) the sessions list showing it, (b) the live page showing it, (c) the
    live page's event stream (server-sent events, connected before the write) carrying it. Each
    poll is one GET every 50 ms; a GET made while the new generation's listing is being read waits
    for it."""
    from urllib.parse import urlencode

    path = next(home.glob(f".claude/projects/*/{sid}.jsonl"))
    size0 = path.stat().st_size
    try:
        for k in range(n):
            text = await _append_once(base, cookies, path, sid, k, urlencode)
            os.truncate(path, size0)
            await _settled(base, cookies, text, sid, urlencode)  # the cut is a change too: its pages made
    finally:
        os.truncate(path, size0)


async def _settled(base: str, cookies: dict, text: str, sid: str, urlencode) -> None:
    """Until the sessions list (filtered by `text`) no longer shows session `sid` and the live page
    no longer shows `text` (the cut's generation read)."""
    import httpx

    async with httpx.AsyncClient(base_url=base, cookies=cookies, timeout=600) as c:
        t0 = time.perf_counter()
        for url, gone in (("/?" + urlencode({"q": text}), sid), ("/live", text)):
            while time.perf_counter() - t0 < 300:
                r = await c.get(url)
                if gone not in r.text:
                    break
                await asyncio.sleep(0.2)
    await asyncio.sleep(1)


async def _append_once(base: str, cookies: dict, path: Path, sid: str, k: int, urlencode) -> str:
    import httpx

    text = f"serve append check {k} {os.getpid()} {time.time_ns()}"
    got: dict[str, float] = {}
    async with httpx.AsyncClient(base_url=base, cookies=cookies, timeout=600) as c:
        async def poll(name: str, url: str, t0: float, want: str) -> None:
            while True:
                r = await c.get(url)
                if want in r.text:
                    got[name] = time.perf_counter() - t0
                    return
                await asyncio.sleep(0.05)

        async def events(t0box: list, ready: asyncio.Event) -> None:
            async with c.stream("GET", "/live/events") as r:
                async for line in r.aiter_lines():
                    if line.startswith("data:"):
                        ready.set()
                        if t0box and text in line:
                            got["live events"] = time.perf_counter() - t0box[0]
                            return

        t0box: list = []
        ready = asyncio.Event()
        ev = asyncio.create_task(events(t0box, ready))
        await asyncio.wait_for(ready.wait(), 600)
        l0 = os.getloadavg()[0]
        with open(path, "ab") as f:
            f.write(prompt_line(path, text))
        t0 = time.perf_counter()
        t0box.append(t0)
        # the sessions list's text filter matches a row's last prompt (the row shows its first)
        tasks = [asyncio.create_task(poll("sessions list", "/?" + urlencode({"q": text}), t0, sid)),
                 asyncio.create_task(poll("live page", "/live", t0, text)), ev]
        await asyncio.wait(tasks, timeout=300)
        for tk in tasks:
            tk.cancel()

    def fig(name: str) -> str:
        return f"{got[name]:.2f} s" if name in got else "not within 300 s"

    print(f"  append {k + 1}: to the sessions list {fig('sessions list')}, the live page "
          f"{fig('live page')}, the live event stream {fig('live events')} "
          f"(load average {l0:.1f} -> {os.getloadavg()[0]:.1f})")
    return text


def start(home: Path, tmp: Path) -> tuple[subprocess.Popen, str, float]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE", "CODEX", "GEMINI", "OPENCODE"))}
    env.update(HOME=str(tmp / "h"), XDG_DATA_HOME=str(tmp / "d"), XDG_CACHE_HOME=str(tmp / "c"),
               XDG_CONFIG_HOME=str(tmp / "cfg"), PYTHONPATH=str(SRC[0]), BROWSER="true")
    (tmp / "h").mkdir()
    t0 = time.perf_counter()
    p = subprocess.Popen([sys.executable, "-m", "sessionsift", "serve", "--home", str(home), "--port", "0",
                          "--no-browser"], stdout=subprocess.PIPE, stderr=open(tmp / "serve.err", "w"), text=True,
                         env=env)
    line = p.stdout.readline()
    if not line.startswith("sessionsift serve: "):
        p.kill()
        raise SystemExit(f"serve did not start: {line!r} {(tmp / 'serve.err').read_text()[-2000:]}")
    return p, line.split(": ", 1)[1].strip(), time.perf_counter() - t0


def rss_mb(pid: int, field: str = "VmRSS") -> str:
    m = re.search(field + r":\s+(\d+)", Path(f"/proc/{pid}/status").read_text())
    return f"{int(m.group(1)) / 1024:.0f}" if m else "?"


def hwm_mb(pid: int) -> str:
    return rss_mb(pid, "VmHWM")


class Children:
    """The peak RSS (VmHWM) of every process the server started (its workers: serve/worker.py),
    sampled every 50 ms from /proc while the benchmark runs (a worker that ends between two
    samples is seen at its last sample: VmHWM only grows, so the figure is at most 50 ms short)."""

    def __init__(self, pid: int) -> None:
        import threading

        self.pid, self.peak, self.stop = pid, {}, threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.stop.wait(0.05):
            for d in Path("/proc").iterdir():
                if not d.name.isdigit():
                    continue
                try:
                    st = (d / "status").read_text()
                except OSError:
                    continue
                pp = re.search(r"PPid:\s+(\d+)", st)
                hwm = re.search(r"VmHWM:\s+(\d+)", st)
                if pp and hwm and int(pp.group(1)) == self.pid:
                    self.peak[int(d.name)] = max(self.peak.get(int(d.name), 0), int(hwm.group(1)))

    def report(self) -> str:
        self.stop.set()
        self.thread.join(5)
        if not self.peak:
            return "server's worker processes: none seen"
        xs = sorted(self.peak.values(), reverse=True)
        return (f"server's worker processes: {len(xs)}, peak RSS of the largest {xs[0] / 1024:.0f} MB "
                f"(each: {', '.join(f'{x / 1024:.0f}' for x in xs[:12])}{' ...' if len(xs) > 12 else ''} MB)")


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds of process `pid`, all its threads (/proc; None elsewhere)."""
    try:
        f = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")


def kind(u: str) -> str:
    if u.startswith("/session/"):
        return "session/files" if "/files" in u else "session"
    return u.split("?")[0] or "/"


async def main_async(a) -> None:
    import httpx

    home = build(a.size_mb)
    files, size = store_figures(home)
    print(f"store: {home} -- {files} transcripts (main and subagent lanes), {size / 2**30:.2f} GiB")
    print(f"machine: {platform.system()} {platform.release()}, {os.cpu_count()} cores, Python "
          f"{platform.python_version()}; load average before: {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory() as td:
        proc, url, startup = start(home, Path(td))
        kids = Children(proc.pid)
        try:
            m = re.match(r"(http://[^/]+)/\?token=(.+)$", url)
            base, token = m.group(1), m.group(2)
            port = base.rsplit(":", 1)[1]
            cookies = {f"sessionsift_token_{port}": token}
            print(f"server: ready in {startup:.1f} s (the listing read before the address is printed); "
                  f"RSS {rss_mb(proc.pid)} MB")
            async with httpx.AsyncClient(base_url=base, cookies=cookies, timeout=600) as c:
                t0 = time.perf_counter()
                r = await c.get("/")
                print(f"first sessions page: {time.perf_counter() - t0:.2f} s, HTTP {r.status_code}")
                ids = re.findall(r'href="(/session/claude-code/[0-9a-f-]{36})"', r.text)
                rnd = random.Random(28)
                picks = rnd.sample(sorted(set(ids)), min(20, len(set(ids))))
                mix = (["/", "/?sort=size", "/?start=200", "/?agent=claude-code&sort=prompts", "/usage",
                        "/usage?period=weekly&by=model", "/usage?period=monthly", "/live", "/clean", "/clean?start=200",
                        "/worktrees",
                        "/search"] + picks + [p + "/files" for p in picks[:5]])
                cold: dict[str, float] = {}
                for u in mix:
                    t0 = time.perf_counter()
                    r = await c.get(u)
                    cold[u] = time.perf_counter() - t0
                    if r.status_code != 200:
                        raise SystemExit(f"{u}: HTTP {r.status_code}")
                    if u in ("/usage", "/live", "/clean", "/search"):  # the server's own RSS after each heavy page
                        print(f"  server RSS after cold {u}: {rss_mb(proc.pid)} MB (peak so far {hwm_mb(proc.pid)} MB)")
                for k in sorted({kind(u) for u in mix}):
                    v = [cold[u] for u in mix if kind(u) == k]
                    print(f"  cold render {k:14s} n={len(v):2d} median {statistics.median(v) * 1000:7.0f} ms"
                          f"  max {max(v) * 1000:7.0f} ms")

            lat: list[tuple[str, float]] = []
            errors = 0

            async def client(i: int) -> None:
                nonlocal errors
                async with httpx.AsyncClient(base_url=base, cookies=cookies, timeout=600,
                                             limits=httpx.Limits(max_connections=1)) as cc:
                    for j in range(a.requests):
                        u = mix[(i * 7 + j) % len(mix)]
                        t0 = time.perf_counter()
                        r = await cc.get(u)
                        await r.aread()
                        lat.append((u, time.perf_counter() - t0))
                        if r.status_code != 200:
                            errors += 1

            l0, s0, c0 = os.getloadavg()[0], cpu_seconds(proc.pid), os.times()
            t0 = time.perf_counter()
            await asyncio.gather(*(client(i) for i in range(a.clients)))
            wall = time.perf_counter() - t0
            s1, c1 = cpu_seconds(proc.pid), os.times()
            xs = [x for _, x in lat]
            print(f"warm load: {a.clients} concurrent clients x {a.requests} requests = {len(xs)} in {wall:.1f} s "
                  f"({len(xs) / wall:.0f} req/s), {errors} errors; load average {l0:.1f} -> {os.getloadavg()[0]:.1f}")
            mine = c1.user + c1.system - c0.user - c0.system
            if s0 is not None and s1 is not None:
                print(f"  CPU: server {s1 - s0:.1f} s ({(s1 - s0) / len(xs) * 1000:.1f} ms a request), these clients "
                      f"{mine:.1f} s ({mine / len(xs) * 1000:.1f} ms a request), over {wall:.1f} s on "
                      f"{os.cpu_count()} cores shared with the machine's other work")
            print(f"  page time: p50 {pct(xs, 50) * 1000:.0f} ms, p95 {pct(xs, 95) * 1000:.0f} ms, "
                  f"p99 {pct(xs, 99) * 1000:.0f} ms, max {max(xs) * 1000:.0f} ms  (goal p95 <= 300 ms: "
                  f"{'met' if pct(xs, 95) <= 0.3 else 'NOT met'})")
            for k in sorted({kind(u) for u, _ in lat}):
                v = [x for u, x in lat if kind(u) == k]
                print(f"  {k:14s} n={len(v):4d} p50 {pct(v, 50) * 1000:6.0f} ms  p95 {pct(v, 95) * 1000:6.0f} ms")

            print(f"  server RSS after the warm load: {rss_mb(proc.pid)} MB (peak so far {hwm_mb(proc.pid)} MB)")
            if a.appends:
                print(f"a transcript appended (session {picks[0].rsplit('/', 1)[1]}), {a.appends} times:")
                await append_figures(base, cookies, home, picks[0].rsplit("/", 1)[1], a.appends)
                print(f"  server RSS after the appends: {rss_mb(proc.pid)} MB (peak so far {hwm_mb(proc.pid)} MB)")
            async with httpx.AsyncClient(base_url=base, cookies=cookies, timeout=600) as c:
                for q in (() if a.no_search else ("hello", "zq-no-such-token-28")):
                    for n in ("first", "again"):
                        t0 = time.perf_counter()
                        try:
                            r = await c.get("/search", params={"q": q, "i": "1"})
                        except httpx.HTTPError as exc:
                            print(f"search -i {q!r}: {type(exc).__name__}; server exit status {proc.poll()}")
                            break
                        print(f"search -i {q!r} ({n}, one client): {time.perf_counter() - t0:.2f} s, "
                              f"HTTP {r.status_code}, {len(r.content) / 1024:.0f} KiB")
            err = (Path(td) / "serve.err").read_text()
            if err.strip():
                print("server stderr (last 1500 characters):\n" + err[-1500:])
            st = Path(f"/proc/{proc.pid}/status").read_text() if proc.poll() is None else ""
            hwm = re.search(r"VmHWM:\s+(\d+)", st)
            print(f"server peak RSS: {int(hwm.group(1)) / 1024:.0f} MB" if hwm else "server peak RSS: not read")
            print(kids.report())
            print(f"load average after: {os.getloadavg()[0]:.1f}")
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size-mb", type=int, default=1024)
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--requests", type=int, default=40)
    ap.add_argument("--appends", type=int, default=3,
                    help="times a transcript is appended after the load (the time until the pages show it)")
    ap.add_argument("--no-search", action="store_true", help="leave out the search figures")
    ap.add_argument("--src", type=Path, help="the sessionsift source dir the server runs (default: this checkout's)")
    a = ap.parse_args()
    if a.src is not None:
        SRC[0] = a.src.resolve()
    print(f"server source: {SRC[0]}")
    asyncio.run(main_async(a))


if __name__ == "__main__":
    main()
