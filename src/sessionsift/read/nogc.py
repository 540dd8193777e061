"""`no_gc`: the cyclic garbage collector kept out of a hot loop -- its own module, so a command
that only wants it (search's run) imports neither pickle nor threading (read/fanout.py's forks)."""

from __future__ import annotations


class no_gc:
    """The cyclic garbage collector kept out of a hot loop (records are acyclic; a reading creates
    millions of them and a collection pass walks them all): disabled inside, restored after."""

    def __enter__(self):
        import gc

        self._was = gc.isenabled()
        gc.disable()
        return self

    def __exit__(self, *exc) -> None:
        if self._was:
            import gc

            gc.enable()
