"""Users' logs: the reader, the replay, the off-policy estimators, the policies' pi."""
