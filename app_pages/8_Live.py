"""Live: the presenter switches the season by hand (buttons or keys 1-9 and N), and the room
watches who recovers: the rolling reward of each contestant, who holds All-Season's top
weight, the regret since the switch, and a ticker in plain words.

From the top: the title and the sidebar's settings (hidden in presenter mode), the stage (a
fragment redrawn four times a second while the show plays), then the show as a race to
analyse. Built in :mod:`allseason.ui.live` and :mod:`allseason.ui.live_analyse`."""

from allseason.ui import frame, live, live_analyse

frame.page("", header=False)  # the title is drawn by live.header (not in presenter mode)
live.style()
with frame.guard("the live page"), live.drawing():
    live.start()
    live.header()  # not in presenter mode: the stage fills the screen
    if not live.presenter():
        live.settings()
    live.stage()
    if not live.presenter():
        live_analyse.analyse()
