"""Shared helpers of the test suite (CLI calls, projects, artefacts, histories)."""
