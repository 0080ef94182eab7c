"""The app's pages under streamlit.testing.v1.AppTest (no browser, no server)."""
