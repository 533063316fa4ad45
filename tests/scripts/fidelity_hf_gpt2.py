"""The second model tests/tracer/test_fidelity.py checks: a tiny, randomly initialised Hugging Face
GPT-2 (``transformers.GPT2LMHeadModel``, no download), one compiled training step with explicit
``position_ids`` (transformers' mask code finds packed sequences with a ``cumsum``: an ATen fallback
on CPU), dropout with p=0 (Dynamo nodes compilation removes), SDPA attention, and transformers'
loss (``F.pad`` of the labels inside ``torch/nn/functional.py``; cross-entropy's backward)."""

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import torch  # noqa: E402
from transformers import GPT2Config, GPT2LMHeadModel  # noqa: E402


def main() -> None:
    torch.manual_seed(0)
    config = GPT2Config(n_layer=1, n_embd=32, n_head=2, vocab_size=64, n_positions=16,
                        resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, use_cache=False, loss_type="ForCausalLM")
    model = GPT2LMHeadModel(config)
    model.train()
    ids = torch.randint(0, config.vocab_size, (2, 8))
    pos = torch.arange(8).unsqueeze(0).expand(2, 8)
    out = torch.compile(model)(input_ids=ids, position_ids=pos, labels=ids)
    out.loss.backward()
    print(f"loss {out.loss.item():.4f}")


if __name__ == "__main__":
    main()
