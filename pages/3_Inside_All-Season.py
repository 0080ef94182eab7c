"""Inside All-Season: its bandits' weights, lives and seasons in the last race."""

import streamlit as st

from allseason.ui import runs, views

views.page("Inside All-Season",
           "How All-Season decided, in your last race: which bandit held the weight, when "
           "bandits were born and pruned, which bandit played which season, and how fast "
           "the right one took over after each change point.", icon=":material/troubleshoot:")

with views.guard("Inside All-Season"):
    views.url_errors()
    run = runs.last_run()
    if not views.allseason_labels(run):
        views.inside_needs_race(run)
    else:
        label, seed = views.inside_picker(run)
        tabs = st.tabs(["Weights", "Births & prunings", "Seasons & recall",
                        "Carried weights vs the printed rule", "Posteriors (d = 2)"])
        with tabs[0], views.guard("the weights"):
            views.weights_panel(run, label, seed)
        with tabs[1], views.guard("the lifelines"):
            views.lives_panel(run, label, seed)
        with tabs[2], views.guard("the seasons"):
            views.seasons_panel(run, label, seed)
        with tabs[3], views.guard("the weighting comparison"):
            views.weighting_panel(run, label)
        with tabs[4], views.guard("the posterior animation"):
            views.posterior_panel(run, label, seed)
