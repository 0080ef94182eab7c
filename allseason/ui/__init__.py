"""Streamlit glue for the app: the only code outside ``app_pages/`` and ``app.py`` that imports
streamlit.

- :mod:`.state`: the canonical scenario and race settings in ``st.session_state``, the URL
  encoding of the scenario, the app's limits;
- :mod:`.forms`: the Pattern builder and race settings inputs, validated through
  ``allseason.api`` with errors shown under the input that caused them;
- :mod:`.runs`: the bounded cache of finished races, streamed runs, small cached extras;
- :mod:`.views`: page frame, error boundary, charts with caption and HTML download, result
  panels;
- :mod:`.yourdata`: the Your data page (a user's log or reward table);
- :mod:`.live`: the Live page (a show stepped by hand in a ``run_every`` fragment);
- :mod:`.settings`: the server's settings from the environment (``ALLSEASON_LOW_MEMORY``).
"""

from . import forms, runs, state, views, yourdata

__all__ = ["forms", "runs", "state", "views", "yourdata"]
