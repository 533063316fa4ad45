"""Prints its sys.argv[1:] as JSON (tests/e2e/test_script_args.py: arguments reach the script verbatim)."""
import json
import sys

print("ARGV=" + json.dumps(sys.argv[1:]), flush=True)
