"""The tests, shelved by subject: one folder per part of the project (see docs/testing.md)."""
