"""Compiled inference of a tiny, randomly initialised Hugging Face Llama on CPU.

Model code: ``transformers.LlamaForCausalLM`` from Hugging Face Transformers (not written in this
repo): RMSNorm, rotary embeddings, grouped-query attention, SwiGLU MLP.  Built from a
``LlamaConfig`` with random weights (no hub download: run with ``HF_HUB_OFFLINE=1
TRANSFORMERS_OFFLINE=1``).  One forward pass under ``torch.no_grad()`` with the KV cache off (``--iters N`` for N);
``--device cuda`` runs it on a GPU; ``--size small`` uses 1024-wide layers (16 heads, 4 KV heads,
SwiGLU 2816, 32000-token vocabulary), 4 of them, on 4 x 256 tokens.
"""

import argparse
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import torch
from transformers import LlamaConfig, LlamaForCausalLM


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu", help="cpu (default) or cuda")
    parser.add_argument("--size", choices=["tiny", "small"], default="tiny",
                        help="tiny (default) or small (1024 wide, 4 layers, 4 x 256 tokens)")
    parser.add_argument("--iters", type=int, default=1, help="compiled forward passes (default 1)")
    args = parser.parse_args()

    torch.manual_seed(0)
    if args.size == "small":
        config = LlamaConfig(vocab_size=32000, hidden_size=1024, intermediate_size=2816, num_hidden_layers=4,
                             num_attention_heads=16, num_key_value_heads=4, max_position_embeddings=1024)
        shape = (4, 256)
    else:
        config = LlamaConfig(vocab_size=256, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                             num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128)
        shape = (1, 16)
    model = LlamaForCausalLM(config).to(args.device).eval()
    cmodel = torch.compile(model)

    ids = torch.randint(0, config.vocab_size, shape, device=args.device)
    with torch.no_grad():
        for _ in range(args.iters):
            logits = cmodel(input_ids=ids, use_cache=False).logits
        ref = model(input_ids=ids, use_cache=False).logits
    print(f"logits {tuple(logits.shape)} max |compiled - eager| {(logits - ref).abs().max().item():.2e}")


if __name__ == "__main__":
    main()
