"""Guided tour: All-Season in seven steps, one figure and three sentences each, for a workshop
or a stakeholder meeting. The step is in the URL (``?step=3``), so a presenter can open any
step directly. The steps are built in :mod:`allseason.ui.tour`."""

from allseason.ui import tour, views

tour.page_frame()
with views.guard("the guided tour"):
    tour.show()
