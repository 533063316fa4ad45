"""The memory plan's real compile: a small MLP training step; after the compiled forward it writes what autograd really
holds for the backward (the compiled function's saved tensors, their distinct storages' bytes, the parameters and
the batch apart) to $MEMORY_OUT as JSON, the measured side the plan's saved-for-backward bytes are checked against."""

import json
import os

import torch

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.GELU(), torch.nn.Linear(256, 32))
x = torch.randn(16, 64)


@torch.compile
def step(x):
    return model(x).square().mean()


loss = step(x)
held = {p.untyped_storage().data_ptr() for p in model.parameters()} | {x.untyped_storage().data_ptr()}
storages: dict[int, int] = {}
saved = loss.grad_fn.saved_tensors  # CompiledFunctionBackward: what the forward saved
for t in saved:
    if isinstance(t, torch.Tensor) and t.untyped_storage().data_ptr() not in held:
        storages[t.untyped_storage().data_ptr()] = t.untyped_storage().nbytes()
loss.backward()
with open(os.environ.get("MEMORY_OUT", "memory_out.json"), "w") as f:
    json.dump({"saved_storage_bytes": sum(storages.values()), "saved_storages": len(storages),
               "saved_tensors": len(saved)}, f)
