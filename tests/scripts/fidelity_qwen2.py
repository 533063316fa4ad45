"""The second model tests/tracer/test_fidelity.py checks: a tiny, randomly initialised Hugging Face Qwen2
(``transformers.Qwen2ForCausalLM``, no download) with eager attention, one compiled training step:
transformers' mask code (a ``cumsum``: an ATen fallback on CPU), the softmax of the attention block
computed in place in one C++ kernel (exp, then the division stored over it), a dropout with p=0,
transformers' loss (``F.pad`` of the labels: a ``constant_pad_nd`` whose innermost frame is
``torch/nn/functional.py``; cross-entropy's backward builds a one-hot), and a graph break after the
model (Dynamo restarts the frame's analysis: ``[0/0_1]``).  ``--device cuda`` runs it on a GPU."""

import argparse
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import torch  # noqa: E402
from transformers import Qwen2Config, Qwen2ForCausalLM  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--device", default="cpu")
    device = p.parse_args().device
    torch.manual_seed(0)
    config = Qwen2Config(hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2,
                         num_key_value_heads=1, vocab_size=64, max_position_embeddings=32, use_cache=False)
    config._attn_implementation = "eager"
    model = Qwen2ForCausalLM(config).to(device)
    model.train()

    def step(ids):
        out = model(input_ids=ids, labels=ids)
        print("graph break")  # Dynamo restarts this frame's analysis and compiles the model up to here
        return out.loss

    loss = torch.compile(step)(torch.randint(0, config.vocab_size, (2, 8), device=device))
    loss.backward()
    print(f"loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
