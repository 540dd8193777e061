"""Reading rules for damaged bytes (seed 002, REC-040).

The client cannot be made to write NUL runs, torn tails or invalid UTF-8 on purpose, so these
lines are HAND-MADE crash artefacts; the records around them are shaped like real ones.
"""

from __future__ import annotations

import orjson
import pytest

from sessionsift.errors import MalformedLine
from sessionsift.read.lines import ReadStats, iter_lines, read_records

REC = lambda i: orjson.dumps({"type": "user", "uuid": f"u{i}", "message": {"role": "user", "content": f"hello {i}"}})


def write(tmp_path, data: bytes):
    p = tmp_path / "t.jsonl"
    p.write_bytes(data)
    return p


def test_nul_only_line_and_nul_prefix_record(tmp_path):
    data = REC(1) + b"\n" + b"\x00" * 500 + b"\n" + b"\x00" * 384 + REC(2) + b"\n" + REC(3) + b"\n"
    st = ReadStats()
    recs = list(read_records(write(tmp_path, data), st))
    assert [o["uuid"] for _, o in recs] == ["u1", "u2", "u3"]
    assert [l.no for l, _ in recs] == [1, 3, 4]
    assert st.zero_filled_lines == 2
    assert st.malformed_lines == []
    assert all(b"\x00" not in orjson.dumps(o) for _, o in recs)


def test_nul_run_at_end_of_file(tmp_path):
    data = REC(1) + b"\n" + b"\x00" * 3861
    st = ReadStats()
    recs = list(read_records(write(tmp_path, data), st))
    assert [o["uuid"] for _, o in recs] == ["u1"]
    # an unterminated NUL-only tail is never-written bytes: counted as a zero-filled line
    assert st.malformed_lines == []
    assert st.zero_filled_lines == 1 and st.torn_tail_bytes == 0


def test_torn_final_line_is_held_not_malformed(tmp_path):
    full = REC(2)
    data = REC(1) + b"\n" + full[: len(full) // 2]
    st = ReadStats()
    recs = list(read_records(write(tmp_path, data), st))
    assert [o["uuid"] for _, o in recs] == ["u1"]
    assert st.malformed_lines == []
    assert st.torn_tail_bytes == len(full) // 2


def test_complete_final_line_without_newline_is_read(tmp_path):
    data = REC(1) + b"\n" + REC(2)
    st = ReadStats()
    assert [o["uuid"] for _, o in read_records(write(tmp_path, data), st)] == ["u1", "u2"]
    assert st.torn_tail_bytes == 0


def test_invalid_utf8_is_tolerated_and_counted(tmp_path):
    bad = b'{"type":"user","uuid":"u9","message":{"role":"user","content":"caf\xe9 \xff"}}'
    st = ReadStats()
    recs = list(read_records(write(tmp_path, REC(1) + b"\n" + bad + b"\n"), st))
    assert [o["uuid"] for _, o in recs] == ["u1", "u9"]
    assert st.invalid_utf8_lines == 1
    assert "\ufffd" in recs[1][1]["message"]["content"]


def test_malformed_counted_and_strict_fails_naming_line(tmp_path):
    p = write(tmp_path, REC(1) + b"\n{not json\n" + REC(3) + b"\n")
    st = ReadStats()
    assert [o["uuid"] for _, o in read_records(p, st)] == ["u1", "u3"]
    assert st.malformed_lines == [2]
    with pytest.raises(MalformedLine) as ei:
        list(read_records(p, ReadStats(), strict=True))
    assert ei.value.line == 2 and str(p) in str(ei.value)


def test_line_numbers_count_blank_lines_and_offsets(tmp_path):
    data = REC(1) + b"\n\n" + REC(2) + b"\n"
    p = write(tmp_path, data)
    lines = list(iter_lines(p))
    assert [l.no for l in lines] == [1, 2, 3]
    assert data[lines[2].offset : lines[2].offset + len(lines[2].raw)] == REC(2)


def test_empty_file(tmp_path):
    st = ReadStats()
    assert list(read_records(write(tmp_path, b""), st)) == []
    assert st.lines == 0 and st.files == 1


def test_long_line(tmp_path):
    big = orjson.dumps({"type": "attachment", "uuid": "big", "attachment": {"type": "x", "content": "a" * 20_000_000}})
    st = ReadStats()
    recs = list(read_records(write(tmp_path, big + b"\n" + REC(2) + b"\n"), st))
    assert [o["uuid"] for _, o in recs] == ["big", "u2"]
