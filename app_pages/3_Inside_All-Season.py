"""Inside All-Season: its bandits' weights, lives and seasons in the last race.

The session's last race; without an All-Season in it, an offer to run the default race; else
the contestant and seed pickers and the chosen view (they rerun only that part)."""

from allseason.ui import frame, inside, runcache

frame.page(
    "How All-Season decided, in your last race: which bandit held the weight, when "
    "bandits were born and pruned, which bandit played which season, and how fast "
    "the right one took over after each change point."
)

with frame.guard("Inside All-Season"):
    frame.url_errors()
    run = runcache.last_run()
    if not inside.allseason_labels(run):
        inside.inside_needs_race(run)
    else:
        inside.inside_views(run.key)  # the pickers rerun only this part
