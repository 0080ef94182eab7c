"""Guided tour: All-Season in seven steps, one figure and three sentences each, for a workshop
or a stakeholder meeting. The step is in the URL (``?step=3``), so a presenter can open any
step directly. The page is :mod:`allseason.ui.tour`, its steps :mod:`allseason.ui.tour_steps`.
"""

from allseason.ui import frame, tour

tour.page_frame()
with frame.guard("the guided tour"):
    tour.show()
