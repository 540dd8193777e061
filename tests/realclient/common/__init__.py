"""What every real-client harness (Claude Code, Codex CLI, Gemini CLI, opencode; ccusage) shares:

* :mod:`.host`: the one ``PrerequisiteMissing``, the host checks (root, tools, a working ``unshare -n``),
  and skip-or-fail-under-CI for fixtures and tests;
* :mod:`.npm`: the cache root outside the clone (computed from the environment at import) and
  ``npm install`` into it under ``flock``;
* :mod:`.netns`: the outer launch under ``unshare -n``, loopback up, ``env -i``, ending by pid what a
  client left running in its scenario dir, and ending a started process group by its id;
* :mod:`.truth`: small ground-truth helpers (``{W}`` substitution, sha256, route counts);
* :mod:`.sse`: the scripted mocks' HTTP plumbing (a ``ThreadingHTTPServer`` on 127.0.0.1 in a daemon
  thread, the JSON-lines request log, JSON replies, SSE headers); routing and frames stay per mock.
"""
