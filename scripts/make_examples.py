"""Write the two example files of "Your data" (docs/your-data.md), made from a seed:

- ``obd-shaped-log.csv``: a logged-bandit CSV in the Open Bandit Dataset's shape (uniform
  logging over 10 items, about 0.4% clicks);
- ``seasonal-reward-table.csv``: 208 weeks x 4 products whose sale rates follow the seasons.

    python scripts/make_examples.py                 # into RESULTS/examples/
    python scripts/make_examples.py --seed 3 --rows 100000

The app makes the same files in memory (its "Try an example" buttons); nothing generated is
kept in the repository. The folder is inside the results folder
(``allseason.sweeps.results_root()``, ``$ALLSEASON_RESULTS`` or ``results/``).
"""

from __future__ import annotations

import argparse

from allseason.logs import examples
from allseason.sweeps import results_root


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--rows", type=int, default=examples.OBD_ROWS, help="rows of the log")
    args = ap.parse_args()
    out = results_root() / "examples"
    out.mkdir(parents=True, exist_ok=True)
    log = out / examples.EXAMPLES["log"][0]
    log.write_bytes(examples.obd_log(n_rows=args.rows, seed=args.seed))
    table = out / examples.EXAMPLES["table"][0]
    table.write_bytes(examples.seasonal_table(seed=args.seed))
    print(f"wrote {log}\nwrote {table}\ntry: python -m allseason replay {log}")


if __name__ == "__main__":
    main()
