"""Exports: a session's records taken elsewhere (chunks, Markdown/HTML, Parquet), each recorded in
the ledger (``sessionsift.ledger``) with the reading's fingerprint (docs/export.md)."""
