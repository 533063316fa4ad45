"""Real models on CUDA, at the sizes of the November 2026 GPU check: ``python benchmarks/real_gpu_models.py MODEL [--steps N]``.

* ``gpt2``: Hugging Face ``GPT2LMHeadModel(GPT2Config(n_layer=4, n_head=8, n_embd=512, vocab_size=8192,
  n_positions=256))`` with GPT-2's default dropouts (so attention runs with dropout), AdamW, batch 8 x 256
  tokens (``input_ids=ids, labels=ids``).  Timing its ``[1/0] backward`` killed the agent with SIGSEGV
  (efficient-attention backward fed a CUDA philox seed; see tracer.timing.harness._use_script_inputs).
* ``nanogpt``: examples/real/nanogpt_train.py's GPT, 4 layers, 512 wide, 8 heads, batch 8 x 256 tokens, AdamW,
  gradient clipping.
* ``llama``: Hugging Face ``LlamaForCausalLM`` inference, 1024 wide, 4 layers, 16 heads / 4 KV heads, 4 x 256 tokens.
* ``resnet``: torchvision ResNet-18 (10 classes), batch 32 x 3 x 224 x 224, channels-last: inference under
  ``torch.no_grad()`` (the max-pool kernel once read at 149% of peak bandwidth), then SGD training.

Each model runs ``--steps`` iterations (default 12: the agent profiles the script's calls 2-11 of each
graph).  Random weights and data, no hub download.
"""

import argparse
import os
import sys

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def gpt2(steps: int, device: str) -> None:
    from transformers import GPT2Config, GPT2LMHeadModel

    model = GPT2LMHeadModel(GPT2Config(n_layer=4, n_head=8, n_embd=512, vocab_size=8192, n_positions=256)).to(device)
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    cmodel = torch.compile(model)
    ids = torch.randint(0, 8192, (8, 256), device=device)
    for step in range(steps):
        opt.zero_grad(set_to_none=True)
        out = cmodel(input_ids=ids, labels=ids)
        out.loss.backward()
        opt.step()
    print(f"gpt2 loss {out.loss.item():.4f}")


def nanogpt(steps: int, device: str) -> None:
    sys.path.insert(0, os.path.join(ROOT, "examples", "real"))
    from nanogpt_train import GPT, GPTConfig

    model = GPT(GPTConfig(block_size=256, vocab_size=8192, n_layer=4, n_head=8, n_embd=512)).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=6e-4, betas=(0.9, 0.95), weight_decay=0.1)
    cmodel = torch.compile(model)
    x = torch.randint(0, 8192, (8, 256), device=device)
    y = torch.randint(0, 8192, (8, 256), device=device)
    model.train()
    for _ in range(steps):
        _, loss = cmodel(x, y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
    print(f"nanogpt loss {loss.item():.4f}")


def llama(steps: int, device: str) -> None:
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(vocab_size=32000, hidden_size=1024, intermediate_size=2816, num_hidden_layers=4,
                         num_attention_heads=16, num_key_value_heads=4, max_position_embeddings=1024)
    model = LlamaForCausalLM(config).to(device).eval()
    cmodel = torch.compile(model)
    ids = torch.randint(0, 32000, (4, 256), device=device)
    with torch.no_grad():
        for _ in range(steps):
            logits = cmodel(input_ids=ids).logits
    print(f"llama logits {tuple(logits.shape)}")


def resnet(steps: int, device: str) -> None:
    import torchvision

    model = torchvision.models.resnet18(weights=None, num_classes=10).to(device).to(memory_format=torch.channels_last)
    cmodel = torch.compile(model)
    x = torch.randn(32, 3, 224, 224, device=device).to(memory_format=torch.channels_last)
    model.eval()
    with torch.no_grad():
        for _ in range(steps):
            out = cmodel(x)
    model.train()
    opt = torch.optim.SGD(model.parameters(), lr=1e-2)
    y = torch.randint(0, 10, (32,), device=device)
    for _ in range(steps):
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(cmodel(x), y)
        loss.backward()
        opt.step()
    print(f"resnet out {tuple(out.shape)} loss {loss.item():.4f}")


MODELS = {"gpt2": gpt2, "nanogpt": nanogpt, "llama": llama, "resnet": resnet}

if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("model", choices=list(MODELS))
    p.add_argument("--steps", type=int, default=12)
    p.add_argument("--device", default="cuda")
    a = p.parse_args()
    torch.manual_seed(0)
    MODELS[a.model](a.steps, a.device)
