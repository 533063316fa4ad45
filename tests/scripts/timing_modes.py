"""One small script per way of compiling that timing used to re-trace and lose:
frozen parameters, a script-defined custom op, a compiled Adam(foreach=True).step, compiled autograd, then
aot_eager and a custom backend, and a compile after torch._dynamo.reset().  Prints whether every
compiled result matched eager ("match True")."""
import json
import sys

import torch

print("ARGV=" + json.dumps(sys.argv[1:]), flush=True)  # tests/tracer/test_timing_modes.py: verbatim
torch.manual_seed(0)
ok = []

# frozen parameters (torch._inductor.config.freezing): prepacked weights
m = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 8)).eval()
x = torch.randn(4, 16)
with torch.no_grad(), torch._inductor.config.patch(freezing=True):
    ok.append(torch.allclose(torch.compile(m)(x), m(x), atol=1e-5))


# a custom op defined by the script
@torch.library.custom_op("istep::scale_add", mutates_args=())
def scale_add(x: torch.Tensor, s: float) -> torch.Tensor:
    return x * s + 1


@scale_add.register_fake
def _(x, s):
    return torch.empty_like(x)


def g(x):
    return scale_add(x.sin(), 2.0).cos()


ok.append(torch.allclose(torch.compile(g)(x), g(x)))

# a compiled optimizer step, Adam with in-place foreach ops
lin = torch.nn.Linear(8, 4)
ref = torch.nn.Linear(8, 4)
ref.load_state_dict(lin.state_dict())
for mod in (lin, ref):
    mod(torch.ones(2, 8)).sum().backward()
opt, opt_ref = (torch.optim.Adam(mm.parameters(), lr=1e-2, foreach=True) for mm in (lin, ref))
torch.compile(opt.step)()
opt_ref.step()
ok.append(torch.allclose(lin.weight, ref.weight))

# compiled autograd: backward() inside a compiled function
net = torch.nn.Linear(8, 4)
with torch._dynamo.config.patch(compiled_autograd=True):
    torch.compile(lambda x: net(x).relu().sum().backward())(torch.randn(2, 8))
ok.append(net.weight.grad is not None)

# other backends, then a reset and Inductor again
def h(x):
    return (x.sin() + 1).relu().sum(dim=0)


ok.append(torch.allclose(torch.compile(h, backend="aot_eager")(x), h(x)))
ok.append(torch.allclose(torch.compile(lambda x: h(x) * 3, backend=lambda gm, ex: gm.forward)(x), h(x) * 3))
torch._dynamo.reset()
ok.append(torch.allclose(torch.compile(h)(x), h(x)))
print("match", all(ok), ok)
