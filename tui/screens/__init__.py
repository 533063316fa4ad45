"""The app's screens besides the main one: help (made from the bindings) and too-small."""
