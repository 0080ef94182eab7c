"""When does it help? A map of where All-Season beats the best baseline, and your world on it."""

from allseason.ui import frame, when

frame.page(
    "Will All-Season help **you**? It depends on how long a season lasts and how noisy the "
    "reward is. The map below shows where it wins, where a sliding window or a discount is "
    "the better bet, and where your own world falls."
)

with frame.guard("the map"):
    when.show()
