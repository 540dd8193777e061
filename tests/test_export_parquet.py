"""`export parquet` of the committed real-client corpora of every provider, queried with DuckDB and
checked against `stats --shared` on the same sessions (two independent consumers of the readers:
the census counts in Python, the dataset is counted in SQL)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

duckdb = pytest.importorskip("duckdb", reason="duckdb is in the test extra: pip install -e '.[test]'")

REPO = Path(__file__).resolve().parent.parent
HOME = REPO / "examples" / "home"

COUNTS_SQL = """
SELECT provider, session_id,
       count(*) FILTER (WHERE copy_of IS NULL)                       AS records,
       count(*) FILTER (WHERE copy_of IS NOT NULL)                   AS copies,
       count(*) FILTER (WHERE copy_of IS NULL AND kind = 'prompt')   AS prompts,
       count(*) FILTER (WHERE copy_of IS NULL AND kind = 'tool_call') AS tool_calls
FROM read_parquet('{ds}/**/*.parquet', hive_partitioning = true)
GROUP BY provider, session_id
"""

TOKENS_SQL = """
WITH per_unit AS (
  SELECT provider, session_id, coalesce(model, '(unknown model)') AS model,
         coalesce(tokens_dedup_key, locator) AS unit,
         max(tokens_input) AS input, max(tokens_output) AS output
  FROM read_parquet('{ds}/**/*.parquet', hive_partitioning = true)
  WHERE copy_of IS NULL AND tokens_cumulative = false
  GROUP BY ALL)
SELECT provider, session_id, model, sum(input) AS input, sum(output) AS output FROM per_unit GROUP BY ALL
"""


def _run(*args, env):
    p = subprocess.run([sys.executable, "-m", "sessionsift", *args], capture_output=True, text=True, env=env)
    return p, [json.loads(x) for x in p.stdout.splitlines() if x.startswith("{")]


@pytest.fixture()
def env(tmp_path):
    return {**os.environ, "XDG_DATA_HOME": str(tmp_path / "xdg-data")}


def _stats(env, *home_args):
    p, rows = _run("stats", *home_args, "--shared", "--format", "json", env=env)
    assert p.returncode == 0, p.stderr
    return {(r["provider"], r["session_id"]): r for r in rows if r["kind"] == "session"}


def test_duckdb_counts_equal_stats(tmp_path, env):
    out = tmp_path / "ds"
    p, rows = _run("export", "parquet", "--home", str(HOME), "--out", str(out), "--format", "json", env=env)
    assert p.returncode == 0, p.stderr
    ds = out / "records"
    assert rows[-1]["written"] == 68 and rows[-1]["dataset"] == str(ds.resolve())
    st = _stats(env, "--home", str(HOME))
    assert len(st) == 68 and {k[0] for k in st} == {"claude-code", "codex", "gemini-cli", "opencode", "crush", "pi", "qwen-code", "copilot-cli",
                                                    "kilo-code"}
    got = {(r[0], r[1]): r[2:] for r in duckdb.sql(COUNTS_SQL.format(ds=ds)).fetchall()}
    for key, s in st.items():
        want = (s["records"], s["copies"], s["prompts"], sum(s["tool_calls"].values()))
        if s["records"] == 0 and s["copies"] == 0:
            assert key not in got  # a session with no record writes no row
            continue
        assert got[key] == want, key
    assert sum(v[0] for v in got.values()) == sum(s["records"] for s in st.values()) > 500
    # tokens: one usage object per dedup key (max per key), summed per model, as stats does
    tok = duckdb.sql(TOKENS_SQL.format(ds=ds)).fetchall()
    checked = 0
    for prov, sid, model, inp, outp in tok:
        s = st[(prov, sid)]
        if s.get("tokens_by_model") and model in s["tokens_by_model"] and inp is not None:
            assert (inp, outp) == (s["tokens_by_model"][model].get("input"), s["tokens_by_model"][model].get("output"))
            checked += 1
    assert checked >= 25


def test_partitions_schema_and_sizes(tmp_path, env):
    import pyarrow.parquet as pq

    out = tmp_path / "ds"
    p, rows = _run("export", "parquet", "--home", str(HOME), "--out", str(out), env=env)
    assert p.returncode == 0, p.stderr
    files = sorted((out / "records").rglob("*.parquet"))
    assert files and all(f.parent.parent.name.startswith("provider=") and f.parent.name.startswith("date=")
                         for f in files)
    for f in files:
        meta = pq.read_schema(f).metadata
        assert meta[b"sessionsift.schema"] == b"sessionsift.records" and meta[b"sessionsift.schema_version"] == b"1"
    ds = out / "records"
    bad = duckdb.sql(f"""SELECT count(*) FROM read_parquet('{ds}/**/*.parquet', hive_partitioning = true)
        WHERE date <> coalesce(strftime(instant AT TIME ZONE 'UTC', '%Y-%m-%d'), 'unknown')""").fetchall()[0][0]
    assert bad == 0
    # sizes are the bytes of what is stored: the text's UTF-8 bytes, a line's bytes on disk
    row = duckdb.sql(f"""SELECT path, line, byte_offset, record_bytes, text, text_bytes FROM
        read_parquet('{ds}/**/*.parquet', hive_partitioning = true)
        WHERE provider = 'claude-code' AND kind = 'prompt' LIMIT 1""").fetchall()[0]
    path, line, off, n, text, tb = row
    data = Path(path).read_bytes()
    assert data.splitlines()[line - 1] == data[off:off + n] and tb == len(text.encode())


def test_a_new_version_replaces_the_old_in_the_dataset(tmp_path, env):
    src = next((HOME / ".claude" / "projects").glob("-tmp-ssift-rc-todos-work"))
    home = tmp_path / "claude"
    shutil.copytree(src, home / "projects" / src.name)
    tr = next((home / "projects" / src.name).glob("*.jsonl"))
    out = tmp_path / "ds"
    args = ("export", "parquet", "--claude-home", str(home), "--out", str(out), "--format", "json")
    p, rows = _run(*args, env=env)
    first = next(r for r in rows if r["kind"] == "export")
    assert first["status"] == "written" and first["version"] == 1
    p, rows = _run(*args, env=env)
    assert next(r for r in rows if r["kind"] == "export")["status"] == "current"
    with open(tr, "ab") as f:  # the client appended: its last line once more (a replayed record)
        f.write(tr.read_bytes().splitlines(keepends=True)[-1])
    p, rows = _run(*args, env=env)
    new = next(r for r in rows if r["kind"] == "export")
    assert new["status"] == "written" and new["version"] == 2 and new["superseded"]
    assert not Path(first["path"]).exists() and Path(new["superseded"][0]).is_file()
    ds = out / "records"
    n = duckdb.sql(f"SELECT count(*) FROM read_parquet('{ds}/**/*.parquet', hive_partitioning = true)").fetchall()[0][0]
    st = _stats(env, "--claude-home", str(home))
    s = next(iter(st.values()))
    assert n == s["records"] + s["copies"] == new["rows"]


def test_a_current_session_whose_ledger_lacks_its_row_count_says_unknown_not_zero(tmp_path, env):
    """The ledger entry of an earlier export without `session_rows` (hand-edited here: an entry
    written before the field existed, or cut short): the session's rows are unknown, never 0,
    and `rows_written` counts only what this run wrote."""
    src = next((HOME / ".claude" / "projects").glob("-tmp-ssift-rc-todos-work"))
    home = tmp_path / "claude"
    shutil.copytree(src, home / "projects" / src.name)
    out = tmp_path / "ds"
    args = ("export", "parquet", "--claude-home", str(home), "--out", str(out), "--format", "json")
    p, rows = _run(*args, env=env)
    first = next(r for r in rows if r["kind"] == "export")
    assert p.returncode == 0 and first["status"] == "written" and first["rows"] > 0
    assert rows[-1]["rows_written"] == first["rows"]
    p, rows = _run(*args, env=env)
    again = next(r for r in rows if r["kind"] == "export")
    assert again["status"] == "current" and again["rows"] == first["rows"]
    assert rows[-1]["rows_written"] == 0 and rows[-1]["rows_current"] == first["rows"]
    led = Path(first["ledger"])
    kept = []
    for ln in led.read_text().splitlines():
        e = json.loads(ln)
        if e.get("format") == "parquet":
            e.get("extra", {}).pop("session_rows", None)
        kept.append(json.dumps(e))
    led.write_text("\n".join(kept) + "\n")
    p, rows = _run(*args, env=env)
    again = next(r for r in rows if r["kind"] == "export")
    assert p.returncode == 0 and again["status"] == "current"
    assert again["rows"] is None
    assert rows[-1]["rows_written"] == 0 and rows[-1]["rows_current"] is None
