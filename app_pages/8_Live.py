"""Live: the presenter switches the season by hand (buttons or keys 1-9 and N), and the room
watches who recovers: the rolling reward of each contestant, who holds All-Season's top
weight, the regret since the switch, and a ticker in plain words. Built in
:mod:`allseason.ui.live`."""

from allseason.ui import live, views

views.page("Live", "", icon=":material/live_tv:", header=False)
live.show()
