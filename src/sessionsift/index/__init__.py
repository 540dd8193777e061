"""The persistent, incremental index (a transcript already read is not read again): docs/index.md."""
