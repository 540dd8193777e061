"""Real-client sample files and damaged copies of them, for the tests that hold a fast path's answers
equal to the plain path's (tests/test_provider_fastpaths.py).

The damage is the kind a crash or a half-written append leaves (seed 002): NUL runs inside a line, at
the end and as whole lines, a torn final line, a malformed line (bytes flipped, a line cut in two,
garbage inserted), invalid UTF-8 inside a string, a blank line, CRLF endings. Each copy is made from
a real file by a seeded generator, so a failure names a reproducible case.
"""

from __future__ import annotations

import random
import shutil
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples"

JSONL_GLOBS = ("**/*.jsonl", "**/*.json", "**/*.jsonl.zst")


def sample_files() -> list[Path]:
    """Every line-based transcript committed under examples/ (all providers, all clients)."""
    out: set[Path] = set()
    for g in JSONL_GLOBS:
        out.update(p for p in EXAMPLES.glob(g) if p.is_file())
    return sorted(out)


def damages(data: bytes, seed: int) -> list[tuple[str, bytes]]:
    """Named damaged copies of `data` (never the original itself)."""
    rng = random.Random(seed)
    lines = data.split(b"\n")
    n = len(data)
    out: list[tuple[str, bytes]] = []

    def at() -> int:
        return rng.randrange(n + 1) if n else 0

    i = at()
    out.append(("nul run inside a line", data[:i] + b"\x00" * rng.randint(1, 600) + data[i:]))
    out.append(("nul run at the end", data + b"\x00" * rng.randint(1, 5000)))
    if len(lines) > 2:
        k = rng.randrange(len(lines) - 1)
        nul_line = lines[:k] + [b"\x00" * max(1, len(lines[k]))] + lines[k + 1:]
        out.append(("a line zero-filled", b"\n".join(nul_line)))
        k = rng.randrange(1, len(lines) - 1)
        out.append(("nul run then a record", b"\n".join(lines[:k] + [b"\x00" * 64 + lines[k]] + lines[k + 1:])))
    cut = rng.randrange(n) if n else 0
    out.append(("torn tail", data[:cut]))
    if data.endswith(b"\n") and len(lines) > 2:
        last = lines[-2]
        out.append(("torn final line", b"\n".join(lines[:-2]) + b"\n" + last[: max(1, len(last) // 2)]))
    b = bytearray(data)
    for _ in range(rng.randint(1, 6)):
        if b:
            b[rng.randrange(len(b))] = rng.randrange(256)
    out.append(("bytes flipped", bytes(b)))
    if len(lines) > 3:
        k = rng.randrange(1, len(lines) - 1)
        ln = lines[k]
        h = rng.randrange(len(ln) + 1) if ln else 0
        out.append(("a line cut in two", b"\n".join(lines[:k] + [ln[:h], ln[h:]] + lines[k + 1:])))
        out.append(("garbage line", b"\n".join(lines[:k] + [b"{not json", b"[1,2]", b"\"str\""] + lines[k:])))
        out.append(("blank lines", b"\n".join(lines[:k] + [b"", b"   "] + lines[k:])))
        q = lines[k].find(b'":"')
        if q >= 0:
            bad = lines[k][:q + 3] + b"\xff\xfe\xc3" + lines[k][q + 3:]
            out.append(("invalid utf-8 in a string", b"\n".join(lines[:k] + [bad] + lines[k + 1:])))
        out.append(("lines duplicated", b"\n".join(lines[:k] + [lines[k], lines[k]] + lines[k + 1:])))
    out.append(("crlf", data.replace(b"\n", b"\r\n")))
    return out


def copy_tree(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst, symlinks=True)
    return dst
