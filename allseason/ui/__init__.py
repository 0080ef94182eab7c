"""Streamlit glue for the app: the only code outside ``app_pages/`` and ``app.py`` that imports
streamlit. One module per page, plus the pieces every page shares.

Shared:

- :mod:`.frame`: the page frame (config, header, sidebar note), the error boundary, the
  link's messages, the navigation (``PAGES``), and the small widgets of every page (a chart
  with its caption and downloads, a CSV button, the scenario's line and timeline);
- :mod:`.keys`: every ``st.session_state`` key in one table (its type, the page that owns it,
  its kind); a page's ``reset()`` drops its form and view keys;
- :mod:`.state`: the session's scenario and race settings (a :class:`.state.RaceChoice`), and
  the link (query parameters);
- :mod:`.runcache`: the bounded cache of finished races (by a short key, the one a fragment
  gets; ``get_or_recompute``), the server's warm-up, streamed runs;
- :mod:`.settings`: the server's settings from the environment (``ALLSEASON_LOW_MEMORY``).

The pages (``app_pages/N_*.py`` reads like a description of its screen and calls its module
and the frame):

- Home: :mod:`.home`; Pattern builder: :mod:`.pattern`;
- Race: :mod:`.race` (the results) and :mod:`.race_settings` (the settings, a race JSON);
- Inside All-Season: :mod:`.inside` and :mod:`.weighting` (carried weights vs the printed
  rule);
- Sweep results: :mod:`.sweeps`; Paper tables: :mod:`.paper` and :mod:`.paper_runs` (the tabs
  that run on real data);
- Guided tour: :mod:`.tour` and :mod:`.tour_steps`; Your data: :mod:`.yourdata`;
- Live: :mod:`.live`, :mod:`.live_look` (its style sheets) and :mod:`.live_analyse` (the show
  as a race), :mod:`.keygate` (key presses paced in the browser);
- When does it help?: :mod:`.when`.

The rule for reaching the engine: **through** ``allseason.api`` **only**, and the figures
through ``allseason.viz``. The one exception is the page of a subpackage that has a public
face of its own, which reads that subpackage: :mod:`.paper` and :mod:`.paper_runs` read
``allseason.paper`` (the reproduction's modules), :mod:`.sweeps` reads ``allseason.sweeps``
(its package), :mod:`.yourdata` reads ``allseason.logs``, :mod:`.when` reads
``allseason.worldmap``. What the glue needs of the engine
beyond the facade's first names is in api.py's commented block "for the app's pages";
tests/house/test_architecture.py checks the rule, imports inside functions included.

Validation is the engine's, never the glue's: ``api.Scenario``, ``api.PolicySpec``,
``api.parse_scenario(..., limits=api.APP_LIMITS)`` and ``api.Race.checked``, with the app's
limits declared beside the engine's in :mod:`allseason.limits`. The forms and the link only
collect values and show the validator's message under the input it names.
"""
