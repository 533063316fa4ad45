"""The recorded session as a library (no Textual, no torch): its format, the loaded session, diffs, ledgers, rank comparisons and reports."""
