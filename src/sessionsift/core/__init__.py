"""The foundation questions: list, show, stats."""
