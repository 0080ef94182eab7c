"""The agent a service embeds (api.Agent), its state file, its decision log, its service."""
