"""The cold paths of `search` (issue 16) give the scan's answers: the file-level needle check
(search/needles.py `file_holds`: one reused page-aligned buffer, read in pieces that overlap by
a needle's length; stringzilla for one case-sensitive needle, RE2 otherwise) on real transcripts,
including a needle that straddles two pieces of a file larger than the buffer."""

from __future__ import annotations

from pathlib import Path

import pytest

from sessionsift.read import needles as PF

ROOT = Path(__file__).resolve().parent.parent
REAL = sorted((ROOT / "examples" / "claude-home" / "projects").rglob("*.jsonl"))


@pytest.fixture(scope="module")
def big(tmp_path_factory) -> Path:
    """Real transcripts concatenated past twice the buffer size."""
    out = tmp_path_factory.mktemp("big") / "big.jsonl"
    data = b"".join(p.read_bytes() for p in REAL)
    with open(out, "wb") as f:
        n = 0
        while n < 2 * PF.BUF_BYTES + 12345:
            f.write(data)
            n += len(data)
    return out


def test_every_real_token_is_found_and_absent_ones_are_not():
    for p in REAL:
        data = p.read_bytes()
        for at in (0, len(data) // 3, len(data) - 12):
            tok = data[at:at + 9]
            if not tok.isascii() or b"\n" in tok:
                continue
            held, size, _ = PF.file_holds(p, [tok.decode()], False)
            assert held and size == len(data), (p, tok)
            held, _, _ = PF.file_holds(p, [tok.decode().upper(), "zz\x01absent"], True)
            assert held == (tok.lower() in data.lower())
        held, size, lines = PF.file_holds(p, ["zqx-absent-token-1"], False, count_lines=True)
        assert not held and size == len(data)
        assert lines == data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)


@pytest.mark.parametrize("cut", [1, 2, 5, 8])
def test_a_needle_across_two_pieces(big, cut):
    data = big.read_bytes()
    for boundary in (PF.BUF_BYTES, 2 * PF.BUF_BYTES - (PF.BUF_BYTES and 7)):
        tok = data[boundary - cut: boundary - cut + 10]
        if not tok.isascii() or b"\n" in tok:
            continue
        assert data.find(tok) >= 0
        for ci in (False, True):
            needle = tok.decode().lower() if ci else tok.decode()
            held, size, _ = PF.file_holds(big, [needle], ci)
            assert held and size == len(data), (boundary, cut, tok, ci)
    held, _, lines = PF.file_holds(big, ["zqx-absent-token-2"], False, count_lines=True)
    assert not held and lines == data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
