"""Race: several policies on the scenario, live; cumulative reward and regret, leaderboard.

From the top: the scenario and a link to change it, the race settings (contestants,
hyperparameters, seeds, Run) and a race JSON to load, the season timeline, then the results
(progress, chart, leaderboard, downloads)."""

import streamlit as st

from allseason.ui import frame, race, race_settings, state

frame.page(
    "Choose the contestants and run them on the scenario, each on the same arms and "
    "noise. The chart fills in while the race runs."
)

with frame.guard("the race"):
    frame.url_errors()
    scenario = state.scenario()
    st.markdown(frame.scenario_line(scenario))
    frame.page_link("app_pages/1_Pattern_builder.py", "Change the scenario")
    settings = race_settings.race_settings()
    state.sync_url()  # the link holds the scenario and the race settings
    race_settings.race_upload()
    # the seasons the race is run on (drawn with the page, so the chart code is loaded
    # before the click, not after it)
    frame.pattern_preview(scenario, st.container(), key="race_timeline", lane_px=22)
    # progress, chart, leaderboard, downloads: the Run button reruns only this section,
    # and the chart picker in it only the chart
    race.race_section(settings)
    # outside the section: a fragment's rerun cannot check page links under AppTest
    frame.page_link(
        "app_pages/3_Inside_All-Season.py", "Next: look inside All-Season in your last race"
    )
