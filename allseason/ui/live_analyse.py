"""The Live page's last part, "Analyse this show": the seasons played so far become a race of
the app (the schedule as a custom pattern, one seed, the show's contestants), opened in Race
or Inside All-Season, or shared as a link.
"""

from __future__ import annotations

from urllib.parse import urlencode

import streamlit as st

from allseason import api

from . import keys, runcache, state
from .frame import guard
from .keys import LIVE_ANALYSE as ANALYSE  # the page to open with the show's race
from .live import PAUSED, RUN


def show_race(run: api.LiveRun) -> api.Race:
    """The show as the app's race (its schedule as a custom pattern, one seed), within the
    app's limits; SpecError (naming the limit) if not."""
    race = run.race()
    return api.Race.checked(race.scenario, race.policies, race.n_seeds, state.APP_LIMITS)


def race_choice(run: api.LiveRun) -> state.RaceChoice:
    """The show's contestants at their default-race settings, one seed."""
    return state.choice_of(run.specs, 1)


def show_link(run: api.LiveRun) -> str:
    """The Race page's address with the show's scenario and contestants."""
    race = show_race(run)
    query = {
        **race.scenario.to_query(),
        "policies": ",".join(s.name for s in run.specs),
        "n_seeds": "1",
    }
    base = (st.context.url or "").split("?", 1)[0].rstrip("/")
    base = base.rsplit("/", 1)[0] if base.endswith("/Live") else base
    return f"{base}/Race?{urlencode(query)}"


def _analyse(page: str) -> None:
    st.session_state[PAUSED] = True
    st.session_state[ANALYSE] = page


@st.fragment(key="live_analyse")
def analyse() -> None:
    """The recorded schedule as a race: open it in Race or Inside All-Season, or copy a
    link. A fragment: its buttons rerun this part only (they read the show as it is then)."""
    ss = st.session_state
    with guard("analyse this show"):
        st.subheader("Analyse this show")
        run: api.LiveRun = ss[RUN]
        target = ss.pop(ANALYSE, None)
        if run.t == 0:
            st.caption("Nothing played yet.")
            return
        try:
            race = show_race(run)
        except api.SpecError as e:
            st.warning(
                f"This show can not become a race of the app: {state.explain(e)}. "
                f"Restart for a shorter show (the app's races have at most "
                f"{state.APP_LIMITS['horizon']:,} steps and "
                f"{state.APP_LIMITS['n_segments']} segments).",
                icon=":material/block:",
            )
            return
        if target is not None:
            ss[keys.SCENARIO] = race.scenario
            ss.pop(keys.URL_ERRORS, None)
            ss[keys.RACE_CHOICE] = race_choice(run)
            if target == "race":
                ss[keys.AUTORUN] = True
                st.switch_page("app_pages/2_Race.py")
            with st.spinner("Running the show's race…"):
                runcache.remember(runcache.run_race(state.race()))
            st.switch_page("app_pages/3_Inside_All-Season.py")
        sc = race.scenario
        paused = ss.get(PAUSED, False)
        if paused:
            st.markdown(
                f"The show so far: **{sc.horizon:,} steps**, {len(sc.segments)} "
                f"segments, {max(s for s, _ in sc.segments) + 1} seasons."
            )
        st.markdown(
            "Its seasons, as played, become a race: replayed with the same seed, "
            "every contestant makes the same decisions, bit for bit. *Season k* "
            "here is *state k − 1* there."
        )
        c1, c2, _ = st.columns([1, 1, 2])
        c1.button(
            "Open in Race",
            key="live_to_race",
            on_click=_analyse,
            args=("race",),
            icon=":material/sports_score:",
            width="stretch",
            help="Pauses the show and runs its race on the Race page.",
        )
        c2.button(
            "Open in Inside All-Season",
            key="live_to_inside",
            on_click=_analyse,
            args=("inside",),
            icon=":material/troubleshoot:",
            width="stretch",
            help="Pauses the show, runs its race and opens Inside All-Season.",
        )
        if paused:
            st.caption("A link to the show's race (the seasons played up to now), to share:")
            st.code(show_link(run), language=None, wrap_lines=True)
        else:
            st.caption("Pause the show for a link to its race, to share.")
