"""Higher-order ops' subgraphs on a CUDA GPU, marked ``gpu``; skipped without CUDA::

    python -m pytest -m gpu tests/gpu/test_gpu_subgraphs.py -rA

tests/scripts/gpu_hops.py (cond, a nested region called twice, while_loop) recorded once with
``--headless --run``: every subgraph is a graph with its own stages, Triton kernels and links, and every
graph is timed or says why.
"""

from __future__ import annotations

import pytest
from gpu_helpers import GPU_MARKS, record_script as _record  # (tests/gpu/ is on sys.path: pytest's prepend import mode)

pytestmark = GPU_MARKS


@pytest.fixture(scope="module")
def hops(tmp_path_factory: pytest.TempPathFactory):
    return _record(tmp_path_factory, "gpu_hops")


def test_subgraphs_on_cuda_are_graphs_with_triton_kernels_and_times(hops) -> None:
    assert hops["rc"] == 0, hops["tail"]
    assert [ln for ln in hops["stdout"].splitlines() if ln.split()[:1] in (["cond"], ["nested"], ["while_loop"])] \
        == ["cond True", "nested True", "while_loop True"], hops["tail"]
    subs = sorted(k for k in hops["code"] if " › " in k)
    names = {k.partition(" › ")[2] for k in subs}
    assert {"true_graph_0", "false_graph_0", "while_loop_body_graph_0"} <= names, subs
    assert any(n.startswith("repeated_subgraph") for n in names), subs
    triton = [k for k in subs if any(kk.get("backend") == "triton" for kk in hops["code"][k]["kernels"])]
    assert triton, {k: [kk["name"] for kk in hops["code"][k]["kernels"]] for k in subs}
    for key, cg in hops["code"].items():
        links = cg.get("links") or {}
        assert "unavailable" not in links, (key, links.get("unavailable"))
        for k in cg["kernels"]:
            assert any(k["name"] in (b.get("kernels") or {}) for b in links.get("buffers", {}).values()), (key, k["name"])
    for key in hops["code"]:
        run = hops["runs"].get(key)
        assert run is not None, (key, sorted(hops["runs"]))
        assert not run.get("error"), (key, run.get("error"))
        assert run.get("compiled_ms") or run.get("not_timed"), (key, run)
