"""The agent a service embeds (issue 31): one decision at a time, its state, its log."""
