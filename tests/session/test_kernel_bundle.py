"""R's bundle carries the chosen kernels' standalone repros and their TTGIR, PTX and SASS: from a
session that recorded the stages on the GPU (tests/fixtures/gpu_stages.jsonl: benchmarks/cuda_models.py
``pointwise`` on an H200 by tests/gpu/test_gpu_triton_stages.py) they are the recorded ones, written without any
compile; the kernel computing the selected buffer is the one taken, else the top of the run's time."""

from __future__ import annotations

import os

from inductor_step.session.format import read_session
from inductor_step.session import kernel_bundle

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures")
STAGES = os.path.join(FIXTURES, "gpu_stages.jsonl")
KERNEL = "triton_poi_fused_add_mul_0"


def test_the_bundle_holds_the_repro_and_the_recorded_stages_of_the_kernels_chosen(tmp_path) -> None:
    nano = list(read_session(os.path.join(FIXTURES, "gpu_nanogpt.jsonl")))
    top = kernel_bundle.chosen_kernels(nano, None)  # nothing selected: the three Triton kernels with the most time
    assert len(top) == 3 and all(why.startswith("top of the run's time") for _g, _k, why in top)
    stood = {"graph": "[0/0] forward", "stage": "codegen", "selection": "buf2"}
    assert [k for _g, k, _w in kernel_bundle.chosen_kernels(nano, stood)] == ["triton_poi_fused_embedding_1"]

    msgs = list(read_session(STAGES))
    text = kernel_bundle.add_kernels(STAGES, msgs, str(tmp_path), {"graph": "[0/0] inference", "selection": "buf0"})
    k = tmp_path / "kernels" / KERNEL
    for ext in ("py", "ttgir", "ptx", "sass"):
        assert k.with_suffix(f".{ext}").exists(), ext
    assert not k.with_suffix(".llir").exists()  # the bundle keeps TTGIR, PTX and SASS
    assert "STG.E.128" in k.with_suffix(".sass").read_text() and ".target sm_90a" in k.with_suffix(".ptx").read_text()
    assert "GRID = tuple([65536])" in k.with_suffix(".py").read_text()  # the recorded grid (64M / XBLOCK=1024)
    assert "computes the selected buf0" in text and "stages as the run stage recorded them" in text
