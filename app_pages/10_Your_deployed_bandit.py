"""Your deployed bandit: an All-Season agent running in your own system, seen through its
decision log (the server's folder, an upload, or the built-in example)."""

from allseason.ui import deployed, frame

frame.page(
    "Watch the All-Season agent **you run in your own system**: which bandit holds the "
    "weight now, when a season was new or came back, how the reward goes, and whether the "
    "logged probabilities still allow an offline evaluation."
)

with frame.guard("Your deployed bandit"):
    deployed.page_body()
