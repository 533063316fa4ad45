"""torch.compile with Inductor's C++ wrapper (config.cpp_wrapper=True) on a tiny MLP, CPU: the wrapper is C++,
its kernels are cpp_fused_* calls and aoti_torch_* / extern calls."""
import torch
import torch._inductor.config as inductor_config

inductor_config.cpp_wrapper = True
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))
x = torch.randn(4, 8)
with torch.no_grad():
    expected = model(x)
    got = torch.compile(model)(x)
print("match", torch.allclose(expected, got, atol=1e-5), f"{got.sum().item():.4f}")
