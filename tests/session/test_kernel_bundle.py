"""R's bundle carries the selected kernel's standalone repro and its TTGIR, PTX and SASS (issue 28.5), made here
without a GPU from the recorded GPU session tests/fixtures/gpu_nanogpt.jsonl; with nothing selected, the top of the
run's time is taken."""

from __future__ import annotations

import os

import pytest

from inductor_step.tracer.protocol import read_session
from inductor_step.tui import kernel_bundle

FIXTURE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures", "gpu_nanogpt.jsonl")


def test_the_selected_buffers_kernel_gets_a_repro_and_its_stages_in_the_bundle(tmp_path) -> None:
    pytest.importorskip("triton")
    msgs = list(read_session(FIXTURE))
    # nothing selected: the three Triton kernels with the most time
    top = kernel_bundle.chosen_kernels(msgs, None)
    assert len(top) == 3 and all(why.startswith("top of the run's time") for _g, _k, why in top)
    stood = {"graph": "[0/0] forward", "stage": "codegen", "selection": "buf2"}
    assert [k for _g, k, _w in kernel_bundle.chosen_kernels(msgs, stood)] == ["triton_poi_fused_embedding_1"]
    text = kernel_bundle.add_kernels(FIXTURE, msgs, str(tmp_path), stood)
    k = tmp_path / "kernels" / "triton_poi_fused_embedding_1"
    for ext in ("py", "ttgir", "ptx", "sass"):
        assert k.with_suffix(f".{ext}").exists(), ext
    assert not k.with_suffix(".llir").exists()  # the bundle keeps TTGIR, PTX and SASS
    assert "STG.E.128" in k.with_suffix(".sass").read_text()
    assert "computes the selected buf2" in text and "sm_90" in text and "st.global x128 x2" in text
