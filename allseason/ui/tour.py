"""The Guided tour page: All-Season in seven steps, one figure and at most three sentences
each, for a workshop or a stakeholder meeting (the steps: :mod:`allseason.ui.tour_steps`).

The step is in the page URL (``?step=3``, 1-based), so a presenter can open any step
directly; Next, Back and the step picker change it. A step that does not exist gets a
message and step 1, never a traceback.
"""

from __future__ import annotations

import re

import streamlit as st

from allseason import api
from allseason.viz.text import md

from . import frame, keys, runcache, tour_steps
from .keys import TOUR_PICK as PICK  # the step picker's key
from .tour_steps import N_STEPS, STEPS, step

QUERY = "step"  # the URL parameter


def reset() -> None:
    """The step picker follows the URL's step again (keys.reset)."""
    keys.reset(st.session_state, keys.PAGE_TOUR)


# --- the step in the URL ----------------------------------------------------------------------
def parse_step(raw) -> tuple[int, str | None]:
    """The step a URL value asks for, and a message when it is not a step of the tour
    (then step 1). No value: step 1, no message."""
    if raw is None or str(raw).strip() == "":
        return 1, None
    text = str(raw).strip()
    if re.fullmatch(r"[0-9]{1,6}", text) and 1 <= int(text) <= N_STEPS:
        return int(text), None
    shown = text if len(text) <= 30 else text[:30] + "…"
    return 1, (f"This tour has no step “{shown}”: its steps are 1 to {N_STEPS}. Showing step 1.")


def go_to(k: int) -> None:
    """Next, Back: the new step goes into the URL, which the run then reads."""
    st.query_params[QUERY] = str(min(max(int(k), 1), N_STEPS))


def _picked() -> None:
    k = st.session_state.get(PICK)
    if k is not None:  # None: the current step was clicked again (deselected); stay
        go_to(k)


# --- the page ---------------------------------------------------------------------------------
def heading(k: int) -> str:
    return f"Step {k} of {N_STEPS} · {STEPS[k - 1][1]}"


PURPOSE = (
    f"**Guided tour** of All-Season in {N_STEPS} steps, one figure each; the link opens this step."
)


def page_frame() -> None:
    """The page's frame: the tab's title, the sidebar (collapsed at first: the figure gets
    the whole width of a projector). The heading is the step's, drawn by :func:`show`."""
    k, _ = parse_step(st.query_params.get(QUERY))
    frame.page(PURPOSE, heading=heading(k), header=False)
    st.set_page_config(initial_sidebar_state="collapsed")


@st.fragment(key="tour_step")
def show() -> None:
    """The tour's body: the step's heading, the step picker with Back and Next, then the
    text (with the figure's caption and download) beside the figure. A fragment: Next, Back
    and the picker rerun this part only, not the page."""
    with frame.guard("the guided tour"):
        _show()


def _show() -> None:
    raw = st.query_params.get(QUERY)
    k, message = parse_step(raw)
    if raw != str(k):
        st.query_params[QUERY] = str(k)
    st.set_page_config(page_title=f"{heading(k)} · All-Season")  # the tab follows the step
    st.title(heading(k))
    st.markdown(PURPOSE)
    pick, back, ahead = st.columns([6, 1, 1], vertical_alignment="center")
    st.session_state[PICK] = k
    pick.segmented_control(
        "Jump to a step",
        list(range(1, N_STEPS + 1)),
        key=PICK,
        format_func=lambda i: f"{i} · {STEPS[i - 1][2]}",
        on_change=_picked,
        label_visibility="collapsed",
    )
    back.button(
        "← Back", key="tour_back", on_click=go_to, args=(k - 1,), disabled=k == 1, width="stretch"
    )
    ahead.button(
        "Next →",
        key="tour_next",
        on_click=go_to,
        args=(k + 1,),
        disabled=k == N_STEPS,
        type="primary",
        width="stretch",
    )
    with st.spinner(
        "Preparing the tour: running the paper's synthetic experiment once "
        "(a few seconds, then it is kept)…"
    ):
        s = step(k)
    text_col, fig_col = st.columns([1.2, 2.5], gap="medium")
    with fig_col:
        st.plotly_chart(
            s.figure,
            key=f"tour_fig_{k}",
            alt=frame.alt_text(s.figure, s.caption),
            config=frame.plotly_config(s.name),
        )
    with text_col:
        if message:  # here, not above: the figure stays where it always is
            st.warning(md(message), icon=":material/link_off:")
        st.markdown(s.text)
        st.caption(s.caption)
        frame.html_button(lambda: s.figure, s.name, key=f"tour_dl_{k}")
    tour_steps.prebuild(runcache.key_of(api.default_race()))
