"""The model tests/tracer/test_fidelity.py checks: examples/real/nanogpt_train.py's GPT (nanoGPT's model.py in
style), one compiled training step (forward + lazily compiled backward), then inference behind a
graph break (Dynamo restarts the frame's analysis: ``[0/0_1]``) at two sequence lengths (a
recompile).  ``--device cuda`` runs it on a GPU."""

import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "real"))

import torch  # noqa: E402

import nanogpt_train as ng  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--device", default="cpu")
    device = p.parse_args().device
    torch.manual_seed(0)
    cfg = ng.GPTConfig()
    model = ng.GPT(cfg).to(device)
    idx = torch.randint(0, cfg.vocab_size, (4, cfg.block_size), device=device)
    logits, loss = torch.compile(model)(idx, idx)
    loss.backward()
    print(f"train loss {loss.item():.4f}")

    model.eval()

    def generate_step(idx):
        idx = idx % cfg.vocab_size
        print("graph break")  # Dynamo breaks the graph here and resumes in a new frame
        return model(idx)[0][:, -1, :].argmax(-1)

    step = torch.compile(generate_step)
    with torch.no_grad():
        for t in (8, 16):
            step(torch.randint(0, cfg.vocab_size, (2, t), device=device))


if __name__ == "__main__":
    main()
