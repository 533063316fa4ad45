"""``inductor-step --open``: a file that is not a session, and flags that run a script, refused in one line."""

from __future__ import annotations

import os

import pytest

from inductor_step.cli.main import main

FIX = os.path.join(os.path.dirname(__file__), "..", "fixtures")
DEMO = os.path.join(FIX, "demo.jsonl")


def _err(capsys, *argv: str) -> tuple[int, str, str]:
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def test_a_text_file_is_not_a_session_not_an_empty_one(tmp_path, capsys) -> None:
    (tmp_path / "notsession.jsonl").write_text("hello\n")
    (tmp_path / "empty.jsonl").write_text("")
    (tmp_path / "blank.jsonl").write_text("\n\n")
    rc, out, err = _err(capsys, "--open", str(tmp_path / "notsession.jsonl"))
    assert (rc, out) == (2, "")
    assert err == f"inductor-step: {tmp_path / 'notsession.jsonl'}: not an inductor-step session (no header line)\n"
    for name in ("empty.jsonl", "blank.jsonl"):
        rc, out, err = _err(capsys, "--open", str(tmp_path / name))
        assert (rc, err) == (2, f"inductor-step: {tmp_path / name}: empty session file\n")


@pytest.mark.parametrize("flags, says", [
    (["--headless"], "--headless runs a script; --open only views a recording (for its text summary: "
                     f"inductor-step report {DEMO})"),
    (["--headless", "--run"], "--headless runs a script"),
    (["--numerics"], "--numerics runs a script"),
    ([], f"the UI needs a terminal; for a recording's text summary: inductor-step report {DEMO}"),
])
def test_open_with_headless_or_no_terminal_is_one_line_and_exit_2(capsys, flags, says) -> None:
    rc, out, err = _err(capsys, "--open", DEMO, *flags)  # pytest's captured stdout is not a terminal
    assert (rc, out) == (2, "")
    assert err.startswith("inductor-step: ") and says in err and err.count("\n") == 1, err
