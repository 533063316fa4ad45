"""Timing a backward graph whose input is expanded (a 0 stride), as Hugging Face BERT's training step's is.

BERT gathers ``token_type_ids`` at the position ids and expands them over the batch; the backward graph takes
that index with a 0 stride. The run stage puts the script's own values into ``get_args()``'s tensors; a plain
``copy_`` into the expanded one raised "more than one element of the written-to tensor refers to a single memory
location", so every BERT backward read "run failed". ``tests/scripts/expand_index_train.py`` is that pattern in
20 lines.
"""

from __future__ import annotations

import os

import pytest

from tests.tracer.test_eager_baseline import SCRIPTS, _headless

pytest.importorskip("torch")


def test_backward_with_an_expanded_index_input_is_timed(tmp_path):
    proc, runs = _headless(tmp_path, os.path.join(SCRIPTS, "expand_index_train.py"))
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert len(runs) == 2, list(runs)  # the forward and the backward of [0/0]
    for key, run in runs.items():
        assert not run.get("error"), (key, run.get("error"))
        assert run.get("compiled_ms", 0) > 0, key
    assert "more than one element" not in proc.stdout


def test_backward_of_a_dynamic_graph_whose_inputs_are_views_is_timed(tmp_path):
    """``dynamic=True`` on nanoGPT's attention (q, k, v: views into one qkv output): the output code's
    ``get_args()`` made them contiguous and the compiled backward's ``assert_size_stride`` failed ("expected size
    2==2, stride ...") before any round; the script's own inputs now keep their strides."""
    proc, runs = _headless(tmp_path, os.path.join(SCRIPTS, "dynamic_qkv_train.py"))
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert len(runs) == 2, list(runs)
    for key, run in runs.items():
        assert not run.get("error"), (key, run.get("error"))
        assert run.get("compiled_ms", 0) > 0, key
