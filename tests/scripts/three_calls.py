"""Three compiled callables: a module under no_grad, a function with a graph break, and one whose guard the
script breaks after its last call (a global it reads changes)."""
import torch


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = torch.nn.Linear(64, 256), torch.nn.Linear(256, 64)

    def forward(self, x):
        return self.fc2(torch.nn.functional.gelu(self.fc1(x)))


mlp = MLP()
compiled = torch.compile(mlp)
x = torch.randn(32, 64)


@torch.compile
def two_graphs(a):
    b = torch.sin(a) * 2
    print("graph break")  # Dynamo splits the call here
    return torch.cos(b) + 1


SCALE = 2.0


@torch.compile
def scaled(a):
    return a * SCALE + 1


with torch.no_grad():
    for _ in range(3):
        compiled(x)
for _ in range(2):
    two_graphs(x)
    scaled(x)
SCALE = 3.0  # scaled's guard on SCALE fails from here: repeating its call would recompile
print("done")

# a sweep: three models compiled, called once and let go; the run stage must not keep them (or their inputs) alive
import gc  # noqa: E402
import weakref  # noqa: E402

gone = []
for width in (8, 16, 24):
    swept = torch.nn.Linear(width, 4)
    torch.compile(swept)(torch.randn(2, width))
    gone.append(weakref.ref(swept))
    del swept
gc.collect()
print("released but the last", all(r() is None for r in gone[:-1]))


# the common shape of a training script: main() compiles its model, calls it and returns, dropping the last reference
# to it before the run stage begins
class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(16, 16)

    def forward(self, x):
        return torch.relu(self.fc(x))


def main():
    block = torch.compile(Block())
    for _ in range(2):
        block(torch.randn(4, 16))


main()
gc.collect()
print("released", all(r() is None for r in gone))
