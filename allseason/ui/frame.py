"""The frame every page shares: the page's config and header, the error boundary, the link's
messages, the navigation (:data:`PAGES`), and the small widgets of every page (a chart with
its alt text, caption and HTML download, a CSV button, the scenario's line and its season
timeline). Figures come from :mod:`allseason.viz`; nothing here computes.
"""

from __future__ import annotations

import logging
import re
import threading
from contextlib import contextmanager

import streamlit as st

from allseason import api
from allseason.viz import export
from allseason.viz.text import md

from . import runcache, state

log = logging.getLogger("allseason.ui")

UPLOAD_MB_TEXT = f"{api.MAX_INPUT_BYTES / 1e6:g} MB"  # a scenario or race file: 1 MB

PLOTLY_CONFIG = {
    "displaylogo": False,
    "modeBarButtonsToRemove": ["lasso2d", "select2d"],
    "toImageButtonOptions": {"format": "png", "scale": 2},
}


def plotly_config(name: str) -> dict:
    """:data:`PLOTLY_CONFIG` with the PNG download named ``name``."""
    png = {**PLOTLY_CONFIG["toImageButtonOptions"], "filename": name}
    return {**PLOTLY_CONFIG, "toImageButtonOptions": png}


# (script, title, icon, URL path): the app's pages in sidebar order; Home is the default page
# (URL "/"), the others keep the URL paths they had when they lived in pages/: old links work.
# The one place of a page's title and icon: frame.page reads them from here.
PAGES = (
    ("app_pages/0_Home.py", "Home", ":material/eco:", ""),
    (
        "app_pages/1_Pattern_builder.py",
        "Pattern builder",
        ":material/calendar_month:",
        "Pattern_builder",
    ),
    ("app_pages/2_Race.py", "Race", ":material/sports_score:", "Race"),
    (
        "app_pages/3_Inside_All-Season.py",
        "Inside All-Season",
        ":material/troubleshoot:",
        "Inside_All-Season",
    ),
    ("app_pages/4_Sweep_results.py", "Sweep results", ":material/tune:", "Sweep_results"),
    ("app_pages/5_Paper_tables.py", "Paper tables", ":material/table_chart:", "Paper_tables"),
    ("app_pages/6_Guided_tour.py", "Guided tour", ":material/slideshow:", "Guided_tour"),
    ("app_pages/7_Your_data.py", "Your data", ":material/upload_file:", "Your_data"),
    ("app_pages/8_Live.py", "Live", ":material/live_tv:", "Live"),
    ("app_pages/9_When_does_it_help.py", "When does it help?", ":material/map:", "When"),
    (
        "app_pages/10_Your_deployed_bandit.py",
        "Your deployed bandit",
        ":material/monitor_heart:",
        "Deployed",
    ),
)


_RUNNING = threading.local()  # the page st.navigation runs in this script thread now


def navigation():
    """The app's pages as ``st.navigation`` (the sidebar's links); ``.run()`` runs the one
    the URL asks for (and :func:`page` reads its title and icon)."""
    chosen = st.navigation(
        [
            st.Page(path, title=title, icon=icon, url_path=url or None, default=not url)
            for path, title, icon, url in PAGES
        ]
    )
    _RUNNING.page = chosen
    return chosen


def current_page() -> tuple[str, str]:
    """(title, icon) of the page running now, as :data:`PAGES` declares them."""
    chosen = getattr(_RUNNING, "page", None)
    if chosen is None:  # a page script run on its own, without app.py's navigation
        return "All-Season", PAGES[0][2]
    return chosen.title, chosen.icon


def page_link(script: str, label: str) -> None:
    """A link to the page ``script`` (an ``app_pages/`` path of :data:`PAGES`), with that
    page's icon."""
    icon = next(icon for path, _, icon, _ in PAGES if path == script)
    st.page_link(script, label=label, icon=icon)


# --- frame ----------------------------------------------------------------------------------
def page(purpose: str, *, heading: str | None = None, header: bool = True) -> None:
    """Page config, title and one-line purpose; the title and icon are the page's in
    :data:`PAGES` (``heading``: a title of its own instead, in the header and the browser's
    tab). ``header=False``: the page draws them itself, e.g. in a fragment. The sidebar note
    on downloads."""
    title, icon = current_page()
    title = heading or title
    st.set_page_config(page_title=f"{title} · All-Season", page_icon=icon, layout="wide")
    runcache.warm_up()  # once per process, in the background: the first visitor's race is warm
    if header:
        st.title(title)
        st.markdown(purpose)
    with st.sidebar:
        st.caption(
            "**Downloads.** Every figure: the **HTML** button under it (interactive, "
            "opens offline); for a **PNG**, the camera icon in the toolbar that appears "
            "at the figure's top right. Every run: **CSV** buttons under the results."
        )


@contextmanager
def guard(what: str = "this part of the page"):
    """Catch errors at the page boundary: a message, never a traceback."""
    try:
        yield
    except api.SpecError as e:
        st.error(md(state.explain(e)), icon=":material/error:")
    except Exception as e:
        log.exception("error in %s", what)
        st.error(
            md(
                f"Something went wrong in {what}: {type(e).__name__}: {e}. Your settings "
                f"are kept; change them or try again."
            ),
            icon=":material/error:",
        )


def url_errors() -> None:
    """Messages about the link this session was opened with, if any."""
    for message in state.url_errors():
        st.error(md(message), icon=":material/link_off:")


def scenario_line(sc: api.Scenario) -> str:
    n_states = max(s for s, _ in sc.segments) + 1
    batch = state.encode_batch(sc.batch_size).replace("_", ", ")
    return (
        f"**Scenario**: {sc.preset}, {sc.horizon:,} steps, {n_states} states, "
        f"{len(sc.segments) - 1} change points · d = {sc.d}, K = {sc.n_arms} arms, "
        f"σ² = {sc.sigma2:g}, batch {batch}, seed {sc.seed}"
    )


def alt_text(fig, caption: str = "") -> str:
    """A chart's text alternative for screen readers: its title, subtitle and caption."""
    title = fig.layout.title
    parts = [
        title.text if title and title.text else "",
        title.subtitle.text if title and title.subtitle and title.subtitle.text else "",
        caption,
    ]
    text = ". ".join(p.strip().rstrip(".") for p in parts if p and p.strip())
    return re.sub(r"<[^>]+>|\\(?=\S)", "", text)[:1000] or "chart"  # no HTML, no \* escapes


def chart(
    fig, caption: str, name: str, key: str, *, container=None, legend: str = "", download=None
) -> None:
    """A Plotly figure with its alt text, its one-line caption and an HTML download.
    ``legend``: an HTML key drawn under the figure (a figure shown without its legend);
    ``download``: the figure the HTML download holds, made on click (default ``fig``)."""
    target = container if container is not None else st.container()
    with target:
        st.plotly_chart(fig, key=key, alt=alt_text(fig, caption), config=plotly_config(name))
        if legend:
            st.markdown(legend, unsafe_allow_html=True)
        c1, c2 = st.columns([3, 1], vertical_alignment="top")
        c1.caption(caption)
        with c2:
            html_button(lambda: download() if download is not None else fig, name, key=f"dl_{key}")


def html_button(figure, name: str, key: str) -> None:
    """The HTML download of the figure ``figure()`` returns (made on click)."""
    st.download_button(
        "HTML",
        data=lambda: export.figure_html(figure()),
        file_name=f"{name}.html",
        mime="text/html",
        on_click="ignore",
        key=key,
        icon=":material/download:",
        type="tertiary",
        help="Download the interactive figure as one HTML file "
        "(PNG: camera icon in the figure's toolbar).",
    )


def csv_button(label: str, df, name: str, key: str) -> None:
    """A CSV download of ``df`` (a table, or a function returning one), made on click."""
    st.download_button(
        label,
        data=lambda: export.frames_csv(df() if callable(df) else df),
        file_name=f"{name}.csv",
        mime="text/csv",
        on_click="ignore",
        key=key,
        icon=":material/download:",
    )


def pattern_preview(
    sc: api.Scenario, container, key: str = "pb_timeline", lane_px: int = 34
) -> None:
    """The timeline of the scenario's seasons (``lane_px`` pixels per state's lane)."""
    from allseason.viz import timeline

    n_states = max(s for s, _ in sc.segments) + 1
    fig = timeline.pattern_timeline(sc.pattern, height=150 + lane_px * min(n_states, 8))
    chart(
        fig,
        "Each bar is a season; ▼ marks a state seen for the first time (All-Season "
        "must grow a new bandit), ○ a state coming back (it should recall an old one).",
        "season-pattern",
        key,
        container=container,
    )


def errors_here(placeholder, messages) -> None:
    """The validator's ``messages`` in ``placeholder`` (the slot under the input they are
    about)."""
    if messages:
        with placeholder.container():
            for m in messages:
                st.error(md(m), icon=":material/error:")


def literal(text: str) -> str:
    """Text a user sent (a file name, a cell) shown as itself, not as Markdown/LaTeX."""
    return md(text)
