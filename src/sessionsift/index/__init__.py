"""The persistent, incremental index (issue 16): docs/index.md."""
