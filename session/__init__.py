"""A recorded session as a library (no Textual, no torch): counts of what it compiled, the CI gate."""
