"""All-Season explorer: ``streamlit run app.py``.

The entry point only routes: ``st.navigation`` over the scripts in ``app_pages/`` (their
titles, icons and URL paths are in :data:`allseason.ui.frame.PAGES`); Home is
``app_pages/0_Home.py``. The folder is not called ``pages/``: a folder of that name next to
the entry point puts a fresh server in Streamlit's legacy multipage mode until ``/`` is first
opened, and a first visitor who arrives by a deep link (``/Race?seed=3``) gets a sidebar that
the legacy mode made (tests/browser/test_pages.py checks that case on a fresh server).

With ``ALLSEASON_DEPLOYED_DIR`` set, the first visit (to any page) also starts reading that
folder's log in the background (:func:`allseason.ui.deployed.read_ahead`).
"""

from allseason.ui import deployed, frame

deployed.read_ahead()
frame.navigation().run()
