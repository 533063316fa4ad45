"""AOTInductor on CPU: torch.export a tiny MLP, aoti_compile_and_package it, load the package and run it.
The package goes to the current directory."""
import os

import torch

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))
x = torch.randn(4, 8)
with torch.no_grad():
    expected = model(x)
    ep = torch.export.export(model, (x,))
    path = torch._inductor.aoti_compile_and_package(ep, package_path=os.path.join(os.getcwd(), "mlp.pt2"))
    got = torch._inductor.aoti_load_package(path)(x)
print("match", torch.allclose(expected, got, atol=1e-5), f"{got.sum().item():.4f}", os.path.basename(path))
