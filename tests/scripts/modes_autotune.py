"""max-autotune + freezing on CPU: two tiny Linear+ReLU models.  The first compiles under
mode="max-autotune", so Inductor benchmarks its GEMM's candidates (ATen/MKL against the C++ GEMM template);
the second under options that leave only the C++ GEMM template (one candidate, no benchmark), so its
kernel is a template with the ReLU fused as its epilogue."""
import torch

torch._inductor.config.freezing = True
torch.manual_seed(0)
x = torch.randn(8, 16)
tuned = torch.nn.Sequential(torch.nn.Linear(16, 16), torch.nn.ReLU()).eval()
template = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU()).eval()
with torch.no_grad():
    out = torch.compile(tuned, mode="max-autotune")(x)
    torch.testing.assert_close(out, tuned(x))
    out = torch.compile(template, options={"max_autotune": True, "max_autotune_gemm_backends": "CPP"})(x)
    torch.testing.assert_close(out, template(x))
print("ok")
