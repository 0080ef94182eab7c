"""Race: several policies on the scenario, live; cumulative reward and regret, leaderboard."""

import streamlit as st

from allseason.ui import forms, runs, state, views

views.page("Race",
           "Choose the contestants and run them on the scenario, each on the same arms and "
           "noise. The charts fill in while the race runs.", icon=":material/sports_score:")

with views.guard("the race"):
    views.url_errors()
    scenario = state.scenario()
    state.sync_url()
    st.markdown(views.scenario_line(scenario))
    st.page_link("app_pages/1_Pattern_builder.py", label="Change the scenario", icon=":material/calendar_month:")
    race, clicked = forms.race_settings()
    forms.race_upload()
    # the seasons the race is run on (drawn with the page, so the chart code is loaded
    # before the click, not after it)
    views.pattern_preview(scenario, st.container(), key="race_timeline", lane_px=22)
    autorun = st.session_state.pop(state.AUTORUN, False)
    slots = views.race_slots()
    if race is not None:
        run = runs.cached(race)
        if run is None and (clicked or autorun):
            run = runs.stream_race(race, slots, views.draw_live)
        elif run is not None:
            slots["progress"].success(views.cached_note(run), icon=":material/check_circle:")
        if run is None:
            slots["progress"].info("Press **▶ Run race** to start. The default race (the "
                                   "paper's experiment, 7 policies and 2 oracles, 5 seeds) "
                                   "takes a few seconds.", icon=":material/touch_app:")
        else:
            runs.remember(run)
            views.show_race(run, slots)
            st.page_link("app_pages/3_Inside_All-Season.py",
                         label="Next: look inside All-Season in this race", icon=":material/troubleshoot:")
