"""max-autotune with freezing on CPU (GEMM templates; timing failed on _frozen_param6)."""
import torch

torch._inductor.config.freezing = True
torch._inductor.config.max_autotune_gemm_backends = "CPP"  # the CPU GEMM template, not the library call
m = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 16)).eval()
mc = torch.compile(m, mode="max-autotune")
x = torch.randn(8, 64)
with torch.no_grad():
    for _ in range(2):
        y = mc(x)
print("ok", round(float(y.sum()), 3))
