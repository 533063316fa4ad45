"""The parts every standalone kernel repro (Triton or C++) shares: the code that loads the kernel's real arguments saved at its launch
(``<kernel>.inputs.pt`` beside the repro, tracer.save_inputs), checks them against the recorded sizes, strides and
dtypes, and after one launch compares the kernel's outputs with the ones it wrote in the model: Python source text,
pasted into each repro file (the repro imports nothing of inductor-step); the input allocator, the report lines
that end each repro, and writing the file.
"""

from __future__ import annotations

import os


def make_input_code(device: str) -> str:
    """Repro source defining ``make_input(sizes, strides, offset, dtype)``: a tensor on ``device`` ("cpu",
    "cuda") of those sizes, strides (elements) and offset, random floats or zero integers (safe indices)."""
    dev = "" if device == "cpu" else f', device="{device}"'
    return f'''

def make_input(sizes, strides, offset, dtype):
    """A {device.upper() if device == "cpu" else "GPU"} tensor of these sizes/strides/offset: random floats, zero integers (safe indices)."""
    need = offset + 1 + sum((s - 1) * st for s, st in zip(sizes, strides) if s > 0)
    if dtype.is_floating_point:
        base = torch.randn(need{dev}).to(dtype)
    else:
        base = torch.zeros(need{dev}, dtype=dtype)
    return torch.as_strided(base, sizes, strides, offset)'''


def report_code(how: str) -> str:
    """Repro source (inside ``main``, with ``info``, ``ms``, ``saved`` and ``same`` set) printing the repro's
    median against the recorded in-model median and one JSON line; ``how`` says how ``ms`` was timed."""
    return '''    ref = info["recorded"].get("median_ms")
    line = f"{info['kernel']}: repro median {ms * 1e3:.2f} us (''' + how + ''')"
    if ref:
        line += f"; recorded in-model median {ref * 1e3:.2f} us (Inductor's benchmarker), ratio {ms / ref:.3f}"
    print(line)
    print(json.dumps({"kernel": info["kernel"], "repro_ms": ms, "recorded_ms": ref,
                      "inputs": "saved" if saved else "allocated", "outputs_equal": same}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
'''


def save_repro(name: str, text: str, out_dir: str) -> str:
    """Write repro ``text`` to ``out_dir/<name>.py`` (the folder made when missing); returns the path.
    Raises OSError when it cannot be written."""
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, f"{name}.py")
    with open(path, "w") as f:
        f.write(text)
    return path

#: defines ``load_inputs(kernel, names, made, device)`` and ``check_outputs(names, args, saved)`` in the repro
CODE = r'''

def load_inputs(kernel, names, made, device):
    """``(args, line, saved)``: the kernel's real arguments saved at its launch (KERNEL.inputs.pt beside this
    file, written by inductor-step's X key or --save-inputs) when they match the recorded sizes, strides and
    dtypes of ``made`` (the allocated stand-ins); else ``made`` and one line saying why."""
    import os
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), kernel + ".inputs.pt")
    base = os.path.basename(path)
    if not os.path.exists(path):
        return made, (f"inputs: allocated (random floats, zero integers) with the recorded sizes, strides and dtypes: "
                      f"no {base} beside this file (save the real ones with X in inductor-step's pane 6, "
                      f"or --save-inputs {kernel})"), None
    saved = torch.load(path, map_location="cpu", weights_only=True)
    args = saved.get("args") or []
    if len(args) != len(names) or list(saved.get("params") or names) != list(names):
        return made, (f"inputs: allocated, NOT the saved ones: {base} holds arguments {saved.get('params')}, "
                      f"this kernel takes {list(names)}"), None
    out = []
    for name, have, want in zip(names, args, made):
        if "tensor" not in have:
            if have.get("unsaved") or (want is not None and have.get("value") != want):
                return made, (f"inputs: allocated, NOT the saved ones: {base}'s {name} is "
                              f"{have.get('value', have.get('unsaved'))}, the recording says {want}"), None
            out.append(have["value"])
            continue
        t = have["tensor"]
        got = (t["sizes"], t["strides"], t["dtype"])
        if isinstance(want, torch.Tensor):
            rec = (list(want.shape), list(want.stride()), str(want.dtype).replace("torch.", ""))
            if list(got) != list(rec):
                return made, (f"inputs: allocated, NOT the saved ones: {base}'s {name} is sizes {got[0]}, strides "
                              f"{got[1]}, {got[2]}; the recording says sizes {rec[0]}, strides {rec[1]}, {rec[2]}"), None
        out.append(torch.as_strided(t["flat"].to(device), t["sizes"], t["strides"], 0))
    size = sum(h["tensor"]["flat"].numel() * h["tensor"]["flat"].element_size() for h in args if "tensor" in h)
    return out, (f"inputs: the real ones, loaded from {base} ({size / 1e6:.3f} MB of tensors; {saved.get('how')}; "
                 f"saved with torch {saved.get('torch')})"), saved


def check_outputs(names, args, saved):
    """After one launch: each output argument against the value the kernel wrote in the model (saved with the
    inputs); prints one line and returns True (all equal bitwise), False, or None (nothing saved to compare)."""
    outs = (saved or {}).get("outputs") or {}
    if not outs:
        print("output: not compared (no saved in-model output)")
        return None
    parts, same_all = [], True
    for i, t in sorted(outs.items(), key=lambda kv: int(kv[0])):
        ref = torch.as_strided(t["flat"], t["sizes"], t["strides"], 0)
        got = args[int(i)].detach().cpu()
        if ref.is_floating_point() or ref.is_complex():
            same = torch.allclose(got.double(), ref.double(), rtol=0, atol=0, equal_nan=True) \
                if not ref.is_complex() else torch.equal(got, ref)
        else:
            same = torch.equal(got, ref)
        if same:
            parts.append(f"{names[int(i)]} equals the in-model output bitwise ({ref.numel()} elements)")
        else:
            same_all = False
            d = (got.double() - ref.double()).abs().nan_to_num(nan=float("inf")).max().item() \
                if ref.numel() and not ref.is_complex() else float("nan")
            parts.append(f"{names[int(i)]} DIFFERS from the in-model output (max abs diff {d:.3g})")
    print("output: " + "; ".join(parts))
    return same_all
'''
