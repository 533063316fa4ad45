"""The live layer, seen from the UI side: the agent process, its pipes and the torchrun launcher (no Textual, no torch)."""
