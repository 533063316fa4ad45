"""The fixture of a C++ kernel's disassembly (tests/fixtures/cpu_asm.jsonl, --run): one small C++ kernel, timed, so the run stage
records its compiled function's disassembly."""
import torch


@torch.compile
def f(x):
    return torch.relu(x) * 2 + x.sin()


print(f(torch.randn(4096)).sum().item())
