"""Links on Hugging Face models against torch's own artifacts: our in-process recorder beside TORCH_COMPILE_DEBUG.

Each model (a tiny config, random weights, no download) runs a compiled training step (forward and backward) in a
process of its own with ``TORCH_COMPILE_DEBUG=1`` inside :func:`inductor_step.tracer.record.recording`, so torch
writes ``output_code.py``, ``ir_post_fusion.txt``, ``fx_graph_transformed.py`` and
``inductor_provenance_tracking_node_mappings.json`` for the very compiles recorded.  Per graph it counts the
disagreements of tests/tracer/test_fidelity.py's ``problems`` (kernels, fused groups and their order, wrapper,
buffers, buffer -> kernel links, kernel lines, fallback calls' provenance, post-grad -> Dynamo links) and three
more: every extern / fallback call of torch's ``call()`` is one of our kernels (``extern_calls``); the store of an
in-place chain computed in one call (``bufB = bufA; del bufA  # reuse``) is credited to the buffer the wrapper hands
on (``chain_store``); no buffer that a kernel stores through a pointer bound to it is said to stay in registers
(``registers``); a generated kernel's post-grad nodes are those of torch's provenance map and a buffer linked to it
has an origin node there (``kernel_provenance``, ``buffer_provenance``); a buffer's fused node is the one
``ir_post_fusion.txt`` lists it under (``fused_group``).

    python benchmarks/links_fidelity.py                       # every model, a table at the end
    python benchmarks/links_fidelity.py qwen3 phi3 --keep DIR # some models, artifacts kept in DIR

Prints one line per model (graphs, generated kernels, mismatches) and each mismatch; exits 1 when any is found,
2 on bad input.  CPU, any torch from 2.11.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _models() -> dict:
    """name -> () -> (model, inputs dict) in training mode, sized to compile in well under a minute."""
    import torch  # noqa: PLC0415
    import transformers as tf  # noqa: PLC0415

    def lm(cfg_cls, model_cls, odd=False, **kw):
        # odd: sizes no multiple of the vector width (vectorized loops with tails), two layers, dropout,
        # transformers' default attention (SDPA)
        def build():
            size = dict(hidden_size=40, intermediate_size=72, num_hidden_layers=2, seq=7) if odd else \
                dict(hidden_size=32, intermediate_size=64, num_hidden_layers=1, seq=8)
            seq = size.pop("seq")
            cfg = cfg_cls(vocab_size=64, num_attention_heads=2, max_position_embeddings=64, use_cache=False,
                          **size, **kw)
            if not odd:
                cfg._attn_implementation = "eager"
            ids = torch.randint(0, 64, (2, seq))
            return model_cls(cfg), {"input_ids": ids, "labels": ids}
        return build

    def vit_odd():
        cfg = tf.ViTConfig(image_size=24, patch_size=8, num_channels=3, hidden_size=40, num_hidden_layers=2,
                           num_attention_heads=2, intermediate_size=72, num_labels=3, hidden_dropout_prob=0.1,
                           attention_probs_dropout_prob=0.1)
        return tf.ViTForImageClassification(cfg), {"pixel_values": torch.randn(2, 3, 24, 24),
                                                   "labels": torch.tensor([0, 2])}

    def vit():
        cfg = tf.ViTConfig(image_size=16, patch_size=8, num_channels=3, hidden_size=32, num_hidden_layers=1,
                           num_attention_heads=2, intermediate_size=64, num_labels=3)
        cfg._attn_implementation = "eager"
        return tf.ViTForImageClassification(cfg), {"pixel_values": torch.randn(2, 3, 16, 16),
                                                   "labels": torch.tensor([0, 2])}

    def swin():
        cfg = tf.SwinConfig(image_size=32, patch_size=4, num_channels=3, embed_dim=16, depths=[1, 1],
                            num_heads=[1, 2], window_size=4, num_labels=3)
        return tf.SwinForImageClassification(cfg), {"pixel_values": torch.randn(2, 3, 32, 32),
                                                    "labels": torch.tensor([0, 2])}

    def deberta():
        cfg = tf.DebertaV2Config(vocab_size=64, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                                 intermediate_size=64, max_position_embeddings=64, num_labels=3,
                                 relative_attention=True, pos_att_type=["p2c", "c2p"], position_buckets=8)
        return tf.DebertaV2ForSequenceClassification(cfg), {"input_ids": torch.randint(0, 64, (2, 8)),
                                                            "labels": torch.tensor([0, 2])}

    def wav2vec2():
        cfg = tf.Wav2Vec2Config(vocab_size=16, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                                intermediate_size=64, conv_dim=(16, 16), conv_stride=(5, 2), conv_kernel=(10, 3),
                                num_conv_pos_embeddings=8, num_conv_pos_embedding_groups=2,
                                mask_time_prob=0.0, ctc_loss_reduction="mean", pad_token_id=0)
        cfg._attn_implementation = "eager"
        return tf.Wav2Vec2ForCTC(cfg), {"input_values": torch.randn(2, 400),
                                        "labels": torch.randint(1, 16, (2, 5))}

    def efficientnet():
        cfg = tf.EfficientNetConfig(image_size=32, width_coefficient=0.25, depth_coefficient=0.2, hidden_dim=320,
                                    num_labels=3, dropout_rate=0.1, drop_connect_rate=0.0)
        return tf.EfficientNetForImageClassification(cfg), {"pixel_values": torch.randn(2, 3, 32, 32),
                                                            "labels": torch.tensor([0, 2])}

    return {
        "efficientnet": efficientnet,
        "qwen3": lm(tf.Qwen3Config, tf.Qwen3ForCausalLM, num_key_value_heads=1, head_dim=16),
        "phi3": lm(tf.Phi3Config, tf.Phi3ForCausalLM, num_key_value_heads=1, pad_token_id=0),
        "gpt_neox": lm(tf.GPTNeoXConfig, tf.GPTNeoXForCausalLM),
        "vit": vit,
        "deberta_v2": deberta,
        "swin": swin,
        "wav2vec2": wav2vec2,
        "qwen3_odd": lm(tf.Qwen3Config, tf.Qwen3ForCausalLM, odd=True, num_key_value_heads=1, head_dim=20,
                        attention_dropout=0.1),
        "phi3_odd": lm(tf.Phi3Config, tf.Phi3ForCausalLM, odd=True, num_key_value_heads=1, pad_token_id=0,
                       resid_pdrop=0.1, embd_pdrop=0.1, attention_dropout=0.1),
        "vit_odd": vit_odd,
    }


# NAME_dyn (any model): compiled with dynamic=True (symbolic sizes in the kernels and the wrapper)
MODELS = ["qwen3", "phi3", "gpt_neox", "vit", "deberta_v2", "swin", "wav2vec2", "qwen3_odd", "phi3_odd", "vit_odd",
          "gpt_neox_dyn", "qwen3_dyn", "efficientnet"]


# ----------------------------------------------------------------------------- the extra checks

_STORE = r"(?:\.store\(|\bstore\(|atomic_\w*(?:<[^>]*>)?\(&?)\s*{p}\b|\b{p}\[[^\]]*\]\s*=[^=]"


def _extern_calls(cg: dict, tg) -> list[str]:
    """Extern / fallback calls in torch's ``call()`` (``extern_kernels.mm(``, ``torch.ops.aten.X.default(``)
    that are not among our kernels, by name and count."""
    body = tg.output_code[tg.output_code.find("def call("):]
    theirs: dict[str, int] = {}
    for m in re.finditer(r"^\s*(?:\w+ = )?((?:extern_kernels|torch\.ops\.\w+)\.[\w.]+)\(", body, re.M):
        theirs[m.group(1)] = theirs.get(m.group(1), 0) + 1
    ours: dict[str, int] = {}
    for k in cg["kernels"]:
        if k["backend"] == "extern":
            base = k["name"].split("#")[0]
            ours[base] = ours.get(base, 0) + 1
    return [f"{n}: torch {c}, ours {ours.get(n, 0)}" for n, c in sorted(theirs.items()) if ours.get(n, 0) != c]


def _store_credit(cg: dict, tg) -> tuple[list[str], list[str]]:
    """(chain_store, registers) mismatches of one graph.  For each generated-kernel call, each buffer bound to
    an ``out_ptr``/``in_out_ptr`` the kernel stores through: the store lines belong to that buffer (an
    ``in_out_ptr`` handed a chain's last buffer stores it, the earlier ones keep C++ aliases where they are
    stored), and the buffer is never said to stay in registers."""
    from test_fidelity import _params  # noqa: PLC0415

    links = cg["links"]["buffers"]
    chain_store, registers = [], []
    pred = tg.pred  # bufB = bufA (or reinterpret_tensor(bufA, ...)); del bufA  # reuse
    for name, src in tg.kernels.items():
        params = _params(src)
        lines = src.split("\n")
        aliased = set(re.findall(r"^\s*auto \w+ = (\w+);", src, re.M))
        for ci, args in enumerate(tg.calls(name)):
            for p, a in zip(params, args):
                if not (p.startswith("out_ptr") or p.startswith("in_out_ptr")) or not re.fullmatch(r"buf\d+", a):
                    continue
                b = links.get(a)
                if b is None or (b.get("call", {}).get("kernel") == name and b["call"].get("index", 0) != ci):
                    continue
                stores = [i + 1 for i, t in enumerate(lines) if re.search(_STORE.format(p=re.escape(p)), t)]
                if not stores:
                    continue
                if any("registers" in n for n in b["notes"]):
                    registers.append(f"{a} {name}: stored through {p} (line {stores[-1]}), said to stay in registers")
                own = {n for s, e in b["kernel_lines"].get(name) or [] for n in range(s, e + 1)}
                # an in_out pointer the source aliases (auto out_ptr2 = in_out_ptr0;) also stores the chain's
                # earlier buffers: its last store is the handed-on buffer's
                last = stores[-1] if p in aliased or a in pred else None
                want = [last] if last else stores
                # a buffer mutated in the same call (Inductor's bufB.mutations = ['bufA']) through the same
                # pointer: the mutation's store comes last and is bufB's
                mutators = [m for m, t in tg.mutates.items() if t == a and m in links and name in links[m]["kernels"]]
                if mutators:
                    own = {n for s, e in links[mutators[-1]]["kernel_lines"].get(name) or [] for n in range(s, e + 1)}
                    want = [stores[-1]]
                    a = mutators[-1]
                if not set(want) <= own:
                    chain_store.append(f"{a} {name}:{sorted(set(want) - own)} ({p}) not credited, ours {sorted(own)}")
    return chain_store, registers


def _provenance(cg: dict, tg) -> tuple[list[str], list[str]]:
    """(kernel_provenance, buffer_provenance) mismatches of one graph against torch's provenance map
    (``inductor_provenance_tracking_node_mappings.json``, kernel handle -> post-grad nodes): a generated kernel's
    post-grad nodes are torch's for its handles; a buffer linked to a generated kernel has an origin node torch
    puts in that kernel.  Nothing where torch wrote no kernel entries (a lazily compiled backward)."""
    if not tg.provenance:
        return [], []
    theirs: dict[str, set[str]] = {}
    # only the handles this wrapper writes (torch's map of a dynamic backward also holds a handle of an earlier
    # codegen of a kernel with the same name: cpp_fused_clone_transpose_view_4:9 beside :28)
    written = set(re.findall(r"# \[Provenance debug handles\] ([\w.]+:\d+)", tg.output_code))
    for key, nodes in tg.provenance.items():
        if key in written:
            theirs.setdefault(key.rsplit(":", 1)[0], set()).update(nodes)
    links = cg["links"]
    kp = [f"{k}: ours {sorted(set(e['post_grad_nodes']) - theirs[k])} not torch's, torch's "
          f"{sorted(theirs[k] - set(e['post_grad_nodes']))} not ours"
          for k, e in links["kernels"].items()
          if k in tg.kernels and k in theirs and set(e["post_grad_nodes"]) != theirs[k]]
    bp = [f"{b} -> {k}: none of {d['fx_nodes']} in torch's {sorted(theirs[k])[:6]}"
          for b, d in links["buffers"].items() for k in d["kernels"]
          if k in tg.kernels and k in theirs and not set(d["fx_nodes"]) & theirs[k]]
    return kp, bp


# ----------------------------------------------------------------------------- one model, in this process

def run_one(model: str, out: str, again: bool = False) -> dict:
    """Record ``model``'s training step into ``out`` and compare with torch's artifacts there; the result as
    written to ``out/result.json``: {"graphs": {graph: {check: [mismatch]}}, "kernels": n, "seconds": s}.
    ``again``: compare the recording already in ``out`` (after a change to the links or the checks)."""
    sys.path[:0] = [os.path.join(ROOT, "tests", "tracer")]
    import torch  # noqa: PLC0415

    from inductor_step.session.format import read_session  # noqa: PLC0415
    from inductor_step.tracer.record import recording  # noqa: PLC0415
    from test_fidelity import compare, torch_graphs  # noqa: PLC0415

    path = os.path.join(out, "session.jsonl")
    seconds = None
    if not again:
        torch.manual_seed(0)
        dynamic = model.endswith("_dyn")
        m, inputs = _models()[model.removesuffix("_dyn")]()
        m.train()
        t0 = time.monotonic()
        with recording(path, label=f"links_fidelity:{model}"):
            loss = torch.compile(m, dynamic=dynamic or None)(**inputs).loss
            loss.backward()
        seconds = round(time.monotonic() - t0, 1)
    else:
        seconds = json.load(open(os.path.join(out, "result.json"))).get("seconds")
    session = list(read_session(path))
    debug = os.path.join(out, "torch_compile_debug")
    result = compare(session, debug)
    tgs = torch_graphs(debug)
    kernels = 0
    for msg in session:
        if msg.get("type") != "stop" or msg["stage"] != "codegen":
            continue
        key = f"{msg['compile_id']} {msg['graph_kind']}"
        tg = next((t for t in tgs if t.output_code == msg["wrapper"]), None)
        if tg is None:
            continue
        kernels += len(tg.kernels)
        result[key]["extern_calls"] = _extern_calls(msg, tg)
        result[key]["chain_store"], result[key]["registers"] = _store_credit(msg, tg)
        result[key]["kernel_provenance"], result[key]["buffer_provenance"] = _provenance(msg, tg)
        # each buffer's fused node is the top-level scheduler node ir_post_fusion.txt lists it under
        bufs = msg["links"]["buffers"]
        result[key]["fused_group"] = [f"{b}: ours {bufs[b]['fused_node']}, torch's {g}" for b, g in tg.group_of.items()
                                      if b in bufs and bufs[b]["fused_node"] != g]
    res = {"graphs": result, "kernels": kernels, "seconds": seconds, "torch": torch.__version__}
    with open(os.path.join(out, "result.json"), "w") as f:
        json.dump(res, f, indent=1)
    return res


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("models", nargs="*", default=MODELS, help=f"of {', '.join(MODELS)}")
    p.add_argument("--keep", help="folder for the recordings and torch's artifacts (default: a temporary one)")
    p.add_argument("--again", action="store_true", help="compare the recordings already in --keep, recording nothing")
    p.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    bad = [m for m in a.models if m not in MODELS and m.removesuffix("_dyn") not in MODELS]
    if bad:
        print(f"links_fidelity: unknown model(s) {', '.join(bad)}; choose from {', '.join(MODELS)}", file=sys.stderr)
        return 2
    if a.again and not a.keep:
        print("links_fidelity: --again needs --keep DIR (the folder of an earlier run)", file=sys.stderr)
        return 2
    if a.one:
        run_one(a.models[0], a.keep, a.again)
        return 0
    root = a.keep or tempfile.mkdtemp(prefix="links_fidelity_")
    total = 0
    rows = []
    for model in a.models:
        out = os.path.join(root, model)
        os.makedirs(out, exist_ok=True)
        env = dict(os.environ, TORCH_COMPILE_DEBUG="1", TORCH_COMPILE_DEBUG_DIR=out,
                   HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
        r = subprocess.run([sys.executable, os.path.abspath(__file__), "--one", "--keep", out, model]
                           + (["--again"] if a.again else []),
                           env=env, capture_output=True, text=True)
        if r.returncode != 0:
            print(f"{model}: failed (exit {r.returncode})\n{r.stderr[-3000:]}")
            total += 1
            continue
        res = json.load(open(os.path.join(out, "result.json")))
        n = sum(len(v) for g in res["graphs"].values() for v in g.values())
        total += n
        rows.append((model, len(res["graphs"]), res["kernels"], n, res["seconds"]))
        for g, checks in res["graphs"].items():
            for check, items in checks.items():
                for item in items:
                    print(f"  {model} {g} {check}: {item}")
    print(f"{'model':12} {'graphs':>6} {'kernels':>7} {'mismatches':>10} {'compile s':>9}   (artifacts in {root})")
    for row in rows:
        print(f"{row[0]:12} {row[1]:6d} {row[2]:7d} {row[3]:10d} {row[4] or 0:9.1f}")
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
