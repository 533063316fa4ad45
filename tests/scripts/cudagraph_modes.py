"""An MLP under a compile mode that turns CUDA graphs on (.trial/mlp_modes.py's models): argv MODE
(reduce-overhead, max-autotune, option: ``options={"triton.cudagraphs": True}``, default) DTYPE (fp32, bf16) TRAIN
(train, infer).  ``--steps N`` calls (default 25: cudagraph trees record on the second call, inductor-step profiles
calls 2-11 and times 12-21 with CUDA events); ``--no-zero-grad`` accumulates gradients over the steps (torch's own
cudagraph trees then raise "accessing tensor output of CUDAGraphs that has been overwritten by a subsequent run",
pytorch/pytorch#169545); ``--code-out FILE`` writes torch's output code of every graph (run_and_get_code, JSON list)
instead of looping."""
import argparse
import json

import torch
import torch.nn as nn

p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
p.add_argument("mode")
p.add_argument("dtype", choices=["fp32", "bf16"])
p.add_argument("train", choices=["train", "infer"])
p.add_argument("--steps", type=int, default=25)
p.add_argument("--no-zero-grad", action="store_true")
p.add_argument("--code-out")
a = p.parse_args()
torch.manual_seed(0)
if a.dtype == "bf16":
    m = nn.Sequential(nn.Linear(1024, 4096), nn.GELU(), nn.Linear(4096, 1024)).cuda().to(torch.bfloat16)
    x = torch.randn(512, 1024, device="cuda", dtype=torch.bfloat16)
else:
    m = nn.Sequential(nn.Linear(512, 2048), nn.GELU(), nn.Linear(2048, 512), nn.LayerNorm(512)).cuda()
    x = torch.randn(64, 512, device="cuda")
kw = {"options": {"triton.cudagraphs": True}} if a.mode == "option" else ({} if a.mode == "default" else {"mode": a.mode})
f = torch.compile(m, **kw)


def step() -> None:
    if a.train == "train":
        if not a.no_zero_grad:
            m.zero_grad(set_to_none=True)
        f(x).float().square().mean().backward()
    else:
        with torch.no_grad():
            f(x)


if a.code_out:
    from torch._inductor.utils import run_and_get_code

    torch._functorch.config.enable_autograd_cache = False  # a cache hit compiles nothing: no code to get
    with torch._inductor.config.patch(fx_graph_cache=False):
        _, codes = run_and_get_code(lambda: [step() for _ in range(3)])
    with open(a.code_out, "w", encoding="utf-8") as fh:
        json.dump(codes, fh)
else:
    for _ in range(a.steps):
        step()
torch.cuda.synchronize()
print("done", a.mode, a.dtype, a.train)
