"""The memory plan on a real CPU compile (tests/scripts/memory_mlp.py, a small MLP training step, recorded headless): the
planned forward peak is the hand-computed one, the planned saved-for-backward bytes are what autograd really held
(the compiled function's saved tensors, measured in the script), Inductor's own estimate (torch._inductor.memory,
recorded at the codegen stop) agrees within 1%, and the headless run prints the memory lines."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import torch

from inductor_step import session
from inductor_step.session import memory as mem
from inductor_step.session.memory_saved import saved_for_backward

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_mlp_training_step_plan_matches_hand_count_and_autograd(tmp_path):
    out, measured = tmp_path / "s.jsonl", tmp_path / "measured.json"
    env = dict(os.environ, MEMORY_OUT=str(measured),
               PYTHONPATH=os.pathsep.join(p for p in (os.environ.get("PYTHONPATH"), ROOT) if p))
    run = subprocess.run([sys.executable, "-m", "inductor_step", "--headless", "--record", str(out),
                          os.path.join(ROOT, "tests", "scripts", "memory_mlp.py")],
                         cwd=str(tmp_path), env=env, check=True, capture_output=True, text=True, timeout=600)
    s = session.load(str(out))
    p = mem.plan(s.store, "[0/0] forward")
    # by hand: Linear(64, 256) on 16 rows (16x256 floats), GELU (16x256), Linear(256, 32) (16x32), the mean (one
    # float); the first three are saved for the backward and the loss is returned, so all four live at the end
    assert p.peak == (16 * 256 + 16 * 256 + 16 * 32 + 1) * 4
    assert p.inputs_bytes == (256 * 64 + 256 + 16 * 64 + 32 * 256 + 32) * 4
    for key in ("[0/0] forward", "[0/0] backward"):  # Inductor's own estimate (recorded at codegen) agrees
        q = mem.plan(s.store, key)
        if tuple(int(x) for x in torch.__version__.split("+")[0].split(".")[:2]) < (2, 13):
            assert q.inductor_estimate is None, key  # not read before 2.13 (tracer.adapter.memory)
            continue
        assert q.inductor_estimate is not None and abs(q.inductor_estimate - q.peak) <= 0.01 * q.peak, key
    sv = saved_for_backward(s.store, "[0/0] forward")
    got = json.loads(measured.read_text())
    assert sv.storage_bytes == got["saved_storage_bytes"] > 0  # planned == held by autograd (params, batch apart)
    assert len(sv.tensors) == got["saved_tensors"]
    # the backward frees the saved activations by its own del (AOTAutograd dropped its references): exactly what
    # autograd held for it; by hand its own buffers are the grads 16x256 (reused in place), 32x256, 32, 256x64 and
    # 256 floats, all live at the end: 115840 bytes, of which the frees (mul_2, addmm, addmm_1 reused as buf0) make
    # room for 34816 before the last two are allocated
    bp = mem.plan(s.store, "[0/0] backward")
    assert bp.released == got["saved_storage_bytes"] and bp.released_outputs == 0
    assert bp.peak == 115840 and bp.high_water == bp.high_water_outputs_dropped == 115840 - 34816
    assert p.high_water == p.peak and p.released == 0  # the forward frees nothing of its caller's
    lines = [l for l in run.stdout.splitlines() if l.startswith("memory: ")]
    assert lines[0].startswith(f"memory: [0/0] forward planned peak {mem.fmt_bytes(p.peak)} at ")
    assert f"saved for backward {mem.fmt_bytes(sv.storage_bytes)} ({len(sv.tensors)} tensors" in lines[0]
    assert any(l.startswith("memory: [0/0] backward planned peak ") and f"{mem.fmt_bytes(bp.high_water)} above the "
               "call's start" in l for l in lines)


def test_the_joint_graph_partitioned_again_under_a_lower_activation_budget_saves_less():
    """tracer.adapter.partition: the joint graph kept at the min-cut partitioner, partitioned again under
    torch._functorch.config.activation_memory_budget=0.5, returns a forward that saves fewer bytes (the partition's
    own size estimate: its forward's outputs past the user's loss)."""
    from torch._inductor import compile_fx as cfx

    from inductor_step.tracer.adapter.partition import install_partition_hook, partition_again

    orig, kept = cfx.min_cut_rematerialization_partition, []
    try:
        assert install_partition_hook(kept.append)
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.GELU(), torch.nn.Linear(256, 32))
        torch._dynamo.reset()
        # caches off: a cached compile never reaches the partitioner
        with torch._inductor.config.patch(fx_graph_cache=False), \
                torch._functorch.config.patch(enable_autograd_cache=False):
            torch.compile(lambda x: model(x).square().mean())(torch.randn(1024, 64)).backward()
    finally:
        cfx.min_cut_rematerialization_partition = orig
        torch._dynamo.reset()

    def saved_bytes(budget):
        fw, _bw = partition_again(kept[0], {"activation_memory_budget": budget})
        outs = next(iter(fw.graph.find_nodes(op="output"))).args[0][1:]  # past the user's loss
        return sum(o.meta["val"].untyped_storage().nbytes() for o in outs if isinstance(o, torch.fx.Node)
                   and isinstance(o.meta.get("val"), torch.Tensor) and o.op != "placeholder")

    assert len(kept) == 1 and saved_bytes(1.0) == 1024 * 256 * 4 * 2 + 1024 * 32 * 4  # addmm, GELU, addmm_1
    assert saved_bytes(0.5) < saved_bytes(1.0)


def test_each_ddp_part_is_partitioned_again_from_its_own_joint_graph(tmp_path):
    """tests/scripts/memory_ddp_parts.py: DDP in one process (gloo) with two buckets, so DDPOptimizer compiles the
    model's frame as two parts, each partitioning a joint graph of its own under one compile id.  The headless
    ``--what-if=activation_memory_budget=0.5`` partitions each part's own joint graph again: each variant takes its
    part's inputs (not the last part's) and saves for its own part's backward."""
    out = tmp_path / "s.jsonl"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (os.environ.get("PYTHONPATH"), ROOT) if p))
    run = subprocess.run([sys.executable, "-m", "inductor_step", "--headless", "--what-if=activation_memory_budget=0.5",
                          "--record", str(out), os.path.join(ROOT, "tests", "scripts", "memory_ddp_parts.py")],
                         cwd=str(tmp_path), env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    s = session.load(str(out)).store
    cid = next(k.split(" ")[0] for k in s.graphs if k.endswith(" forward #2"))
    budget = " · activation_memory_budget=0.5"
    inputs = {}
    for part in (1, 2):
        assert f"{cid} backward #{part}{budget}" in s.graphs, list(s.graphs)
        key = f"{cid} forward #{part}"
        # the variant's forward takes its own part's inputs (the parts' differ: their own Linear layers)
        inputs[key] = mem.plan(s, key).inputs_bytes
        assert mem.plan(s, key + budget).inputs_bytes == inputs[key], key
        sv = saved_for_backward(s, f"{cid} forward #{part}{budget}")
        assert sv.backward == f"{cid} backward #{part}{budget}" and sv.tensors and not sv.note, sv
    assert inputs[f"{cid} forward #1"] != inputs[f"{cid} forward #2"]
    # part 2 (fc1, fc2 and their GELUs) saves less under the budget; the planned figures say so in the headless lines
    assert saved_for_backward(s, f"{cid} forward #2{budget}").storage_bytes < \
        saved_for_backward(s, f"{cid} forward #2").storage_bytes
    assert f"memory: what if {cid} forward #2{budget}: " in run.stdout
