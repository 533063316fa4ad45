"""What reading one output code costs (tracer.codeparse.parse_wrapper), against its size: it must grow linearly.

    python benchmarks/parse_wrapper.py [--kernels 8,16,32,64] [--lines 120] [--session FILE.jsonl]

Builds wrappers the way Inductor writes them for CPU (each kernel a ``cpp_fused_N = async_compile.cpp_pybinding(...,
'''<C++ source>''')`` of ``--lines`` lines, then ``def call(args)`` calling every kernel and an extern ``addmm``), and
times ``parse_wrapper`` on each (median of three).  Kernel sources are outside the graph's body, and the parser
blanks them (newlines kept) before it looks for calls: a line pattern that could run through that blank stretch
made the parse quadratic (timm's resnet10t, a 240 KB forward wrapper: 120 s, 2-core box; 0.16 s since).  With
``--session``, every codegen stop's recorded wrapper in a session file is timed too.  Prints seconds per wrapper,
and the growth of time against size from the smallest to the largest (1.0: linear; 2.0: quadratic).  Target: under
1.3.  Results: BENCHMARKS.md, "Session 35: reading a wrapper".
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def wrapper(kernels: int, lines: int) -> str:
    """An output code with ``kernels`` C++ kernels of ``lines`` lines each, called in turn from ``call``."""
    parts = ["from torch._inductor.codecache import AsyncCompile", "async_compile = AsyncCompile()", ""]
    for i in range(kernels):
        body = "\n".join(f"            auto tmp{j} = in_ptr0[static_cast<int64_t>(x0 + {j})];" for j in range(lines))
        parts.append(f"cpp_fused_{i} = async_compile.cpp_pybinding(['const float*', 'float*'], r'''\n"
                     f"extern \"C\"  void kernel(const float* in_ptr0, float* out_ptr0)\n{{\n{body}\n}}\n''')\n\n")
    parts.append("def call(args):\n    arg0_1, = args\n    args.clear()")
    parts.append("    buf0 = empty_strided_cpu((32, 256), (256, 1), torch.float32)")
    parts.append("    extern_kernels.addmm(arg0_1, arg0_1, arg0_1, alpha=1, beta=1, out=buf0)")
    for i in range(kernels):
        parts.append(f"    buf{i + 1} = empty_strided_cpu((32, 256), (256, 1), torch.float32)")
        parts.append(f"    cpp_fused_{i}(buf{i}, buf{i + 1})")
    parts.append(f"    return (buf{kernels}, )\n")
    return "\n".join(parts)


def seconds(text: str) -> float:
    """Median of three ``parse_wrapper(text)`` times, in s."""
    from inductor_step.tracer.codeparse import parse_wrapper  # noqa: PLC0415

    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        parse_wrapper(text)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--kernels", default="8,16,32,64")
    p.add_argument("--lines", type=int, default=120)
    p.add_argument("--session", help="also every codegen stop's wrapper in this session file")
    a = p.parse_args()
    sys.path.insert(0, os.path.dirname(ROOT))
    sizes = []
    for n in (int(x) for x in a.kernels.split(",")):
        text = wrapper(n, a.lines)
        s = seconds(text)
        sizes.append((len(text), s))
        print(f"{n:4d} kernels, {len(text) / 1e3:8.1f} KB: {s:.4f} s")
    (n0, s0), (n1, s1) = sizes[0], sizes[-1]
    growth = math.log(s1 / s0) / math.log(n1 / n0) if s0 > 0 and n1 > n0 else float("nan")
    print(f"growth of time against size: {growth:.2f} (1.0 linear, 2.0 quadratic)")
    if a.session:
        from inductor_step.session.format import read_session  # noqa: PLC0415

        for m in read_session(a.session):
            if m.get("type") == "stop" and m.get("stage") == "codegen" and m.get("wrapper"):
                print(f"{m['compile_id']} {m['graph_kind']}: {len(m['wrapper']) / 1e3:.1f} KB, {seconds(m['wrapper']):.4f} s")


if __name__ == "__main__":
    main()
