"""The app in a real browser: Debian's chromium, Playwright, `streamlit run` (marker e2e)."""
