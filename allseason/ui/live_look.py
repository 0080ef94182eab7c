"""The Live page's look: its style sheet, and presenter mode's screens and style sheet (a
projector of 1280x720 or 1920x1080)."""

CSS = """<style>
.st-key-live_buttons button { min-height: 3.0rem; padding: 0 1.1rem; }
.st-key-live_buttons [class*="st-key-live_season_"] button { min-width: 3.4rem; }
.st-key-live_buttons [class*="st-key-live_season_"] kbd { display: none; }
.live-season-word { font-size: 1.2rem; font-weight: 600; margin-right: 0.2rem; }
.st-key-live_buttons button p { font-size: 1.2rem; font-weight: 600; white-space: nowrap; }
.live-status { font-size: 1.35rem; line-height: 1.5; margin: 0.1rem 0 0.3rem 0; }
.live-status b { font-weight: 700; }
.live-ticker { list-style: none; padding: 0; margin: 0; font-size: 1.15rem !important;
  line-height: 1.45; }
.live-ticker li { margin: 0 0 0.25rem 0; font-size: inherit !important; padding: 0; }
.live-ticker li:first-child { font-weight: 700; }
.live-ticker .when { opacity: 0.65; font-variant-numeric: tabular-nums; font-size: 0.85em; }
.live-status .num { font-variant-numeric: tabular-nums; }
</style>"""

# presenter mode, for a projector of 1280×720 or 1920×1080 (the presenter says which: the
# server does not know the screen, and neither CSS zoom nor a CSS transform scales a Plotly
# figure cleanly -- Plotly measures its box scaled and draws it cut): figure heights (px)
# and the scale of their text and lines, and the size of the page's own text
SCREENS = {
    "1280×720": dict(scale=1.3, rate=340, ribbon=200, since=420, text=1.0),
    "1920×1080": dict(scale=1.75, rate=520, ribbon=300, since=640, text=1.45),
}
PRESENTER_CSS = """<style>
[data-testid="stSidebar"], [data-testid="stSidebarCollapsedControl"],
[data-testid="stHeader"], [data-testid="stToolbar"], [data-testid="stDecoration"] {
  display: none !important; }
[data-testid="stMainBlockContainer"] { padding: 0.6rem 2rem 0.3rem 2rem !important;
  max-width: 100% !important; }
.st-key-live_buttons button { min-height: calc(3.2rem * K); }
.st-key-live_buttons button p, .live-season-word { font-size: calc(1.4rem * K); }
.st-key-live_buttons kbd { font-size: calc(0.9rem * K); }
.live-status { font-size: calc(1.75rem * K); }
.live-ticker { font-size: calc(1.3rem * K) !important; }
</style>"""
