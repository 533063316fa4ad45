"""Two compiled training steps of a tiny, randomly initialised Hugging Face GPT-2 on CPU.

Model code: ``transformers.GPT2LMHeadModel`` from Hugging Face Transformers (not written in this
repo), built from a ``GPT2Config`` with random weights (no hub download: run with
``HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1``).  The whole model is compiled with
``torch.compile(model)``; ``loss.backward()`` compiles the backward lazily and ``torch.optim.AdamW``
runs eagerly.  ``--steps N`` changes the number of steps; ``--device cuda`` runs it on a GPU;
``--size small`` uses GPT-2 small's widths (768 wide, 12 heads, 50257-token vocabulary) with 4 layers,
batch 8 x 256 tokens, for kernels of a realistic size.
"""

import argparse
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import torch
from transformers import GPT2Config, GPT2LMHeadModel


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--device", default="cpu", help="cpu (default) or cuda")
    parser.add_argument("--size", choices=["tiny", "small"], default="tiny",
                        help="tiny (default) or small (GPT-2 small widths, 4 layers, batch 8 x 256)")
    args = parser.parse_args()

    torch.manual_seed(0)
    if args.size == "small":
        config = GPT2Config(n_layer=4, n_embd=768, n_head=12, vocab_size=50257, n_positions=1024,
                            resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
        shape = (8, 256)
    else:
        config = GPT2Config(n_layer=2, n_embd=64, n_head=2, vocab_size=256, n_positions=64,
                            resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
        shape = (2, 32)
    model = GPT2LMHeadModel(config).to(args.device)
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    cmodel = torch.compile(model)

    ids = torch.randint(0, config.vocab_size, shape, device=args.device)
    for step in range(args.steps):
        opt.zero_grad(set_to_none=True)
        out = cmodel(input_ids=ids, labels=ids)
        out.loss.backward()
        opt.step()
        print(f"step {step} loss {out.loss.item():.4f}")


if __name__ == "__main__":
    main()
