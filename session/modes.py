"""How a graph was compiled, as text: torch.compile's arguments, non-default Inductor config, dynamic symbols, templates and autotuning choices; no Textual, no torch."""

from __future__ import annotations

import re
from typing import Any, Sequence


def _value(v: Any) -> str:
    return repr(v) if isinstance(v, str) else str(v)


def settings_text(d: dict[str, Any] | None) -> str:
    """``{"max_autotune": True}`` -> ``"max_autotune=True"`` (sorted, comma-separated)."""
    return ", ".join(f"{k}={_value(v)}" for k, v in sorted((d or {}).items()))


def compile_call(cw: dict[str, Any] | None) -> str:
    """One line saying how the graph was asked for: ``torch.compile(mode='max-autotune', dynamic=None,
    fullgraph=False), backend inductor`` (from the dynamo stop's ``compiled_with``)."""
    if not isinstance(cw, dict):
        return "not recorded (a session from)"
    if cw.get("unavailable"):
        return str(cw["unavailable"])
    if cw.get("note"):  # not through torch.compile: its arguments are not known
        return (f"backend {cw['backend']}: " if cw.get("backend") else "") + str(cw["note"]) + \
            (f"; fullgraph={cw['fullgraph']}" if cw.get("fullgraph") is not None else "")
    args = [f"mode={_value(cw.get('mode'))}"]
    if cw.get("options"):
        args.append(f"options={{{settings_text(cw['options'])}}}")
    args += [f"dynamic={cw.get('dynamic')}", f"fullgraph={cw.get('fullgraph')}"]
    return f"torch.compile({', '.join(args)}), backend {cw.get('backend') or '?'}"


def config_text(cw: dict[str, Any] | None) -> str:
    """The Inductor settings that differed from default for the compile, in words."""
    if not isinstance(cw, dict) or cw.get("unavailable"):
        return "not recorded"
    if cw.get("config_unavailable"):
        return str(cw["config_unavailable"])
    cfg = cw.get("config") or {}
    return settings_text(cfg) if cfg else "all at their defaults"


def symbol_line(s: dict[str, Any]) -> str:
    """``s27 = L['x'].size()[1]  range [2, int_oo]  (5 at this compile; also L['w'].size()[0])``."""
    src = s.get("source") or "(no source: an unbacked or derived symbol)"
    text = f"{s.get('name')} = {src}"
    if s.get("range"):
        text += f"  range [{', '.join(str(x) for x in s['range'])}]"
    notes = []
    if s.get("hint") is not None:
        notes.append(f"{s['hint']} at this compile")
    others = [x for x in s.get("sources") or [] if x != s.get("source")]
    if others:
        notes.append("also " + ", ".join(others))
    if s.get("replaced_by"):
        notes.append(f"the graphs write it as {s['replaced_by']}: a guard fixed it to that")
    return text + (f"  ({'; '.join(notes)})" if notes else "")


def symbols_in(texts: Sequence[Any], symbols: Sequence[dict[str, Any]] | None) -> list[dict[str, Any]]:
    """The symbols (a dynamo stop's ``symbols``) named as a word in any of ``texts`` (sizes, strides)."""
    if not symbols or not isinstance(symbols, list):
        return []
    words = set(re.findall(r"\b[a-z]\w*\b", " ".join(str(t) for t in texts)))
    return [s for s in symbols if isinstance(s, dict) and s.get("name") in words]


def how_compiled_lines(stop: dict[str, Any]) -> list[str]:
    """Pane 1's header lines (``# ...``) on how its graph was compiled and what each dynamic symbol is."""
    cw = stop.get("compiled_with")
    if cw is None and not stop.get("symbols"):
        return []
    lines = [f"# compiled with: {compile_call(cw)}",
             f"# Inductor config differing from default in this compile: {config_text(cw)}"]
    syms = stop.get("symbols")
    if isinstance(syms, dict) and syms.get("unavailable"):
        lines.append(f"# dynamic symbols: {syms['unavailable']}")
    elif syms:
        lines.append("# dynamic symbols (ShapeEnv: what each stands for, its range):")
        lines += [f"#   {symbol_line(s)}" for s in syms if isinstance(s, dict)]
    return lines


def kernel_backend(k: dict[str, Any]) -> str:
    """A kernel's backend column: ``cpp``, or ``cpp template`` for a template kernel."""
    b = str(k.get("backend") or "")
    return f"{b} template" if k.get("template") else b


def kernel_of_buffer(kernels: Sequence[dict[str, Any]], buffer: str | None) -> str | None:
    """The kernel that computes ``buffer`` (its ``buffers`` list holds it), or None."""
    if not buffer:
        return None
    return next((k["name"] for k in kernels if buffer in (k.get("buffers") or [])), None)


def _ms(v: Any) -> str:
    return f"{v:.4f} ms" if isinstance(v, (int, float)) else "no time"


def autotune_lines(a: dict[str, Any], kernel: str | None) -> list[str]:
    """One selection (a codegen stop's ``autotune`` entry) in words: the op and its sizes, the chosen
    kernel, then every candidate fastest first with its time, the winner marked."""
    where = f" -> {kernel}" if kernel else (f" -> {a['buffer']}" if a.get("buffer") else "")
    head = f"autotune {a.get('op')}({', '.join(a.get('input_sizes') or [])}){where}: winner {a.get('winner', '?')}"
    if a.get("note"):
        head += f" ({a['note']})"
    out = [head]
    cands = list(a.get("choices") or [])
    cands.sort(key=lambda c: (c.get("ms") is None, c.get("ms") or 0.0))
    best = min((c["ms"] for c in cands if isinstance(c.get("ms"), (int, float))), default=None)
    for c in cands:
        mark = "<- chosen" if c.get("name") == a.get("winner") else ""
        rel = f"  {best / c['ms']:.1%} of the best" if best and isinstance(c.get("ms"), (int, float)) and c["ms"] else ""
        t = _ms(c.get("ms")) if a.get("benchmarked") else "not benchmarked"
        fail = f"  {c['failed']}" if c.get("failed") else ""
        out.append(f"  {c.get('name')} [{c.get('kind')}] {t}{rel}{fail} {mark}".rstrip())
    return out


def kernel_notes(stop: dict[str, Any]) -> dict[str, list[str]]:
    """Kernel name -> the lines pane 6 shows beside it: a template kernel's template and epilogue, and
    each autotuning selection (select_algorithm's candidates, times, winner) whose winner it is."""
    kernels = stop.get("kernels") or []
    notes: dict[str, list[str]] = {}
    for k in kernels:
        if k.get("template"):
            epi = ", ".join(k.get("epilogue") or []) or "none"
            pro = f"; prologue {', '.join(k['prologue'])}" if k.get("prologue") else ""
            node = f" {k['template_node']}" if k.get("template_node") else ""
            notes.setdefault(k["name"], []).append(
                f"template kernel ({k['template']}{node}), epilogue fused into it: {epi}{pro}")
    for a in stop.get("autotune") or []:
        if not isinstance(a, dict):
            continue
        kernel = kernel_of_buffer(kernels, a.get("buffer"))
        notes.setdefault(kernel or "", []).extend(autotune_lines(a, kernel))
    return notes


def codegen_head(stop: dict[str, Any]) -> str:
    """Pane 6's lines above the wrapper when the graph has templates or autotuning (where the notes are, and any
    selection whose kernel was not found) or CUDA graphs (its partitions and what runs outside them); "" otherwise."""
    from inductor_step.session.gpu_modes import partition_note  # noqa: PLC0415

    cg = partition_note(stop.get("cudagraphs"))  # the partitions CUDA graphs capture
    notes = kernel_notes(stop)
    if not notes:
        return f"# {cg}\n\n" if cg else ""
    n_t = sum(1 for k in stop.get("kernels") or [] if k.get("template"))
    n_a = len(stop.get("autotune") or [])
    what = [f"{n_t} template kernel(s)"] if n_t else []
    what += [f"{n_a} autotuning selection(s) (Inductor's select_algorithm; times are its benchmark's, on the "
             "compile's random inputs)"] if n_a else []
    lines = [f"# {' and '.join(what)}: noted above each chosen kernel below"]
    lines += ["# " + x for x in notes.get("", [])] + ([f"# {cg}"] if cg else [])
    return "\n".join(lines) + "\n\n"


def annotate(wrapper: str, spans: dict[str, dict[str, Any]], notes: dict[str, list[str]]) -> tuple[str, list[tuple[int, int]]]:
    """The wrapper with each kernel's notes (:func:`kernel_notes`) as comments above its definition (or,
    for an extern call, its call line), and where lines went in: ``[(wrapper line, lines inserted
    before it)]`` (1-based), for :func:`shown_line` / :func:`wrapper_line`."""
    at: dict[int, list[str]] = {}
    for name, lines in notes.items():
        span = spans.get(name) or {}
        line = (span.get("def") or [None])[0] or span.get("call") or ((span.get("calls") or [None])[0])
        if name and line:
            at.setdefault(int(line), []).extend(lines)
    if not at:
        return wrapper, []
    src = wrapper.split("\n")
    out: list[str] = []
    inserts: list[tuple[int, int]] = []
    for i, text in enumerate(src, 1):
        if i in at:
            pad = text[:len(text) - len(text.lstrip())]
            out += [f"{pad}# {x}" for x in at[i]]
            inserts.append((i, len(at[i])))
        out.append(text)
    return "\n".join(out), inserts


def shown_line(line: int, inserts: list[tuple[int, int]]) -> int:
    """A wrapper line's line in :func:`annotate`'s text."""
    return line + sum(n for at, n in inserts if at <= line)


def wrapper_line(shown: int, inserts: list[tuple[int, int]]) -> int | None:
    """The wrapper line at line ``shown`` of :func:`annotate`'s text; None on a note line."""
    added = 0
    for at, n in inserts:
        if shown < at + added:
            break
        if shown < at + added + n:
            return None
        added += n
    return shown - added


def autotune_for_kernel(stop: dict[str, Any], kernel: str) -> list[dict[str, Any]]:
    """The autotuning selections whose winner is ``kernel`` of a codegen stop."""
    kernels = stop.get("kernels") or []
    return [a for a in stop.get("autotune") or []
            if isinstance(a, dict) and kernel_of_buffer(kernels, a.get("buffer")) == kernel]


def timed_sizes_line(run: dict[str, Any], symbols: Sequence[dict[str, Any]] | None = None,
                     placeholders: Sequence[dict[str, Any]] | None = None) -> str:
    """Pane 7's line on the sizes the graph was timed at (the run's ``input_sizes``, one per input of the
    graph's ``call``).  With the post-grad graph's ``placeholders`` (one per input, as the aot stop has
    them) each input is named with its symbolic size: ``s27=5`` for a size argument, ``arg3_1[s77, s27, s53]
    = 2x5x8 float32`` for a tensor; with the graph's ``symbols``, what each symbol stands for."""
    sizes = run.get("input_sizes")
    if not isinstance(sizes, list) or not sizes:
        return ""
    ph = list(placeholders or [])
    if len(ph) == len(sizes):
        parts = []
        for n, size in zip(ph, sizes):
            if n.get("value") and not n.get("shape"):
                parts.append(f"{n['value']}={size}")
            elif n.get("shape") and any(not str(d).isdigit() for d in n["shape"]):
                parts.append(f"{n.get('name')}[{', '.join(str(d) for d in n['shape'])}]={size}")
            else:
                parts.append(f"{n.get('name')} {size}")
        text = "timed at sizes: " + ", ".join(parts)
    else:
        text = "timed at sizes: " + ", ".join(str(s) for s in sizes)
    named = [f"{s['name']} = {s['source']}" for s in symbols or [] if isinstance(s, dict) and s.get("source")]
    return text + (f"  ({'; '.join(named)})" if named else "")


def compiled_with_changes(a: dict[str, Any] | None, b: dict[str, Any] | None) -> list[str]:
    """How two graphs' compiles differ (their dynamo stops' ``compiled_with``): one line per argument
    or Inductor setting that differs, ``"mode: 'default' -> 'max-autotune'"``; [] when alike."""
    if not isinstance(a, dict) or not isinstance(b, dict):
        return [] if a is None and b is None else ["how it was compiled: recorded for only one of them"]
    out = []
    for key in ("backend", "mode", "dynamic", "fullgraph"):
        if a.get(key) != b.get(key):
            out.append(f"{key}: {_value(a.get(key))} -> {_value(b.get(key))}")
    for what in ("options", "config"):
        da, db = a.get(what) or {}, b.get(what) or {}
        for k in sorted(set(da) | set(db)):
            if da.get(k) != db.get(k):
                va = _value(da[k]) if k in da else "default"
                vb = _value(db[k]) if k in db else "default"
                out.append(f"{'option' if what == 'options' else 'Inductor config'} {k}: {va} -> {vb}")
    return out


def _cell(s: Any) -> str:
    return str(s).replace("|", "\\|").replace("\n", " ")


def _one_line(s: Any, limit: int = 300) -> str:
    line = " ".join(str(s or "").split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def how_compiled_section(graphs: dict) -> list[str]:
    """The report's "How each graph was compiled" lines (``graphs``: graph key -> stage -> stop): per graph, torch.compile's arguments,
    the Inductor config that differed from default, its dynamic symbols and autotuning; [] when no graph
    recorded them (a session from)."""
    rows: list[str] = []
    extra: list[str] = []
    for key, stages in graphs.items():
        dyn = stages.get("dynamo") or {}
        if dyn.get("compiled_with") is None and not dyn.get("symbols"):
            continue
        cw = dyn.get("compiled_with")
        syms = dyn.get("symbols") if isinstance(dyn.get("symbols"), list) else []
        rows.append(f"| `{key}` | {_cell(compile_call(cw))} | {_cell(config_text(cw))} | "
                    f"{_cell('; '.join(symbol_line(s) for s in syms) or '-')} |")
        cg = stages.get("codegen") or {}
        for a in cg.get("autotune") or []:
            lines = autotune_lines(a, kernel_of_buffer(cg.get("kernels") or [], a.get("buffer")))
            extra.append(f"- `{key}` {_one_line(lines[0], 400)}")
            extra += [f"  - {_one_line(x.strip(), 300)}" for x in lines[1:]]
        for k in cg.get("kernels") or []:
            if k.get("template"):
                extra.append(f"- `{key}` `{k['name']}`: template kernel ({k['template']}), epilogue "
                             f"{', '.join(k.get('epilogue') or []) or 'none'}")
    if not rows:
        return []
    out = ["#### How each graph was compiled", "",
           "| graph | torch.compile | Inductor config differing from default | dynamic symbols |",
           "|---|---|---|---|", *rows, ""]
    if extra:
        out += ["Templates and autotuning (Inductor's select_algorithm, its benchmark times):", "", *extra, ""]
    return out
