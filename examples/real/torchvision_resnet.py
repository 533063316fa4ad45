"""Compiled inference, then one compiled training step, of torchvision's ResNet-18 on CPU.

Model code: ``torchvision.models.resnet18(weights=None)`` from torchvision (not written in this
repo), randomly initialised (no weight download).  Inference on a 1x3x64x64 image under
``torch.no_grad()`` with the model in eval mode (``[0/0] inference``); then a training step
(``model.train()``, same 1x3x64x64 shape, cross-entropy, SGD) that recompiles because grad mode
changed (``[0/1]`` forward and backward graphs).  Keeping the shape avoids a
dynamic-shape recompile.  ``--no-train`` skips the training step; ``--device cuda`` runs on a GPU.
"""

import argparse

import torch
import torchvision


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-train", action="store_true")
    parser.add_argument("--device", default="cpu", help="cpu (default) or cuda")
    args = parser.parse_args()

    torch.manual_seed(0)
    model = torchvision.models.resnet18(weights=None, num_classes=10).to(args.device)
    cmodel = torch.compile(model)

    model.eval()
    x = torch.randn(1, 3, 64, 64, device=args.device)
    with torch.no_grad():
        out = cmodel(x)
        ref = model(x)
    print(f"inference {tuple(out.shape)} max |compiled - eager| {(out - ref).abs().max().item():.2e}")

    if not args.no_train:
        model.train()
        opt = torch.optim.SGD(model.parameters(), lr=1e-2)
        xb = torch.randn(1, 3, 64, 64, device=args.device)
        yb = torch.randint(0, 10, (1,), device=args.device)
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(cmodel(xb), yb)
        loss.backward()
        opt.step()
        print(f"train step loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
