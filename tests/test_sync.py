"""`sync --to DATASET` and the dataset answers, on the committed real-client corpora of every
provider (examples/home: Claude Code, Codex CLI, Gemini CLI, opencode, Crush).

What is held: a dataset answer equals the local answer on the same sessions (usage daily and
session, JSON rows byte for byte); a re-run adds nothing; an appended transcript or database
appends rows and a rewritten one replaces its session's rows; a run that dies at any write leaves
no row visible and the next run completes it with no duplicate and no gap; two machines syncing
at once write disjoint files; across machines one API response is counted once.

Mutations are of copies of real client output only: a transcript cut at a line boundary is the
file as it was earlier in the session (the full file is what the client appended to it), an
opencode database with its last message's rows deleted is the database before that message.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("duckdb", reason="duckdb is a dependency: pip install -e '.[test]'")

from sessionsift.providers.scope import RootRequest, select, survey  # noqa: E402
from sessionsift.sync import run as R  # noqa: E402
from sessionsift.sync.dataset import Dataset  # noqa: E402
from sessionsift.sync.machine import Machine  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
HOME = REPO / "examples" / "home"


def _sel(home: Path):
    return select(survey(RootRequest(home=str(home))), [])


def _n_sessions(home: Path, subagents: bool = True) -> int:
    """Sessions of every provider under `home`, child sessions included (what sync reads)."""
    from sessionsift.export.source import pairs

    sel = _sel(home)
    return len(pairs(sel if subagents else sel.main_only(), subagents))


def _cli(*args, check: int | None = 0) -> tuple[subprocess.CompletedProcess, list[dict]]:
    p = subprocess.run([sys.executable, "-m", "sessionsift", *args], capture_output=True, text=True)
    if check is not None:
        assert p.returncode == check, (p.returncode, p.stderr[-2000:])
    return p, [json.loads(x) for x in p.stdout.splitlines() if x.startswith("{")]


def _rows(rows: list[dict], kind: str) -> list[dict]:
    return [r for r in rows if r["kind"] == kind]


USAGE_KEYS = ("messages", "messages_without_usage", "messages_without_token_counts", "records_merged", "input_tokens",
              "output_tokens", "cache_write_tokens", "cache_write_1h_tokens", "cache_read_tokens", "reasoning_tokens",
              "total_tokens", "cost_usd", "cost_complete", "no_price", "client_cost_usd", "client_cost_messages")


def _usage_equal(ds: Path, home: Path, report: str = "daily", *extra: str, copies: int = 1) -> list[dict]:
    """`usage REPORT --dataset` equals the local answer; `copies`: how many machines synced the same
    sessions (every response counted once: only the records read for them multiply)."""
    _, a = _cli("usage", report, "--dataset", str(ds), "--timezone", "UTC", "--format", "json", *extra)
    _, b = _cli("usage", report, "--home", str(home), "--timezone", "UTC", "--format", "json", *extra)
    kind = "session" if report == "session" else "period"
    ra, rb = _rows(a, kind), _rows(b, kind)

    def scaled(rows):
        out = []
        for r in rows:
            r = dict(r, records_merged=r["records_merged"] * copies)
            if "models" in r:
                r["models"] = scaled(r["models"])
            out.append(r)
        return out

    assert ra == scaled(rb)
    sa, sb = a[-1], b[-1]
    assert {k: sa[k] for k in USAGE_KEYS} == {**{k: sb[k] for k in USAGE_KEYS}, "records_merged": sb["records_merged"] * copies}
    assert sa["models"] == scaled(sb["models"])
    if copies == 1:  # (the reading tallies behind some notes count what each machine read)
        assert sa["notes"] == sb["notes"]
    assert sa["copies_merged"] == sb["copies_merged"] + (copies - 1) * sb["records_merged"]
    return ra


def _home_copy(tmp_path: Path) -> Path:
    dst = tmp_path / "home"
    shutil.copytree(HOME, dst, symlinks=False)
    return dst


def _counts(ds: Path) -> dict[str, int]:
    con = Dataset.open(str(ds)).connect()
    return {t: con.sql(f"SELECT count(*) FROM {t}").fetchall()[0][0]
            for t in ("sessions", "records", "usage", "tool_calls", "file_changes")}


def _local_counts(home: Path) -> dict[str, int]:
    """What a first sync of `home` into an empty dataset holds (a reference for later states)."""
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        R.sync(d, _sel(home), Machine("ref-id", "ref", "h"))
        return _counts(Path(d))


def test_usage_daily_and_session_over_a_dataset_equal_the_local_answer(tmp_path):
    ds = tmp_path / "ds"
    p, rows = _cli("sync", "--to", str(ds), "--home", str(HOME), "--machine", "laptop", "--format", "json")
    s = rows[-1]
    n = _n_sessions(HOME)
    assert n > 40 and s["sessions"] == n and s["new"] == n and s["unchanged"] == 0 and s["runs"] == 1
    assert set(s["rows"]) == {"sessions", "records", "usage", "tool_calls", "file_changes"}
    daily = _usage_equal(ds, HOME, "daily")
    assert len(daily) == 2 and sum(r["messages"] for r in daily) > 100
    assert len(_usage_equal(ds, HOME, "session")) == _n_sessions(HOME, subagents=False)
    _usage_equal(ds, HOME, "monthly", "--by", "model")
    _usage_equal(ds, HOME, "daily", "--no-subagents")
    _usage_equal(ds, HOME, "daily", "--provider", "codex")


def test_a_rerun_adds_nothing(tmp_path):
    ds = tmp_path / "ds"
    _cli("sync", "--to", str(ds), "--home", str(HOME), "--machine", "m1")
    before = sorted((p.relative_to(ds), p.stat().st_size, p.stat().st_mtime_ns) for p in ds.rglob("*") if p.is_file())
    p, rows = _cli("sync", "--to", str(ds), "--home", str(HOME), "--format", "json")
    s = rows[-1]
    assert (s["unchanged"], s["new"], s["appended"], s["rewritten"], s["runs"], s["files"]) == (_n_sessions(HOME), 0, 0, 0, 0, 0)
    assert s["machine"] == "m1"  # the name given once is kept
    after = sorted((p.relative_to(ds), p.stat().st_size, p.stat().st_mtime_ns) for p in ds.rglob("*") if p.is_file())
    assert after == before


def test_two_machines_with_the_same_sessions_count_each_response_once(tmp_path):
    ds = tmp_path / "ds"
    for name in ("laptop", "workstation"):
        R.sync(str(ds), _sel(HOME), Machine(f"id-{name}", name, name))
    c = _counts(ds)
    one = _local_counts(HOME)
    assert c["sessions"] == 2 * one["sessions"] and c["usage"] == 2 * one["usage"]
    daily = _usage_equal(ds, HOME, "daily", copies=2)  # every response once, though two machines hold it
    _usage_equal(ds, HOME, "session", copies=2)
    _, rows = _cli("usage", "daily", "--dataset", str(ds), "--format", "json")
    assert [m["machine"] for m in rows[-1]["machines"]] == ["laptop", "workstation"]
    assert sum(r["messages"] for r in daily) == rows[-1]["messages"]


def _cut(path: Path, keep_lines: int) -> bytes:
    data = path.read_bytes()
    lines = data.splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:keep_lines]))
    return data


def test_an_appended_transcript_appends_rows_and_a_rewritten_one_replaces_its_session(tmp_path):
    home = _home_copy(tmp_path)
    ds = tmp_path / "ds"
    m = Machine("id-a", "a", "a")
    tr = next((home / ".claude" / "projects" / "-tmp-ssift-rc-files-basic-work").glob("*.jsonl"))
    n = len(tr.read_bytes().splitlines())
    full = _cut(tr, n // 2)  # the transcript as it was halfway through the session
    R.sync(str(ds), _sel(home), m)
    half = _counts(ds)
    tr.write_bytes(full)  # the client appended the rest
    res = R.sync(str(ds), _sel(home), m)
    assert (res.appended, res.rewritten, res.new, res.unchanged) == (1, 0, 0, _n_sessions(home) - 1)
    assert _counts(ds) == _local_counts(home)
    assert res.rows["records"] == _counts(ds)["records"] - half["records"]  # only the new rows were written
    _usage_equal(ds, home, "daily")
    _usage_equal(ds, home, "session")
    # rewritten: the same file without one of its early lines (not a prefix of what was synced)
    lines = full.splitlines(keepends=True)
    tr.write_bytes(b"".join(lines[:2] + lines[3:]))
    res = R.sync(str(ds), _sel(home), m)
    assert (res.appended, res.rewritten) == (0, 1)
    assert _counts(ds) == _local_counts(home)
    _usage_equal(ds, home, "session")
    con = Dataset.open(str(ds)).connect()
    versions = con.sql("SELECT count(*) FROM sessions_versions WHERE session_id = ?", params=[tr.stem]).fetchall()[0][0]
    assert versions == 3


def test_an_opencode_database_that_grew_appends_its_new_rows(tmp_path):
    home = _home_copy(tmp_path)
    db = home / ".local" / "share" / "opencode" / "opencode.db"
    full = db.read_bytes()
    con = sqlite3.connect(db)
    sid, mid = con.execute("SELECT session_id, id FROM message ORDER BY time_created DESC, id DESC LIMIT 1").fetchone()
    con.execute("DELETE FROM part WHERE message_id = ?", (mid,))
    con.execute("DELETE FROM message WHERE id = ?", (mid,))
    con.commit()
    con.close()
    ds = tmp_path / "ds"
    m = Machine("id-a", "a", "a")
    R.sync(str(ds), _sel(home), m)
    db.write_bytes(full)  # the client wrote that message
    for suf in ("-wal", "-shm"):
        Path(str(db) + suf).unlink(missing_ok=True)
    res = R.sync(str(ds), _sel(home), m)
    assert res.changed == 1 and res.unchanged == _n_sessions(home) - 1 and (res.appended + res.rewritten) == 1
    assert res.appended == 1, "a message added at the end is an append"
    assert _counts(ds) == _local_counts(home)
    _usage_equal(ds, home, "session")


class _Killed(BaseException):
    """Stands for the process being killed at this point (not an Exception: nothing catches it)."""


def test_a_sync_killed_at_any_write_leaves_no_duplicate_and_no_gap(tmp_path, monkeypatch):
    from sessionsift.sync.dataset import run_of
    from sessionsift.sync.store import Store

    home = _home_copy(tmp_path)
    tr = next((home / ".claude" / "projects" / "-tmp-ssift-rc-interactive-work").glob("*.jsonl"))
    full = _cut(tr, 10)
    ds = tmp_path / "ds"
    m = Machine("id-a", "a", "a")
    R.sync(str(ds), _sel(home), m)
    tr.write_bytes(full)
    want = _local_counts(home)
    place = Store.place
    k, writes = 0, None
    while writes is None or k < writes:  # die at the 1st write put in place, the 2nd, ..., the manifest
        k += 1
        before = _counts(ds)
        calls = [0]

        def dying(self, tmp, rel, _k=k, _calls=calls):
            _calls[0] += 1
            if _calls[0] == _k:
                self.discard(tmp)
                raise _Killed()
            return place(self, tmp, rel)

        monkeypatch.setattr(Store, "place", dying)
        with pytest.raises(_Killed):
            R.sync(str(ds), _sel(home), m)
        monkeypatch.setattr(Store, "place", place)
        assert _counts(ds) == before  # nothing of the dead run is visible
        res = R.sync(str(ds), _sel(home), m)
        assert res.orphans_removed >= k - 1 and res.appended == 1
        writes = res.files + 1  # its files, then the manifest
        assert _counts(ds) == want  # no duplicate, no gap
        committed = Dataset.open(str(ds)).committed["a"]
        left = [f for f in ds.rglob("*") if f.is_file() and "_manifests" not in f.parts]
        assert left and all(run_of(f.name) in committed for f in left)  # no file of a dead run is left
        _usage_equal(ds, home, "session")
        _cut(tr, 10)  # back to the cut transcript (a rewrite), so the next round appends again
        R.sync(str(ds), _sel(home), m)
        tr.write_bytes(full)
    assert k == writes >= 4


def test_two_machines_syncing_at_once_write_disjoint_files(tmp_path):
    ds = tmp_path / "shared"
    procs = []
    for name in ("alpha", "beta"):
        env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / f"state-{name}")}
        procs.append(subprocess.Popen([sys.executable, "-m", "sessionsift", "sync", "--to", str(ds), "--home", str(HOME),
                                       "--machine", name, "--format", "json"], stdout=subprocess.PIPE, env=env))
    outs = [p.communicate()[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0]
    ids = [json.loads(o.splitlines()[-1])["machine_id"] for o in outs]
    assert ids[0] != ids[1]
    files = [p.relative_to(ds).as_posix() for p in ds.rglob("*") if p.is_file()]
    for f in files:
        who = {n for n in ("alpha", "beta") if f"machine={n}/" in f or f == f"_manifests/{n}.json"}
        assert len(who) == 1, f
    ds_ = Dataset.open(str(ds))
    assert sorted(ds_.manifests) == ["alpha", "beta"]
    _usage_equal(ds, HOME, "daily", copies=2)


def test_a_name_another_machine_owns_is_refused(tmp_path):
    ds = tmp_path / "ds"
    R.sync(str(ds), _sel(HOME), Machine("id-1", "box", "h1"))
    from sessionsift.errors import UsageError

    with pytest.raises(UsageError, match="belongs to another machine"):
        R.sync(str(ds), _sel(HOME), Machine("id-2", "box", "h2"))
    res = R.sync(str(ds), _sel(HOME), Machine("id-2", "box", "h2"), adopt=True)
    assert res.unchanged == _n_sessions(HOME)  # the adopted history is this machine's now


def test_query_runs_sql_over_the_current_rows(tmp_path):
    ds = tmp_path / "ds"
    R.sync(str(ds), _sel(HOME), Machine("id-a", "a", "a"))
    want = _counts(ds)
    _, rows = _cli("query", "SELECT provider, count(*) AS n FROM records GROUP BY provider ORDER BY provider",
                   "--dataset", str(ds), "--format", "json")
    assert rows[0]["schema"] == "sessionsift.dataset/1"
    got = {r["provider"]: r["n"] for r in _rows(rows, "row")}
    assert set(got) >= {"claude-code", "codex", "gemini-cli", "opencode", "crush"}
    assert sum(got.values()) == want["records"]
    p, _ = _cli("query", "SELECT * FROM no_such_view", "--dataset", str(ds), check=2)
    assert "the query failed" in p.stderr


def _sessions(rows: list[dict]) -> list[dict]:
    return [{k: v for k, v in r.items() if k != "machine"} for r in rows if r["kind"] == "session"]


@pytest.mark.parametrize("extra", [(), ("--no-subagents",)])
def test_stats_and_list_over_a_dataset_equal_the_local_answer(tmp_path, extra):
    ds = tmp_path / "ds"
    R.sync(str(ds), _sel(HOME), Machine("id-a", "a", "a"))
    # stats: every session's `stats --shared` census, summed the same way (Claude Code included)
    _, a = _cli("stats", "--dataset", str(ds), "--format", "json", *extra)
    _, b = _cli("stats", "--home", str(HOME), "--shared", "--format", "json", *extra)
    key = lambda r: (r["provider"], r["session_id"])  # noqa: E731
    assert sorted(_sessions(a), key=key) == sorted(_sessions(b), key=key)
    assert len(_sessions(a)) == _n_sessions(HOME, subagents=not extra)
    assert a[-1]["shared"] == b[-1]["shared"] and a[-1]["shared"]["records"] > 500
    assert all(r["machine"] == "a" for r in a if r["kind"] == "session")
    assert a[-1]["left_out"]  # Claude Code's deep census is named as not in the dataset
    # list: the same rows in the same order
    _, a = _cli("list", "--dataset", str(ds), "--format", "json", *extra)
    _, b = _cli("list", "--home", str(HOME), "--format", "json", *extra)
    assert _sessions(a) == _sessions(b)
    for k in ("sessions", "child_sessions", "files_read", "bytes_total", "bytes_read"):
        assert a[-1][k] == b[-1][k], k


_HIT_KEYS = ("provider", "session_id", "lane", "locator", "line", "text", "match", "turn", "record_kind", "tool_name",
             "timestamp", "turn_context", "tool_input", "call_id", "exit_code", "is_error", "tokens", "model", "copy_of",
             "truncated", "rewound", "is_subagent", "parent_session_id", "path", "role", "native")


def test_search_over_a_dataset_finds_what_the_local_search_finds(tmp_path):
    """Every provider but Claude Code: the same hit rows (the shared search over the stored records).
    Claude Code's records are searched through the shared records in a dataset: the same lines
    as its local search, but for the records whose shared kind is meta (searched with -t meta)."""
    ds = tmp_path / "ds"
    R.sync(str(ds), _sel(HOME), Machine("id-a", "a", "a"))
    con = Dataset.open(str(ds)).connect()
    meta = {tuple(x) for x in con.sql("SELECT session_id, path, line FROM records WHERE provider = 'claude-code' "
                                      "AND kind IN ('meta', 'unknown')").fetchall()}
    key = lambda h: (h["provider"], h["session_id"], h["locator"])  # noqa: E731
    total = 0
    for pat in (["hello"], ["-i", "ERROR"], [""], ["sub\\.txt"], ["hello", "-t", "agent.tool.use"]):
        p, a = _cli("search", *pat, "--dataset", str(ds), "--format", "json", check=None)
        q, b = _cli("search", *pat, "--home", str(HOME), "--format", "json", check=None)
        assert p.returncode == q.returncode == (1 if not _rows(b, "hit") else 0), (pat, p.stderr, q.stderr)
        ha = [{k: r.get(k) for k in _HIT_KEYS} for r in _rows(a, "hit")]
        hb = [{k: r.get(k) for k in _HIT_KEYS} for r in _rows(b, "hit")]
        assert sorted((h for h in ha if h["provider"] != "claude-code"), key=key) == \
            sorted((h for h in hb if h["provider"] != "claude-code"), key=key), pat
        ca = {(h["session_id"], h["path"], h["line"]) for h in ha if h["provider"] == "claude-code"}
        cb = {(h["session_id"], h["path"], h["line"]) for h in hb if h["provider"] == "claude-code"}
        assert ca == cb - meta, pat
        total += len(ha)
    assert total > 300
    _, c = _cli("search", "hello", "-c", "--dataset", str(ds), "--format", "json")
    _, local = _cli("search", "hello", "-c", "--home", str(HOME), "--format", "json")
    # the census over the dataset equals the local one (67 over examples/home's nine providers)
    assert _rows(c, "count")[0]["count"] == _rows(local, "count")[0]["count"] == 67


def test_docs_dataset_lists_exactly_the_schema():
    import re

    from sessionsift.export import parquet as X
    from sessionsift.sync import schema as S

    doc = (REPO / "docs" / "dataset.md").read_text()
    for table, cols in S.TABLES.items():
        sec = doc.split(f"### `{table}`", 1)[1].split("\n### ", 1)[0]
        got = re.findall(r"^\| `([a-z_0-9]+)` \| `([^`]+)` \| (.*) \|$", sec, re.M)
        want = [c for c in S.PARTITIONS + cols if not (table == "records" and c in X.COLUMNS)]
        assert got == want, table
    assert f"version **{S.VERSION}**" in doc


def test_list_over_a_dataset_is_short_like_the_local_list_and_verbose_is_every_detail(tmp_path):
    """`list --dataset` prints what `list` prints (issue 27: it printed every detail): each row is
    the session's line, naming its machine, and its first prompt, a child session folded into its
    parent's line; -v adds the last prompt, last reply, notes and child rows; on a real pseudo-
    terminal the 10 newest, then how many more; -n N the first N."""
    import re

    from tests.terminal import CLI, run_on_terminal

    ds = tmp_path / "ds"
    R.sync(str(ds), _sel(HOME), Machine("id-a", "a", "a"))
    strip = lambda text: [ln.replace(", on a]", "]") for ln in text.rstrip("\n").split("\n")][:-2]  # noqa: E731
    for extra in ((), ("-v",)):
        p, _ = _cli("list", "--dataset", str(ds), *extra)
        q, _ = _cli("list", "--home", str(HOME), *extra)
        got, want = strip(p.stdout), strip(q.stdout)
        assert got == want, extra  # the same lines but the totals and the coverage line
        assert sum(", on a] " in ln for ln in p.stdout.split("\n")) == (68 if extra else 60)
        assert (sum(ln.startswith("  last:  ") for ln in got) > 0) == bool(extra)
        assert len(got) == (328 if extra else 144)  # was 328 (every detail) either way
    shown = run_on_terminal(CLI + ["list", "--dataset", str(ds)], cols=120)
    assert shown.code == 0
    lines = re.sub(r"\x1b\[[0-9;]*m", "", shown.text).split("\n")
    assert sum(bool(re.match(r"[0-9a-z-]{20,}  \d{4}-", ln)) for ln in lines) == 10
    assert any(ln.startswith("50 more sessions (-n N or --all to list them") for ln in lines)
    p, rows = _cli("list", "--dataset", str(ds), "-n", "3", "--format", "json")
    top = [r for r in rows if r["kind"] == "session" and r["parent_session_id"] is None]
    assert len(top) == 3 and rows[-1]["sessions"] == 60 and rows[0]["limit"] == 3
    both, _ = _cli("list", "--dataset", str(ds), "--all", "-n", "3", check=2)
    assert "give one of them" in both.stderr


def test_no_index_neither_uses_nor_writes_the_index(tmp_path):
    """`sync --no-index` wrote Claude Code's usage cache (Scope.one left the index decision behind)
    and its fork families (each session's lineage asked again of its provider, which knows no
    index decision) into the index directory. Now nothing is written there, and every row equals
    the run with the index."""
    def sync(name: str, *flags: str) -> Path:
        env = dict(os.environ, SESSIONSIFT_INDEX_DIR=str(tmp_path / f"idx-{name}"))
        p = subprocess.run([sys.executable, "-m", "sessionsift", "sync", "--to", str(tmp_path / name), "--home",
                            str(HOME), "--machine", "m", *flags], capture_output=True, text=True, env=env)
        assert p.returncode == 0, p.stderr[-2000:]
        return tmp_path / f"idx-{name}"

    assert sorted(p.name for p in sync("off", "--no-index").rglob("*") if p.is_file()) == []
    assert any(p.is_file() for p in sync("on").rglob("*"))  # the same run with the index writes it

    def table(name: str, t: str) -> list:
        con = Dataset.open(str(tmp_path / name)).connect()
        cols = [c for c in con.sql(f"SELECT * FROM {t} LIMIT 0").columns if c not in ("synced_at", "run", "batch")]
        return sorted(map(str, con.sql(f"SELECT {', '.join(cols)} FROM {t}").fetchall()))

    for t in ("sessions", "usage", "records"):
        assert table("off", t) == table("on", t), t
