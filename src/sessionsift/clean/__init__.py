"""Safe clean-up across every agent (docs/clean.md): archive and delete only what every gate proves
safe, and lose nothing.

Layers (each imports only those below it; nothing imports cli/):

- ``retention``: Claude Code's own deletion (``cleanupPeriodDays``, merged as the client merges it);
- ``activity``: the activity gate (processes, registry rows, thread locks; per provider);
- ``scan``: every session with age, size and the three gates -- the only layer that reads content;
- ``archive``: content-addressed zstd objects and the HMAC-chained manifest (bytes only);
- ``capture``: the deleting component (hashes and compresses bytes, never parses them);
- ``rows``: database sessions' rows into the archive (never deletes);
- ``apply``: which sessions capture/protect act on, and the run;
- ``restore``: restore, verify, list.

What we kept is recorded in ``sessionsift.ledger`` (exports too).
"""
