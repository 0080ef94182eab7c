"""``python -m allseason serve``: a deployed agent over HTTP (docs/serve.md).

:mod:`.checks` (every request body, one line each; the rate cap), :mod:`.journal` (the
append-only journal, the atomic pointer), :mod:`.store` (the writer that learns, the readers
that answer from the latest snapshot), :mod:`.http` (the Starlette app; Starlette and uvicorn
are an optional extra, imported only there).
"""
