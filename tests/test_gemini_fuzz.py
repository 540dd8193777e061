"""Fuzz pass: real Gemini CLI chat files (examples/gemini-home), mutated (torn, zero-filled, byte flips,
lines deleted/duplicated/swapped, values swapped for other JSON types, stray rewinds, invalid UTF-8), never
crash the reader or discovery, and what comes out still keeps the shared shape's invariants."""
from __future__ import annotations

import json
import random
import shutil
from pathlib import Path
from typing import get_args

import pytest

from sessionsift.providers.base import Kind, Record, Role
from tests.realclient.gemini import truth
from tests.realclient.gemini.fixtures import EXAMPLES

ODD = [None, 0, -1, 1.5, "", "x", [], {}, [1], {"a": 1}, True, "\x1b[31m\u202e", [{"text": 5}],
       {"functionResponse": "x"}, {"functionCall": None}, [{"functionCall": {"id": 3, "name": [], "args": "x"}}]]


def _walk(obj, rng):
    """A random (container, key) inside a JSON value."""
    cur, ref = obj, None
    for _ in range(rng.randint(1, 6)):
        if isinstance(cur, dict) and cur:
            k = rng.choice(list(cur))
        elif isinstance(cur, list) and cur:
            k = rng.randrange(len(cur))
        else:
            break
        ref = (cur, k)
        cur = cur[k]
    return ref


def mutate(data: bytes, rng: random.Random) -> bytes:
    lines = data.split(b"\n")
    op = rng.randrange(10)
    if op == 0:
        return data[:rng.randrange(len(data) + 1)]
    if op == 1:
        i = rng.randrange(len(data) + 1)
        return data[:i] + b"\x00" * rng.randint(1, 4096) + data[i:]
    if op == 2:
        b = bytearray(data)
        for _ in range(rng.randint(1, 8)):
            if b:
                b[rng.randrange(len(b))] = rng.randrange(256)
        return bytes(b)
    if op == 3 and len(lines) > 1:
        del lines[rng.randrange(len(lines))]
    elif op == 4:
        i = rng.randrange(len(lines))
        lines.insert(rng.randrange(len(lines) + 1), lines[i])
    elif op == 5 and len(lines) > 1:
        i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
    elif op == 6:
        for _ in range(rng.randint(1, 4)):
            i = rng.randrange(len(lines))
            try:
                obj = json.loads(lines[i])
            except ValueError:
                continue
            ref = _walk(obj, rng)
            if ref is None:
                obj = rng.choice(ODD)
            else:
                ref[0][ref[1]] = rng.choice(ODD)
            lines[i] = json.dumps(obj).encode()
    elif op == 7:
        ids = []
        for line in lines:
            try:
                ids.append(json.loads(line).get("id"))
            except (ValueError, AttributeError):
                pass
        ids = [i for i in ids if isinstance(i, str)] or ["nope"]
        lines.insert(rng.randrange(len(lines) + 1),
                     json.dumps({"$rewindTo": rng.choice(ids + ["not-an-id", 7])}).encode())
    elif op == 8:
        lines[rng.randrange(len(lines))] = b'{"id":"\xff\xfe","type":"user","content":"\xc3("}'
    else:
        return data + b'{"id":"torn","type":"gem'
    return b"\n".join(lines)


def _check(read: truth.Read) -> None:
    kinds, roles = set(get_args(Kind)), set(get_args(Role))
    locs = set()
    for r in read.records:
        assert isinstance(r, Record) and r.kind in kinds and r.role in roles
        assert r.locator not in locs, r.locator
        locs.add(r.locator)
        for fc in r.file_changes:
            assert isinstance(fc.path, str) and isinstance(fc.new_content, str)
        if r.tokens is not None:
            assert all(v is None or isinstance(v, int) for v in (r.tokens.input, r.tokens.output, r.tokens.total))
    for r in read.records:
        assert r.copy_of is None or r.copy_of in locs
    om = read.report.omissions()
    assert all(isinstance(v, int) and v >= 0 for v in om.values())
    assert read.report.records == len(read.records)


@pytest.fixture(scope="module")
def chat_files() -> list[Path]:
    files = sorted(p for p in (EXAMPLES / "tmp").rglob("*") if p.is_file() and "chats" in p.parts)
    assert len(files) >= 10
    return files


def test_fuzzed_chat_files_never_crash_the_reader(tmp_path, chat_files):
    rng = random.Random(20261201)
    d = truth.discover(EXAMPLES)
    refs = {str(p): r for r in d.sessions for p in r.paths}
    n = 0
    for f in chat_files:
        base = refs.get(str(f))
        data = f.read_bytes()
        for k in range(40):
            m = mutate(data, rng)
            for _ in range(rng.randint(0, 2)):
                m = mutate(m, rng)
            out = tmp_path / f"{k}-{f.name}"
            out.write_bytes(m)
            ref = truth.SessionRef(provider="gemini-cli", session_id=base.session_id if base else "x", paths=[out],
                                   parent_session_id=base.parent_session_id if base else None,
                                   extra=dict(base.extra) if base else {})
            _check(truth.read_ref(ref, raw=bool(k % 2)))
            n += 1
    assert n >= 400


def test_fuzzed_tree_never_crashes_discovery(tmp_path, chat_files):
    rng = random.Random(7)
    for round_ in range(6):
        home = tmp_path / f"r{round_}"
        shutil.copytree(EXAMPLES, home)
        for f in sorted(p for p in (home / "tmp").rglob("*") if p.is_file()) + [home / "projects.json"]:
            if rng.random() < 0.6:
                f.write_bytes(mutate(f.read_bytes(), rng))
        d = truth.discover(home)
        assert d.coverage.state in ("ok", "unknown_format", "absent")
        for ref in d.sessions:
            _check(truth.read_ref(ref))
