"""inductor-step UI: the Textual app, the command line and the session model. Never imports torch."""
