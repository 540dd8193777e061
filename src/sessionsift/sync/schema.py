"""The dataset's tables, their columns and the schema version (docs/dataset.md is checked against
these words by tests/test_sync.py).

Layout: ``DATASET/<table>/machine=<m>/provider=<p>/date=<YYYY-MM-DD>/b<batch>-<run>-<n>.parquet``
(hive partitioning; ``date`` is the UTC day of a row's instant, ``unknown`` without one) and one
manifest per machine, ``DATASET/_manifests/<m>.json``. Every row carries the ``batch`` (the
machine's sync run number) that wrote it.
"""

from __future__ import annotations

from ..export import parquet as X

DATASET = "sessionsift.dataset"
VERSION = 1
MANIFEST = "sessionsift.dataset.manifest"
MANIFESTS_DIR = "_manifests"

PARTITIONS: list[tuple[str, str, str]] = [
    ("machine", "string", "the machine that synced the row (`--machine NAME`, else its host name)"),
    ("provider", "string", "the agent's reader (claude-code, codex, gemini-cli, opencode, crush, ...)"),
    ("date", "string", "UTC day of the row's instant (YYYY-MM-DD), unknown when it has none"),
]
BATCH = ("batch", "int64", "the machine's sync run that wrote the row (a row is current while its batch is at "
                          "least its session's base_batch)")

RECORDS = [c for c in X.COLUMNS] + [
    ("seq", "int64", "0-based order of the record within its file's reading (ORDER BY path, seq: the reading order)"),
    ("truncated", "bool", "the client wrote that it cut this record's text (the cut part is on disk nowhere)"),
    ("rewound", "bool", "the client rewound its conversation past this record (Gemini CLI's /rewind)"),
    ("tool_input_json", "bool", "tool_input holds the call's input as JSON (false: a string input as written)"),
    BATCH]
"""`export parquet`'s `sessionsift.records` columns (the same row for the same record: export's
`row_of`), then what a search over the dataset needs besides, and the batch."""

TOOL_CALLS: list[tuple[str, str, str]] = [
    ("session_id", "string", "the session"),
    ("lane", "string", "main, or the subagent lane"),
    ("locator", "string", "the call's record (join records on machine, provider, session_id, locator)"),
    ("path", "string", "the file holding it"),
    ("line", "int64", "1-based physical line (null for a database row)"),
    ("instant", "timestamp[us, tz=UTC]", "when it was written"),
    ("turn", "int64", "turn number (Claude Code: the deep model's)"),
    ("call_id", "string", "pairs the call with its tool_result record (kind = 'tool_result', same call_id)"),
    ("tool_name", "string", "the tool"),
    ("tool_input", "string", "its input as JSON"),
    ("tool_input_bytes", "int64", "UTF-8 bytes of tool_input"),
    ("exit_code", "int64", "exit code recorded on the call itself (results carry theirs in records)"),
    ("is_error", "bool", "failure recorded on the call itself (null: unknown)"),
    ("model", "string", "the model that made the call"),
    ("copy_of", "string", "the call this record repeats (count once: WHERE copy_of IS NULL)"),
    ("file_changes", "int32", "file changes the call's record carries"),
    BATCH,
]

FILE_CHANGES: list[tuple[str, str, str]] = [
    ("session_id", "string", "the session"),
    ("lane", "string", "main, or the subagent lane"),
    ("locator", "string", "the record carrying the change"),
    ("path", "string", "the file holding the record"),
    ("line", "int64", "1-based physical line (null for a database row)"),
    ("instant", "timestamp[us, tz=UTC]", "when it was written"),
    ("turn", "int64", "turn number"),
    ("call_id", "string", "the tool call it belongs to"),
    ("tool_name", "string", "the tool"),
    ("change", "int32", "0-based index of the change within its record"),
    ("file", "string", "the file changed"),
    ("action", "string", "create, update, delete, move, unknown"),
    ("move_to", "string", "a move's destination"),
    ("new_content_bytes", "int64", "UTF-8 bytes of the whole new content the record holds (null: none)"),
    ("old_content_bytes", "int64", "UTF-8 bytes of the whole old content the record holds (null: none)"),
    ("diff_bytes", "int64", "UTF-8 bytes of the diff or patch the record holds (null: none)"),
    ("copy_of", "string", "the record this one repeats (count once: WHERE copy_of IS NULL)"),
    BATCH,
]

USAGE: list[tuple[str, str, str]] = [
    ("key", "string", "the response's dedup key (`usage`'s unit: a Claude Code message id across every "
                      "session and machine, another provider's response per session): merge rows per key"),
    ("ref_session_id", "string", "the synced session whose reading wrote the row (a child session's own id)"),
    ("session_id", "string", "the session the response is counted in (a child session's parent)"),
    ("lane", "string", "main, or the subagent lane / child session it was written in"),
    ("project", "string", "the session's project as `usage` attributes it"),
    ("model", "string", "model of the response"),
    ("ts", "double", "epoch seconds (UTC) of the response as `usage` reads it (null: no readable instant)"),
    ("instant", "timestamp[us, tz=UTC]", "ts as a timestamp"),
    ("input", "int64", "input tokens not read from cache (null: not recorded)"),
    ("output", "int64", "output tokens (reasoning included)"),
    ("cache_read", "int64", "cache reads"),
    ("cache_write", "int64", "cache writes (5-minute and 1-hour)"),
    ("cache_write_1h", "int64", "the 1-hour share of cache_write"),
    ("reasoning", "int64", "reasoning tokens (inside output)"),
    ("speed", "string", "Claude Code's recorded speed (priced: fast)"),
    ("geo", "string", "Claude Code's recorded inference_geo"),
    ("service_tier", "string", "the recorded service tier"),
    ("client_cost", "double", "the cost the client itself recorded for this response"),
    ("copies", "int64", "records this row stands for (1)"),
    ("path", "string", "the file it was read from"),
    ("session_order", "string", "sort key of the session as `usage` reads sessions (merge order)"),
    ("seq", "int64", "0-based order of the row within its file's reading"),
    BATCH,
]

SESSIONS: list[tuple[str, str, str]] = [
    ("session_id", "string", "the session"),
    ("parent_session_id", "string", "for a child session: its parent"),
    ("helper", "string", "a helper session's purpose (Crush's title generation), else null"),
    ("is_subagent", "bool", "a child session that is an agent"),
    ("project", "string", "the working directory it recorded"),
    ("title", "string", "its title, where recorded"),
    ("version", "string", "the client version that wrote it"),
    ("first_at", "string", "first instant (ISO-8601), as discovered"),
    ("last_at", "string", "last instant (ISO-8601), as discovered"),
    ("size_bytes", "int64", "bytes of its files (null: rows inside a shared database)"),
    ("paths", "list<string>", "the files holding its records"),
    ("synced_at", "timestamp[us, tz=UTC]", "when this version of the row was written"),
    ("base_batch", "int64", "rows of this session in every table are current from this batch on"),
    ("change_token", "string", "what `sync` compares to know the session changed (Provider.change_token)"),
    ("reader_version", "string", "sessionsift, reader rules and this schema that read it"),
    ("state", "string", "JSON: per table and file, rows synced and their digest (the prefix an append keeps)"),
    ("list_row", "string", "JSON: the facts `list` prints for it"),
    ("stats", "string", "JSON: `stats --shared`'s census of it (records, kinds, tools, tokens, omissions)"),
    ("usage_info", "string", "JSON: what `usage` knows of it besides its responses (lanes, the client's own "
                             "recorded cost, assistant messages without usage, reading tallies, notes)"),
    ("problems", "string", "JSON: what could not be read ([{path, why}])"),
    BATCH,
]

TABLES: dict[str, list[tuple[str, str, str]]] = {
    "sessions": SESSIONS, "records": RECORDS, "usage": USAGE, "tool_calls": TOOL_CALLS,
    "file_changes": FILE_CHANGES,
}


def schema(table: str):
    return X.arrow_schema(TABLES[table], f"{DATASET}.{table}", VERSION)
