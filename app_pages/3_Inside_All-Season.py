"""Inside All-Season: its bandits' weights, lives and seasons in the last race."""

from allseason.ui import runs, views

views.page(
    "Inside All-Season",
    "How All-Season decided, in your last race: which bandit held the weight, when "
    "bandits were born and pruned, which bandit played which season, and how fast "
    "the right one took over after each change point.",
    icon=":material/troubleshoot:",
)

with views.guard("Inside All-Season"):
    views.url_errors()
    run = runs.last_run()
    if not views.allseason_labels(run):
        views.inside_needs_race(run)
    else:
        views.inside_views(run.key)  # the pickers rerun only this part
