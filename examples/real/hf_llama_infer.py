"""Compiled inference of a tiny, randomly initialised Hugging Face Llama on CPU.

Model code: ``transformers.LlamaForCausalLM`` from Hugging Face Transformers (not written in this
repo): RMSNorm, rotary embeddings, grouped-query attention, SwiGLU MLP.  Built from a
``LlamaConfig`` with random weights (no hub download: run with ``HF_HUB_OFFLINE=1
TRANSFORMERS_OFFLINE=1``).  One forward pass under ``torch.no_grad()`` with the KV cache off; ``--device cuda`` runs it on a GPU.
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
    args = parser.parse_args()

    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=256, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128)
    model = LlamaForCausalLM(config).to(args.device).eval()
    cmodel = torch.compile(model)

    ids = torch.randint(0, config.vocab_size, (1, 16), device=args.device)
    with torch.no_grad():
        logits = cmodel(input_ids=ids, use_cache=False).logits
        ref = model(input_ids=ids, use_cache=False).logits
    print(f"logits {tuple(logits.shape)} max |compiled - eager| {(logits - ref).abs().max().item():.2e}")


if __name__ == "__main__":
    main()
