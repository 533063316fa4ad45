"""Compiled inference, then one compiled training step, of torchvision's ResNet-18 on CPU.

Model code: ``torchvision.models.resnet18(weights=None)`` from torchvision (not written in this
repo), randomly initialised (no weight download).  Inference on a 1x3x64x64 image under
``torch.no_grad()`` with the model in eval mode (``[0/0] inference``); then a training step
(``model.train()``, same 1x3x64x64 shape, cross-entropy, SGD) that recompiles because grad mode
changed (``[0/1]`` forward and backward graphs).  Keeping the shape avoids a
dynamic-shape recompile.  ``--no-train`` skips the training step; ``--device cuda`` runs on a GPU;
``--steps N`` runs N inference batches and N training steps; ``--size small`` uses 32 x 3 x 224 x 224.
"""

import argparse

import torch
import torchvision


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-train", action="store_true")
    parser.add_argument("--device", default="cpu", help="cpu (default) or cuda")
    parser.add_argument("--steps", type=int, default=1, help="inference batches and training steps (default 1)")
    parser.add_argument("--size", choices=["tiny", "small"], default="tiny",
                        help="tiny (default: 1 x 3 x 64 x 64) or small (32 x 3 x 224 x 224)")
    args = parser.parse_args()
    shape = (32, 3, 224, 224) if args.size == "small" else (1, 3, 64, 64)

    torch.manual_seed(0)
    model = torchvision.models.resnet18(weights=None, num_classes=10).to(args.device)
    cmodel = torch.compile(model)

    model.eval()
    x = torch.randn(shape, device=args.device)
    with torch.no_grad():
        for _ in range(args.steps):
            out = cmodel(x)
        ref = model(x)
    print(f"inference {tuple(out.shape)} max |compiled - eager| {(out - ref).abs().max().item():.2e}")

    if not args.no_train:
        model.train()
        opt = torch.optim.SGD(model.parameters(), lr=1e-2)
        xb = torch.randn(shape, device=args.device)
        yb = torch.randint(0, 10, (shape[0],), device=args.device)
        for _ in range(args.steps):
            opt.zero_grad()
            loss = torch.nn.functional.cross_entropy(cmodel(xb), yb)
            loss.backward()
            opt.step()
        print(f"train step loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
