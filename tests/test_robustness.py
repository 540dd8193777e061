"""Robustness: every CLI command, both formats, against hostile corpora. A command may answer
"nothing" or exit 2 with `sessionsift: error:`, but must never print a Python traceback, and
JSON output must always end with a `summary` row.

The corpora are built here. Most are MUTATED COPIES of real transcripts from
examples/claude-home (the real-client corpus): the mutation is the point (malformed/odd shapes the
real client does not write offline). A few records are hand-made because no client produces them
(numbers as content, null tool input, non-ISO timestamps); each such builder says so."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
REAL = REPO / "examples" / "claude-home" / "projects"
FILES_SID = "8414eb07-cca2-5cca-9059-e9baedac31e1"
FILES_PROJ = "-tmp-ssift-rc-files-basic-work"
SUB_SID = "23ad8bf1-66ec-5135-af96-82f74ddb4db0"
SUB_PROJ = "-tmp-ssift-rc-subagents-work"


def _real_lines(proj: str = FILES_PROJ, sid: str = FILES_SID) -> list[bytes]:
    return (REAL / proj / f"{sid}.jsonl").read_bytes().splitlines(keepends=True)


def _write(home: Path, proj: str, name: str | bytes, data: bytes) -> Path:
    d = home / "projects" / proj
    d.mkdir(parents=True, exist_ok=True)
    p = Path(os.fsdecode(os.path.join(os.fsencode(d), name if isinstance(name, bytes) else name.encode())))
    p.write_bytes(data)
    return p


SID = "11111111-2222-3333-4444-555555555555"


def _mutate(fn) -> bytes:
    """A mutated copy of the real files-basic transcript: fn(obj) -> obj applied to each record."""
    out = []
    for raw in _real_lines():
        obj = json.loads(raw)
        obj = fn(obj)
        out.append(json.dumps(obj).encode() + b"\n")
    return b"".join(out)


def build(kind: str, home: Path) -> None:
    home.mkdir(parents=True, exist_ok=True)
    if kind == "empty-home":
        return
    if kind == "empty-projects":
        (home / "projects").mkdir()
        return
    if kind == "empty-project-dir":
        (home / "projects" / "-tmp-x").mkdir(parents=True)
        return
    if kind == "dir-named-jsonl":
        (home / "projects" / "-tmp-x" / "x.jsonl").mkdir(parents=True)
        (home / "projects" / "-tmp-x" / f"{SID}.jsonl").mkdir(parents=True)
        return
    if kind == "zero-byte":
        _write(home, "-tmp-x", f"{SID}.jsonl", b"")
        return
    if kind == "metadata-only":
        # mutated copy: only the metadata lines of a real transcript kept, plus the kinds the
        # catalog names (mode, permission-mode, last-prompt) in their on-disk shape
        keep = [r for r in _real_lines() if json.loads(r).get("type") not in ("user", "assistant", "attachment", "system")]
        extra = [
            {"type": "permission-mode", "permissionMode": "default", "sessionId": SID},
            {"type": "mode", "mode": "normal", "sessionId": SID},
            {"type": "last-prompt", "lastPrompt": "hi", "sessionId": SID},
        ]
        _write(home, "-tmp-x", f"{SID}.jsonl", b"".join(keep) + b"".join(json.dumps(e).encode() + b"\n" for e in extra))
        return
    if kind == "huge-line":
        # mutated copy: a real user record whose content is replaced by a 30 MB string
        lines = _real_lines()
        for i, raw in enumerate(lines):
            obj = json.loads(raw)
            if obj.get("type") == "user":
                obj["message"]["content"] = "A" * (30 * 1024 * 1024)
                lines[i] = json.dumps(obj).encode() + b"\n"
                break
        _write(home, FILES_PROJ, f"{FILES_SID}.jsonl", b"".join(lines))
        return
    if kind == "malformed-only":
        _write(home, "-tmp-x", f"{SID}.jsonl", b"{not json\n[1,2\n\x00\x00\x00\n\"str\"\n42\nnull\n[]\n\xff\xfe\n")
        return
    if kind == "missing-keys":
        # mutated copy: type/message/uuid dropped in turn
        keys = ["type", "message", "uuid", "parentUuid", "timestamp", "sessionId"]
        n = [0]

        def drop(o):
            n[0] += 1
            o.pop(keys[n[0] % len(keys)], None)
            return o

        _write(home, FILES_PROJ, f"{FILES_SID}.jsonl", _mutate(drop))
        return
    if kind == "odd-content":
        # mutated copy: message.content a number / null / dict / list of odd blocks (hand-made
        # shapes: the client never writes them)
        vals = [42, None, {"a": 1}, [1, None, "s", {"type": 7}, {"no": "type"}], True]
        n = [0]

        def odd(o):
            m = o.get("message")
            if isinstance(m, dict):
                n[0] += 1
                m["content"] = vals[n[0] % len(vals)]
            return o

        _write(home, FILES_PROJ, f"{FILES_SID}.jsonl", _mutate(odd))
        return
    if kind == "odd-tools":
        # mutated copy: tool_use input null/string/list, tool_result content a list of odd
        # blocks, message a string (hand-made shapes)
        n = [0]

        def odd(o):
            m = o.get("message")
            if isinstance(m, dict) and isinstance(m.get("content"), list):
                for b in m["content"]:
                    if not isinstance(b, dict):
                        continue
                    if b.get("type") == "tool_use":
                        n[0] += 1
                        b["input"] = [None, "a string", [1, 2], 5][n[0] % 4]
                        if n[0] % 3 == 0:
                            b["name"] = None
                    if b.get("type") == "tool_result":
                        b["content"] = [{"type": "image"}, {"type": "text"}, {"type": "text", "text": None}, 3, None, {"type": "tool_reference"}]
            if "toolUseResult" in o:
                o["toolUseResult"] = [None, "str", 5, {"filePath": None, "structuredPatch": "x"}][n[0] % 4]
            return o

        _write(home, FILES_PROJ, f"{FILES_SID}.jsonl", _mutate(odd))
        return
    if kind == "odd-timestamps":
        # mutated copy: timestamps a number / garbage string / null / dict (hand-made)
        vals = [1700000000, "yesterday", None, {"t": 1}, "2026-13-45T99:99:99Z", 1.5e12, ""]
        n = [0]

        def ts(o):
            n[0] += 1
            o["timestamp"] = vals[n[0] % len(vals)]
            return o

        _write(home, FILES_PROJ, f"{FILES_SID}.jsonl", _mutate(ts))
        return
    if kind == "odd-ids":
        # mutated copy: uuid/parentUuid/sessionId of the wrong types (hand-made)
        def ids(o):
            o["uuid"] = 5
            o["parentUuid"] = ["x"]
            o["sessionId"] = None
            if isinstance(o.get("message"), dict):
                o["message"]["id"] = 3
                o["message"]["usage"] = "lots"
                o["message"]["model"] = 7
            return o

        _write(home, FILES_PROJ, f"{FILES_SID}.jsonl", _mutate(ids))
        return
    if kind == "message-not-dict":
        # mutated copy: message a string / number / list (hand-made)
        n = [0]

        def m(o):
            if "message" in o:
                n[0] += 1
                o["message"] = ["text", 3, [1], None][n[0] % 4]
            return o

        _write(home, FILES_PROJ, f"{FILES_SID}.jsonl", _mutate(m))
        return
    if kind == "real-copy":
        shutil.copytree(REAL / FILES_PROJ, home / "projects" / FILES_PROJ)
        shutil.copytree(REAL / SUB_PROJ, home / "projects" / SUB_PROJ)
        # two sessions sharing a prefix, for the ambiguous-prefix target
        for s in ("abcdef00-0000-0000-0000-000000000001", "abcdef00-0000-0000-0000-000000000002"):
            _write(home, FILES_PROJ, f"{s}.jsonl", (REAL / FILES_PROJ / f"{FILES_SID}.jsonl").read_bytes())
        return
    if kind == "ff-name":
        # mutated copy of a real transcript under a file name holding a 0xff byte
        _write(home, FILES_PROJ, b"\xffbad.jsonl", (REAL / FILES_PROJ / f"{FILES_SID}.jsonl").read_bytes())
        _write(home, FILES_PROJ, f"{FILES_SID}.jsonl", (REAL / FILES_PROJ / f"{FILES_SID}.jsonl").read_bytes())
        d = home / "projects" / os.fsdecode(b"-tmp-\xff")
        d.mkdir(parents=True)
        (d / f"{SID}.jsonl").write_bytes((REAL / FILES_PROJ / f"{FILES_SID}.jsonl").read_bytes())
        return
    if kind.startswith("fuzz-"):
        _fuzz_home(home, int(kind[5:]))
        return
    if kind == "odd-fs":
        # dangling symlink, symlink loop, a project "dir" that is a file, a zero-byte subagent
        # lane, a directory named like a subagent lane, garbage sidecars (hand-made: the client
        # writes none of these, a crash or a user's tools can)
        d = home / "projects" / "-tmp-x"
        d.mkdir(parents=True)
        (d / f"{SID}.jsonl").symlink_to(d / "missing.jsonl")
        (d / "22222222-2222-3333-4444-555555555555.jsonl").symlink_to(d / "22222222-2222-3333-4444-555555555555.jsonl")
        os.symlink(b"/nonexistent\xff", os.path.join(os.fsencode(d), b"\xffdangling.jsonl"))
        (home / "projects" / "-tmp-file").write_bytes(b"not a dir")
        shutil.copytree(REAL / SUB_PROJ, home / "projects" / SUB_PROJ)
        sub = home / "projects" / SUB_PROJ / SUB_SID / "subagents"
        (sub / "agent-zero.jsonl").write_bytes(b"")
        (sub / "agent-dir.jsonl").mkdir()
        for m in sub.glob("*.meta.json"):
            m.write_bytes(b"\xff{garbage")
        (home / "sessions").mkdir()
        (home / "sessions" / "1.json").write_bytes(b"")
        (home / "sessions" / "2.json").write_text(json.dumps({"sessionId": SUB_SID, "pid": "x", "status": 5}))
        (home / "sessions" / "3.json").write_text(json.dumps([1, 2]))
        (home / "sessions" / "4.json").mkdir()
        (home / "tasks" / SUB_SID).mkdir(parents=True)
        (home / "tasks" / SUB_SID / "1.json").write_text("[]")
        (home / "tasks" / SUB_SID / "2.json").write_bytes(b"\x00\x00")
        (home / "tasks" / SUB_SID / "3.json").write_text(json.dumps({"id": None, "status": 3, "blocks": "x"}))
        (home / "file-history" / SUB_SID).mkdir(parents=True)
        (home / "file-history" / SUB_SID / "dir@v1").mkdir()
        (home / "plans").mkdir()
        (home / "plans" / "p.md").write_bytes(b"\xff\xfe\x00")
        return
    raise ValueError(kind)


ODD = [None, 7, -1, 1.5, "s", "", [], {}, [None], {"type": None}, True, "\x00\n\x1b[31m"]


def _fuzz(obj, rng, depth=0):
    """Replace some nested values by odd ones, keeping the top-level `type` mostly intact so the
    record reaches the deeper code paths."""
    if isinstance(obj, dict):
        for k in list(obj):
            if depth == 0 and k == "type" and rng.random() > 0.05:
                continue
            if rng.random() < 0.12:
                obj[k] = rng.choice(ODD)
            else:
                obj[k] = _fuzz(obj[k], rng, depth + 1)
    elif isinstance(obj, list):
        for i in range(len(obj)):
            if rng.random() < 0.08:
                obj[i] = rng.choice(ODD)
            else:
                obj[i] = _fuzz(obj[i], rng, depth + 1)
    return obj


def _fuzz_home(home: Path, seed: int) -> None:
    """Mutated copy of the whole real corpus (examples/claude-home): every transcript, subagent
    meta and task file with random odd values substituted (seeded, so failures reproduce)."""
    import random

    rng = random.Random(seed)
    shutil.copytree(REAL.parent, home, dirs_exist_ok=True)
    for p in sorted(home.rglob("*")):
        if not p.is_file():
            continue
        if p.suffix == ".jsonl":
            out = []
            for raw in p.read_bytes().splitlines():
                try:
                    obj = json.loads(raw)
                except ValueError:
                    out.append(raw)
                    continue
                out.append(json.dumps(_fuzz(obj, rng)).encode())
            p.write_bytes(b"\n".join(out) + b"\n")
        elif p.suffix == ".json":
            try:
                p.write_text(json.dumps(_fuzz(json.loads(p.read_bytes()), rng)))
            except ValueError:
                pass


CORPORA = [
    "empty-home", "empty-projects", "empty-project-dir", "dir-named-jsonl", "zero-byte",
    "metadata-only", "malformed-only", "missing-keys", "odd-content", "odd-tools",
    "odd-timestamps", "odd-ids", "message-not-dict", "real-copy", "ff-name", "odd-fs",
    "fuzz-1", "fuzz-2", "fuzz-3", "fuzz-5", "huge-line",
]


# The full matrix (every command with and without a target, per-session commands on every fuzzed
# session) takes minutes; the suite runs a reduced one. SSIFT_ROBUST_FULL=1 (or running this file
# as a script) runs the full matrix.
FULL = bool(os.environ.get("SSIFT_ROBUST_FULL"))


def quick_invocations(kind: str, home: Path) -> list[list[str]]:
    t = _target(kind)
    out = [["list"], ["stats"], ["search", "x"], ["search", "", "--count-by", "pairing"], ["status"],
           ["agents", "--tree", "--with-files"], ["files", "--by", "timeline"], ["plan", "--audit"], ["image"],
           ["audit", "reinjection"], ["recover", "--file", "hello.py"], ["whoami"], ["show", t, "--turn", "-1"],
           ["show", t, "--line", "1..5"], ["show", t, "--branch-points"],
           ["verbatim", t], ["recover", t, "--file", "hello.py", "--patches"], ["image", t, "--id", "1"],
           ["usage", "session"], ["usage", "blocks", t]]
    if kind.startswith("fuzz-"):
        out += [["show", s, "--line", "1.."] for s in sorted(p.stem for p in (home / "projects").glob("*/*.jsonl"))]
        out += [["verbatim", s] for s in sorted(p.stem for p in (home / "projects").glob("*/*.jsonl"))]
    return out


def _target(kind: str) -> str:
    return SID if kind in ("zero-byte", "metadata-only", "malformed-only", "dir-named-jsonl") or kind.startswith("empty") else FILES_SID


def invocations(kind: str, home: Path) -> list[list[str]]:
    """argv lists (without --format) for one corpus: the full matrix."""
    sid = {"real-copy": FILES_SID, "ff-name": FILES_SID}.get(kind)
    if kind in ("missing-keys", "odd-content", "odd-tools", "odd-timestamps", "odd-ids", "message-not-dict", "huge-line"):
        sid = FILES_SID
    if kind in ("zero-byte", "metadata-only", "malformed-only"):
        sid = SID
    target = sid or SID
    multi = [["list"], ["stats"], ["search", "x"], ["search", "", "--count"], ["status"], ["agents"],
             ["files"], ["plan"], ["image"], ["audit", "reinjection"], ["recover", "--file", "hello.py"], ["usage", "daily"]]
    out = [c + ([] if kind.startswith("empty") else []) for c in multi]
    out += [[*c, target] for c in multi]
    out += [
        ["show", target, "--turn", "1"], ["show", target, "--turn", "-1"], ["show", target, "--line", "1..5"],
        ["show", target, "--branch-points"], ["show", target, "--raw", "--line", "1"],
        ["wait", target, "--until", "stop", "--timeout", "1"], ["wait", target, "--until", "write:x", "--timeout", "1"],
        ["whoami"],
        ["verbatim", target], ["verbatim", target, "--slices"],
        ["search", "", target, "--count-by", "tool"], ["search", "", target, "--count-by", "day"],
        ["search", "", target, "-t", "agent", "--since", "3d"],
        ["files", target, "--by", "timeline"], ["files", target, "--by", "dir"],
        ["recover", target, "--file", "hello.py"], ["recover", target, "--file", "hello.py", "--coverage"],
        ["recover", target, "--list-backups"], ["plan", target, "--audit"], ["image", target, "--id", "1"],
        ["agents", target, "--tree", "--with-files"],
    ]
    if kind.startswith("fuzz-") or kind == "odd-fs":
        sids = sorted(p.stem for p in (home / "projects").glob("*/*.jsonl"))
        for s in sids:
            out += [["show", s, "--line", "1.."], ["show", s, "--branch-points"], ["verbatim", s],
                    ["files", s, "--by", "timeline"],
                    ["recover", s, "--file", "hello.py", "--patches"], ["recover", s, "--list-backups"],
                    ["image", s, "--id", "1"], ["search", "", s, "--count-by", "pairing"], ["status", s],
                    ["plan", s, "--audit"], ["agents", s, "--tree", "--with-files"]]
    if kind == "real-copy":
        sub = home / "projects" / SUB_PROJ / SUB_SID / "subagents" / "agent-ae2785e10678ace04.jsonl"
        for c in (["list"], ["show", "--line", "1.."], ["stats"], ["search", "x"], ["agents"], ["files"], ["verbatim"],
                  ["recover", "--file", "hello.py"], ["audit", "reinjection"], ["image"], ["plan"], ["status"]):
            out.append([*c, str(sub)])
        for t in ("abcdef00", "99999999-9999-9999-9999-999999999999", "nope"):
            out += [["show", t, "--turn", "1"], ["list", t], ["verbatim", t], ["search", "x", t], ["files", t]]
    return out


def run(argv: list[str], home: Path, stdin: bytes = b"") -> subprocess.CompletedProcess:
    env = dict(os.environ, HOME=str(home.parent / "userhome"), CLAUDE_CONFIG_DIR=str(home), NO_COLOR="1")
    env.pop("CLAUDE_CODE_SESSION_ID", None)
    return subprocess.run([sys.executable, "-m", "sessionsift", *argv], env=env, input=stdin,
                          capture_output=True, timeout=120)


RECOVER_STATUSES = (5, 6, 7, 8)


def problems_of(argv, p: subprocess.CompletedProcess, fmt: str) -> list[str]:
    """What is wrong with one run. Every invocation of the sweep is a valid request, so it must
    get past argument parsing: a usage error (click's `Usage:` / `Error:`, our `usage error:`, a
    JSON error of kind `usage`) is a failure, not a pass. A target error (exit 2, `sessionsift:
    error:`) is a real answer on a hostile corpus (no projects/, no such session)."""
    bad = []
    err = p.stderr.decode("utf-8", "replace")
    if "Traceback" in err or "Traceback" in p.stdout.decode("utf-8", "replace"):
        bad.append(f"traceback: {err.strip().splitlines()[-1] if err.strip() else ''}")
    if "internal error" in err:
        bad.append(f"internal error: {err.strip().splitlines()[0]}")
    ok = (0, 1, 2, 3, 124) + (RECOVER_STATUSES if argv[0] == "recover" else ())
    if p.returncode not in ok:
        bad.append(f"exit {p.returncode}")
    if "Usage:" in err or err.startswith("Error:") or "usage error:" in err:
        bad.append(f"did not get past argument parsing: {err.strip()[:200]}")
    if p.returncode == 2 and "sessionsift: error:" not in err:
        bad.append("exit 2 without an error message")
    if fmt == "json":
        rows = [ln for ln in p.stdout.decode("utf-8", "replace").splitlines() if ln.strip()]
        try:
            last = json.loads(rows[-1]) if rows else None
        except ValueError:
            last = None
        if not (isinstance(last, dict) and last.get("kind") == "summary"):
            bad.append("json output does not end with a summary row")
        elif (last.get("error") or {}).get("kind") == "usage":
            bad.append(f"usage error: {last['error'].get('message')}")
    return [f"{' '.join(argv)} --format {fmt}: {b}" for b in bad]


def sweep(kind: str, root: Path, full: bool = FULL) -> list[str]:
    home = root / kind
    build(kind, home)
    jobs = [(a, f) for a in (invocations if full else quick_invocations)(kind, home) for f in ("text", "json")]
    if not full:  # one bounded wait per corpus (it sleeps up to its timeout)
        jobs.append((["wait", _target(kind), "--until", "stop", "--timeout", "1"], "json"))
    with ThreadPoolExecutor(max_workers=4) as ex:
        results = list(ex.map(lambda j: (j, run([*j[0], "--format", j[1]], home)), jobs))
    bad = []
    for (argv, fmt), p in results:
        bad += problems_of(argv, p, fmt)
    return bad


# corpora that live under projects/ only, so they can share one data root (each moved to a
# project dir of its own); the home-level ones and the costly ones run on their own
MERGED = ["empty-project-dir", "dir-named-jsonl", "zero-byte", "metadata-only", "malformed-only",
          "missing-keys", "odd-content", "odd-tools", "odd-timestamps", "odd-ids", "message-not-dict",
          "ff-name", "odd-fs", "fuzz-1", "fuzz-5", "fuzz-23"]


def build_mixed(home: Path, scratch: Path) -> list[Path]:
    """One data root holding every MERGED corpus; returns the transcript paths (targets by path,
    since the mutated copies share session ids)."""
    (home / "projects").mkdir(parents=True)
    for kind in MERGED:
        src = scratch / kind
        build(kind, src)
        for d in os.listdir(os.fsencode(src / "projects")):
            os.rename(os.path.join(os.fsencode(src / "projects"), d),
                      os.path.join(os.fsencode(home / "projects"), kind.encode() + b"-" + d))
        for side in ("sessions", "tasks", "file-history", "plans"):
            if (src / side).is_dir():
                shutil.copytree(src / side, home / side, dirs_exist_ok=True)
    out = []
    for d in os.listdir(os.fsencode(home / "projects")):
        pd = os.path.join(os.fsencode(home / "projects"), d)
        if os.path.isdir(pd):
            for f in os.listdir(pd):
                fp = os.path.join(pd, f)
                if f.endswith(b".jsonl") and os.path.isfile(fp):
                    out.append(Path(os.fsdecode(fp)))
    return sorted(out)


def _check_all(jobs: list[tuple[list[str], str]], home: Path) -> list[str]:
    with ThreadPoolExecutor(max_workers=4) as ex:
        results = list(ex.map(lambda j: (j, run([*j[0], "--format", j[1]], home)), jobs))
    bad = []
    for (argv, fmt), p in results:
        bad += problems_of(argv, p, fmt)
    return bad


def test_no_traceback_mixed(tmp_path):
    """Every command, both formats, over one data root holding every hostile corpus; then the
    per-session commands on each transcript given by path."""
    if FULL:
        bad = [b for k in MERGED for b in sweep(k, tmp_path / "full", full=True)]
        assert not bad, "\n".join(bad)
        return
    home = tmp_path / "mixed"
    paths = build_mixed(home, tmp_path / "scratch")
    assert len(paths) > 20
    multi = [["list"], ["stats"], ["search", "x"], ["search", "", "--count-by", "pairing"], ["status"],
             ["agents", "--tree", "--with-files"], ["files", "--by", "timeline"], ["plan", "--audit"], ["image"],
             ["audit", "reinjection"], ["recover", "--file", "hello.py"], ["whoami"], ["usage", "session", "--breakdown"],
             ["usage", "daily", "--by", "model"], ["usage", "blocks"]]
    jobs = [(a, f) for a in multi for f in ("text", "json")]
    for i, p in enumerate(paths):
        jobs += [(["show", str(p), "--line", "1.."], "json"), (["verbatim", str(p)], "text" if i % 2 else "json")]
        if i % 3 == 1:
            jobs += [(["show", str(p), "--turn", "-1"], "text"), (["status", str(p)], "json")]
        if i % 3 == 0:
            jobs += [(["show", str(p), "--branch-points"], "text"), (["files", str(p)], "text"),
                     (["recover", str(p), "--file", "hello.py", "--patches"], "json")]
    jobs += [(["wait", str(paths[0]), "--until", "stop", "--timeout", "1"], "json"),
             (["wait", str(paths[1]), "--until", "idle", "--timeout", "1"], "text")]
    bad = _check_all(jobs, home)
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("kind", ["empty-home", "empty-projects", "real-copy", "huge-line"])
def test_no_traceback(kind, tmp_path):
    if FULL:
        bad = sweep(kind, tmp_path, full=True)
    else:
        home = tmp_path / kind
        build(kind, home)
        t = _target(kind)
        cmds = [["list"], ["stats"], ["search", "x"], ["show", t, "--turn", "-1"], ["verbatim", t]]
        if kind != "huge-line":
            cmds += [["status"], ["agents"], ["files"], ["plan"], ["image"], ["audit", "reinjection"],
                     ["recover", "--file", "hello.py"], ["wait", t, "--until", "stop", "--timeout", "1"]]
        if kind == "real-copy":
            sub = home / "projects" / SUB_PROJ / SUB_SID / "subagents" / "agent-ae2785e10678ace04.jsonl"
            cmds += [[c, str(sub)] for c in ("verbatim", "agents", "files", "stats")]
            cmds += [["show", str(sub), "--line", "1..3"]]
            cmds += [[c, t] for t in ("abcdef00", "99999999-9999-9999-9999-999999999999") for c in ("list",)]
            cmds += [["show", t, "--turn", "1"] for t in ("abcdef00", "99999999-9999-9999-9999-999999999999")]
        fmts = ("json",) if kind == "huge-line" else ("text", "json")
        bad = _check_all([(c, f) for c in cmds for f in fmts], home)
    assert not bad, "\n".join(bad)


if __name__ == "__main__":  # exploration: python tests/test_robustness.py [kind...]
    import tempfile

    kinds = sys.argv[1:] or CORPORA + ["huge-line"]
    with tempfile.TemporaryDirectory() as d:
        for k in kinds:
            for b in sweep(k, Path(d), full=True):
                print(k, "|", b)


def test_the_sweep_counts_a_usage_error_as_a_failure(tmp_path):
    """The sweep once passed `wait` (no --until), `show` (no selector; now the whole-session view:
    `--raw` without an address stays a usage error) and `recover` (no --file) on every corpus: they
    never got past argument parsing. Its check now fails them."""
    home = tmp_path / "h"
    build("real-copy", home)
    for argv in (["wait", FILES_SID, "--timeout", "1"], ["show", FILES_SID, "--raw"], ["recover", FILES_SID]):
        for fmt in ("text", "json"):
            p = run([*argv, "--format", fmt], home)
            assert p.returncode == 2, (argv, p.returncode)
            assert problems_of(argv, p, fmt), (argv, fmt, p.stderr)


# --- --sessions-from with nothing in it --------------------------------------------------------

SCOPED = ["list", "stats", "search x", "status", "agents", "files", "plan", "image", "recover --file hello.py",
          "audit reinjection"]


@pytest.mark.parametrize("source", ["empty-file", "stdin"])
def test_sessions_from_empty(source, tmp_path):
    """An empty id list restricts the scope to nothing: never a traceback, and never a silent
    full-corpus answer (the real corpus here holds sessions that must not be counted)."""
    home = tmp_path / "h"
    build("real-copy", home)
    f = tmp_path / "ids.txt"
    f.write_text("")
    arg = str(f) if source == "empty-file" else "-"
    bad = []
    for c in SCOPED:
        for fmt in ("text", "json"):
            argv = [*c.split(), "--sessions-from", arg, "--format", fmt]
            p = run(argv, home, stdin=b"")
            bad += problems_of(argv, p, fmt)
            if fmt == "json" and p.returncode != 2:
                rows = [json.loads(ln) for ln in p.stdout.splitlines() if ln.strip()]
                leaked = [r for r in rows if r.get("session_id") in (FILES_SID, SUB_SID)]
                if leaked:
                    bad.append(f"{' '.join(argv)}: rows for sessions outside the (empty) list")
    assert not bad, "\n".join(bad)


# --- regressions: each crashed before its fix (hand-made shapes: the client never writes them) ---


def _one(home: Path, records: list[dict]) -> None:
    _write(home, "-tmp-x", f"{SID}.jsonl", b"".join(json.dumps(r).encode() + b"\n" for r in records))


def _asst(content, **kw):
    return {"type": "assistant", "uuid": "a1", "parentUuid": "u1", "sessionId": SID,
            "timestamp": "2026-01-01T00:00:00Z", "message": {"role": "assistant", "content": content}, **kw}


USER = {"type": "user", "uuid": "u1", "parentUuid": None, "sessionId": SID, "timestamp": "2026-01-01T00:00:00Z",
        "message": {"role": "user", "content": "hi"}}


@pytest.mark.parametrize("argv", [["agents", SID, "--with-files"], ["agents", SID], ["stats", SID], ["show", SID, "--line", "1.."],
                                  ["status", SID], ["search", "", SID]])
def test_tool_use_with_odd_name_and_input(argv, tmp_path):
    """tool_use `name` a list (unhashable: `name in SPAWN_TOOLS` raised TypeError in classify and
    agents) and Write `input` a string (agents --with-files called .get on it)."""
    home = tmp_path / "h"
    _one(home, [USER, _asst([{"type": "tool_use", "id": "t1", "name": ["Agent"], "input": {}},
                             {"type": "tool_use", "id": "t2", "name": "Write", "input": "a string"}])])
    for fmt in ("text", "json"):
        p = run([*argv, "--format", fmt], home)
        assert not problems_of(argv, p, fmt), p.stderr.decode()


@pytest.mark.parametrize("argv", [["stats", SID], ["show", SID, "--line", "1.."], ["search", "", SID]])
def test_system_subtype_unhashable(argv, tmp_path):
    """system `subtype` a dict: GATED_SYSTEM.get(subtype) raised TypeError in classify."""
    home = tmp_path / "h"
    _one(home, [USER, {"type": "system", "subtype": {"x": 1}, "uuid": "s1", "parentUuid": "u1", "sessionId": SID,
                       "timestamp": "2026-01-01T00:00:01Z", "content": "x"}])
    for fmt in ("text", "json"):
        p = run([*argv, "--format", fmt], home)
        assert not problems_of(argv, p, fmt), p.stderr.decode()


@pytest.mark.parametrize("argv", [["agents", SID], ["status", SID]])
def test_unhashable_tool_name_in_live(argv, tmp_path):
    """tool_use `name` a dict: `name in SHELL_TOOLS` raised TypeError in providers/claude/live/background.py."""
    home = tmp_path / "h"
    _one(home, [USER, _asst([{"type": "tool_use", "id": "t1", "name": {"n": "Bash"}, "input": {"run_in_background": True}}])])
    for fmt in ("text", "json"):
        p = run([*argv, "--format", fmt], home)
        assert not problems_of(argv, p, fmt), p.stderr.decode()


@pytest.mark.parametrize("argv", [["agents", SID], ["status", SID]])
def test_unhashable_tool_ids(argv, tmp_path):
    """tool_use `id` / tool_result `tool_use_id` a dict or list: dict/set lookups raised TypeError
    in providers/claude/live/agents.py, providers/claude/live/background.py and providers/claude/live/verdict.py."""
    home = tmp_path / "h"
    _one(home, [USER,
                _asst([{"type": "tool_use", "id": ["x"], "name": "Bash", "input": {"command": "sleep 9", "run_in_background": True}},
                       {"type": "tool_use", "id": "t9", "name": "Agent", "input": {"prompt": "p"}}]),
                {"type": "user", "uuid": "u2", "parentUuid": "a1", "sessionId": SID, "timestamp": "2026-01-01T00:00:02Z",
                 "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": {"a": 1}, "content": "ok"},
                                                          {"type": "tool_result", "tool_use_id": ["t9"], "content": "ok"}]}}])
    for fmt in ("text", "json"):
        p = run([*argv, "--format", fmt], home)
        assert not problems_of(argv, p, fmt), p.stderr.decode()


@pytest.mark.parametrize("argv", [["search", "x"], ["search", "", "--count"], ["search", "", SID, "--count-by", "pairing"],
                                  ["stats"], ["list"]])
def test_record_type_unhashable(argv, tmp_path):
    """A record whose `type` is a dict: `t not in KNOWN_TYPES` raised TypeError in search."""
    home = tmp_path / "h"
    _one(home, [USER, {"type": {"x": 1}, "uuid": "z", "sessionId": SID, "text": "x"}, {"type": ["a"], "x": "x"}])
    for fmt in ("text", "json"):
        p = run([*argv, "--format", fmt], home)
        assert not problems_of(argv, p, fmt), p.stderr.decode()


def test_dangling_transcript_symlink_is_a_problem(tmp_path):
    """A <session>.jsonl that is a dangling symlink (or a loop, or a non-UTF-8 name) could not be
    read: it was skipped silently (0 sessions, no problem, exit 0/1); now it is a problem and exit 3
    (status and agents answered 1 "nothing matched" with no session in scope despite problems)."""
    home = tmp_path / "h"
    d = home / "projects" / "-tmp-x"
    d.mkdir(parents=True)
    (d / f"{SID}.jsonl").symlink_to(d / "missing.jsonl")
    os.symlink(b"/nonexistent", os.path.join(os.fsencode(d), b"\xffloop.jsonl"))
    for c in (["list"], ["stats"], ["status"], ["agents"], ["files"]):
        p = run([*c, "--format", "json"], home)
        assert not problems_of(c, p, "json"), p.stderr.decode()
        summary = json.loads(p.stdout.splitlines()[-1])
        assert len(summary["problems"]) == 2, (c, summary)
        assert p.returncode == 3, (c, p.returncode)
