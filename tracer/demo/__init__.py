"""Bundled demo scripts (run by the agent when inductor-step is started with no script)."""
