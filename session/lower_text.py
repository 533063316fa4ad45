"""The lines in the run pane's kernel detail: Triton's autotuning as a decision (each candidate config,
its benchmark time, the winner) and what the kernel became below Triton (registers, spills, global load/store
widths per the recorded SASS).  Textual-free."""

from __future__ import annotations

from typing import Any


def autotune_lines(k: dict[str, Any]) -> list[str]:
    """The candidates Triton's autotuner benchmarked for run kernel ``k`` (``autotune_candidates``), fastest
    first, the winner marked; a kernel with several configs but no record says why there is none."""
    tuned = k.get("autotune_candidates") or {}
    cands = sorted(tuned.get("candidates") or [], key=lambda c: c.get("ms") or float("inf"))
    if not cands:
        if (k.get("configs_tried") or 0) > 1:
            return [f"autotuned among {k['configs_tried']} configs; their times were not recorded (a session "
                    "recorded before inductor-step kept autotuning candidates, or the config came from Inductor's autotune cache)"]
        return []
    best = cands[0].get("ms") or 0.0
    out = [f"autotuning ({tuned.get('source') or 'Triton autotuner'}): {len(cands)} configs benchmarked"]
    for c in cands:
        ms = c.get("ms")
        rel = f" (+{100 * (ms / best - 1):.1f}%)" if ms and best and ms != best else ""
        mark = "  <- winner" if c.get("config") == tuned.get("winner") else ""
        out.append(f"  {c.get('config')}: {ms:.4f} ms{rel}{mark}" if isinstance(ms, (int, float))
                   else f"  {c.get('config')}: failed{mark}")
    return out


def stages_lines(k: dict[str, Any]) -> list[str]:
    """One line on the binary below Triton (or a C++ kernel's compiled function) from the recorded stages:
    registers, spills, and the global memory instructions by width; ``t`` in pane 6 shows them."""
    st = k.get("stages")
    if not isinstance(st, dict):
        return []
    if st.get("missing"):
        return [f"lower stages: {st['missing']}"]
    counts = ((st.get("maps") or {}).get("counts") or {})
    per = counts.get("sass") or counts.get("asm") or {}
    kinds: dict[str, int] = {}
    for d in per.values():
        for kd, n in d.items():
            if kd.startswith(("ld.global", "st.global", "local", "512-bit", "256-bit")):
                kinds[kd] = kinds.get(kd, 0) + n
    info = st.get("sass_info") or {}
    head = []
    if info.get("n_regs") is not None:
        head.append(f"{info['n_regs']} registers")
    if info.get("spill_store_bytes") is not None:
        head.append(f"{info['spill_store_bytes']} B spilled")
    mem = ", ".join(f"{kd} x{n}" for kd, n in sorted(kinds.items()))
    what = "SASS" if "sass" in counts else "asm"
    how = str(st.get("source") or "").split(" (")[0]
    where = "; ".join(x for x in (st.get("target"), how, "t in pane 6 shows it") if x)
    return [f"below: {' · '.join(head + ([f'{what} {mem}'] if mem else []))} ({where})"]
