"""The figures: builders, golden figures, colours everyone can read."""
