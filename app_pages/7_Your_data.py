"""Your data: a logged-bandit CSV evaluated offline, or a reward table raced on."""

from allseason.ui import frame, yourdata

frame.page(
    "Would All-Season help on **your** data? Bring a **log** of a bandit's past "
    "decisions (evaluated offline: replay and IPS) or a **table of reward rates** per "
    "period and arm (it becomes a world the policies race on, and you see which bandit "
    "All-Season used when, on your own calendar)."
)

with frame.guard("Your data"):
    yourdata.page_body()
