"""The documentation: the site builds, its examples and docstrings run, the wording holds."""
