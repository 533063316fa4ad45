"""Per-stage text of a recorded session: what the detail panes, ``report``, ``export`` and
``--headless`` print about a stop.  Plain strings from the session's dicts; no Textual, no torch.

Every function takes the messages as the stream carries them (see :mod:`inductor_step.session.format`)
and returns text; line numbers it mentions are 1-based.
"""

from __future__ import annotations

import re
from typing import Any

from inductor_step.session.format import graph_key, kind_of, with_part
from inductor_step.session.modes import how_compiled_lines, kernel_backend, symbol_line, symbols_in
from inductor_step.session.paths import code_label, short_path
from inductor_step.session.lower_text import autotune_lines, stages_lines
from inductor_step.session.run_summary_text import num, run_summary  # noqa: F401 - the run pane's summary


def fmt_ms(v: Any) -> str:
    """A time in ms with four decimals; \"-\" when it is not a number."""
    return f"{v:.4f}" if isinstance(v, (int, float)) else "-"

_OTHER_LINE_BREAKS = "\r\x0b\x0c\x1c\x1d\x1e"


def commented(text: str) -> str:
    """``text`` with ``# `` before every line (guards of a large graph are 11 MB: one replace, not
    a string per line, when the text has only ``\\n`` line breaks)."""
    if not text.isascii() or any(c in text for c in _OTHER_LINE_BREAKS):
        return "\n".join("# " + x for x in text.splitlines())
    if not text:
        return ""
    if text.endswith("\n"):
        text = text[:-1]
    return "# " + text.replace("\n", "\n# ")


def listed(xs: Any) -> str:
    """``[a, b]`` for a list, the value itself otherwise."""
    return "[" + ", ".join(map(str, xs)) + "]" if isinstance(xs, list) else str(xs)


def joined(xs: Any, n: int = 6) -> str:
    """The first ``n`` items of a list, comma-separated, with ``+K`` for the rest."""
    xs = list(xs or [])
    return ", ".join(map(str, xs[:n])) + (f" +{len(xs) - n}" if len(xs) > n else "")


def short_user_line(user_line: str | None, script_dir: str | None) -> str | None:
    """A user line (``/abs/path/model.py:171``) as the tables show it: relative to the script's
    folder, or from the installed package down (``transformers/models/bert/modeling_bert.py:177``);
    the line number is never cut (:func:`inductor_step.session.paths.short_path`)."""
    return short_path(user_line, script_dir)


# --------------------------------------------------------------------------- graph breaks, recompiles

def break_reasons(stop: dict[str, Any]) -> list[dict[str, str]]:
    """The graph breaks a Dynamo stop records (Dynamo's ``dynamo_graph_break_reason`` text), each as
    ``{"reason", "explanation", "hint", "where", "text"}``: the reason after ``Graph Break Reason:``
    (with the specific line under a generic "Encountered graph break when attempting to trace"), its
    ``Explanation:`` and ``Hint:`` lines, and the user line from "Graph break in user code at F:N"."""
    out = []
    for raw in stop.get("graph_breaks") or []:
        text = str(raw).strip()
        lines = [ln.strip() for ln in text.splitlines()]
        first = next((ln for ln in lines if ln), "")
        where = ""
        m = re.match(r"Graph break in user code at (.+:\d+)", first)
        if m:
            where = m.group(1)
        reason = first
        for i, ln in enumerate(lines):
            if ln.startswith("Graph Break Reason:"):
                reason = ln.removeprefix("Graph Break Reason:").strip()
                if reason.endswith(":"):  # generic: the specific reason is the next line
                    nxt = next((x for x in lines[i + 1:] if x), "")
                    if nxt and not nxt.startswith(("Explanation:", "Hint:")):
                        reason = nxt
                break
        hints = list(dict.fromkeys(ln.removeprefix("Hint:").strip() for ln in lines if ln.startswith("Hint:")))
        expl = list(dict.fromkeys(ln.removeprefix("Explanation:").strip() for ln in lines if ln.startswith("Explanation:")))
        out.append({"reason": reason, "hint": " ".join(hints), "explanation": " ".join(expl), "where": where,
                    "text": text})
    return out


def frames_span(ids: list[int]) -> str:
    """``frame 3`` or ``frames 0-10`` (first to last) for frame ids (``[N/0]``'s N)."""
    return f"frame {ids[0]}" if len(ids) == 1 else f"frames {ids[0]}-{ids[-1]}"


def graphless_breaks(stop: dict[str, Any] | None) -> list[tuple[dict[str, str], list[str]]]:
    """A dynamo stop's ``breaks_before`` (graph breaks in frames that gave no graph) as :func:`break_reasons` reads
    them, one per reason and user line, each with the compile ids it happened in (in Dynamo's order)."""
    got: dict[tuple[str, str], tuple[dict[str, str], list[str]]] = {}
    for b in (stop or {}).get("breaks_before") or []:
        if not isinstance(b, dict):
            continue
        r = break_reasons({"graph_breaks": [b.get("text", "")]})[0]
        _, cids = got.setdefault((r["reason"], r["where"]), (r, []))
        if b.get("compile_id") not in cids:
            cids.append(str(b.get("compile_id")))
    return list(got.values())


def after_frames_text(breaks_after: list[dict[str, str]] | None, script_dir: str | None = None) -> str:
    """One line on the frames after the session's last graph that gave none (the ``done`` message's
    ``breaks_after``, read as :func:`graphless_breaks` reads a stop's ``breaks_before``): where Dynamo broke off
    and their ops ran eagerly; "" when there are none."""
    breaks = graphless_breaks({"breaks_before": breaks_after or []})
    if not breaks:
        return ""
    ids = sorted({int(m.group(1)) for _, cids in breaks for c in cids if (m := re.match(r"\[(\d+)/", c))})
    why = "; ".join(f"{b['reason']}" + (f" at {short_path(b['where'], script_dir)}" if b["where"] else "")
                    + f" (in {', '.join(cids)})" for b, cids in breaks)
    return (f"{frames_span(ids)} after it gave no graph: Dynamo broke off there and their ops ran eagerly: "
            f"graph break: {why}")


def skipped_frames_text(stop: dict[str, Any] | None, skipped: list[int], script_dir: str | None = None) -> str:
    """One line on the frames before a graph that gave none: ``skipped`` (their ids; the session's first graph) and
    those whose graph breaks the stop carries (``breaks_before``): Dynamo broke off there, and their ops ran
    eagerly, else (no break recorded) it found no tensor op to compile; "" when there are none."""
    breaks = graphless_breaks(stop)
    if breaks:
        ids = sorted(set(skipped) | {int(m.group(1)) for _, cids in breaks for c in cids
                                     if (m := re.match(r"\[(\d+)/", c))})
        why = "; ".join(f"{b['reason']}" + (f" at {short_path(b['where'], script_dir)}" if b["where"] else "")
                        + f" (in {', '.join(cids)})" for b, cids in breaks)
        return (f"{frames_span(ids)} before it gave no graph: Dynamo broke off there and their ops ran eagerly: "
                f"graph break: {why}")
    if skipped:
        return (f"{frames_span(skipped)} before it gave no graph: Dynamo skipped them (no tensor op to compile there; "
                "they ran eagerly)")
    return ""


def graph_note(dynamo: dict[str, Any] | None, script_dir: str | None = None) -> str:
    """Why a graph exists, in full: its recompile reasons, the graph break that ended it (user line,
    reason, hint; the line shortened as :func:`inductor_step.session.paths.short_path` does with
    ``script_dir``), the break it resumes after and why Dynamo restarted the frame's analysis."""
    d = dynamo or {}
    notes = []
    if d.get("recompile_reasons"):
        notes.append("recompile: " + " ".join(str(r).strip() for r in d["recompile_reasons"]))
    for b in break_reasons(d):
        notes.append("graph break: " + b["reason"] + (f" at {short_path(b['where'], script_dir)}" if b["where"] else "")
                     + (f" (hint: {b['hint']})" if b["hint"] else ""))
    if d.get("resume"):
        notes.append(f"resumes after a graph break ({d['resume']})")
    if d.get("restart_reasons"):  # Dynamo restarted the frame's analysis: torch names the compile [0/0_1]
        which = f" ({d['trace_id']})" if d.get("trace_id") else ""
        notes.append(f"Dynamo restarted this frame's analysis{which}: "
                     + " / ".join(str(r).strip().split("\n")[0] for r in d["restart_reasons"]))
    return "; ".join(notes)


# --------------------------------------------------------------------------- the stages

def _kind(msg: dict[str, Any]) -> str:
    """A message's graph kind with its part and subgraph (``"forward #2"``, ``"inference › true_graph_0"``,
    protocol.graph_key)."""
    return kind_of(msg)


def dynamo_text(stop: dict[str, Any], guards: str | None, guards_commented: str = "") -> str:
    """Pane 1's code: the Dynamo FX graph's code with its compile's why (note, resume, recompile
    reasons, each graph break in full) above and the guards (``dynamo_cpp_guards_str``) below."""
    g = stop.get("graph") or {}
    head = [f"# Dynamo FX graph {stop['compile_id']} ({_kind(stop)})"]
    head += how_compiled_lines(stop)  # mode, options, config, dynamic symbols
    if stop.get("note"):
        head.append(f"# {stop['note']}")
    if stop.get("resume"):
        head.append(f"# this frame resumes after a graph break: {stop['resume']}")
    for r in stop.get("recompile_reasons") or []:
        head.append("# recompile reason: " + str(r).replace("\n", " "))
    for b in break_reasons(stop):
        head.append(f"# graph break: Dynamo ended this graph here: {b['reason']}")
        if b["explanation"]:
            head.append(f"#   explanation: {b['explanation']}")
        if b["hint"]:
            head.append(f"#   hint: {b['hint']}")
        if b["where"]:
            head.append(f"#   user code: {b['where']}")
    if g.get("unavailable"):
        head.append(f"# {g['unavailable']}")
    body = g.get("code") or ""
    tail = ("\n\n# ---- guards (dynamo_cpp_guards_str) ----\n" + (guards_commented or commented(guards))) if guards \
        else "\n\n# guards arrive once the backend compile finishes"
    return "\n".join(head) + "\n\n" + body + tail


def aot_text(stop: dict[str, Any], symbols: list[dict[str, Any]] | None = None) -> str:
    """Pane 2's code: each AOT graph (``aot_*_graph``), then the post-grad graph Inductor lowers; above
    them, with ``symbols`` (the graph's dynamo stop's), what each dynamic symbol stands for."""
    pg = stop.get("post_grad") or {}
    parts = []
    if symbols:
        parts.append("\n".join(["# dynamic symbols (ShapeEnv: what each stands for, its range):",
                                *(f"#   {symbol_line(s)}" for s in symbols if isinstance(s, dict))]))
    for name in ("joint", "inference", "forward", "backward"):
        src = (stop.get("aot_graphs") or {}).get(name)
        if src:
            parts.append(f"# ===== AOT {name} graph (aot_{name}_graph) =====\n{src}")
    when = pg.get("when")
    label = f"post-grad graph ({_kind(stop)}, {when})" if when else \
        f"post-grad graph ({_kind(stop)}, what Inductor lowers)"
    parts.append(f"# ===== {label} =====\n{pg.get('code', pg.get('unavailable', ''))}")
    return "\n\n".join(parts)


#: the line in :func:`aot_text` where the post-grad graph starts
POST_GRAD_HEAD = re.compile(r"# ===== post-grad")


def buffer_text(b: dict[str, Any], symbols: list[dict[str, Any]] | None = None) -> str:
    """Pane 3's detail: an IR buffer's header (operation, IR type, kind, layout, origins) and IR text."""
    ir, kind = b.get("ir_type"), b.get("kind")
    what = ir if kind in (None, ir) else f"{ir} {kind}"  # an extern buffer's kind is its IR type: said once
    head = (f"# {b['name']} ({b.get('operation')}): {what}  "
            f"dtype={b.get('dtype')} device={b.get('device')} size={listed(b.get('size'))} "
            f"stride={listed(b.get('stride'))}\n"
            f"# origins (post-grad FX nodes): {', '.join(b.get('origins') or [])}\n")
    for s in symbols_in([*(b.get("size") or []), *(b.get("stride") or []), *(b.get("ranges") or []),
                         *(b.get("reduction_ranges") or [])], symbols):  # what each symbol is
        head += f"# {symbol_line(s)}\n"
    return head + "\n" + (b.get("text") or "")


def snode_text(stop: dict[str, Any], n: dict[str, Any], fusion_lines: list[int]) -> str:
    """Pane 4's detail: a scheduler node, the fusion-log lines (indices ``fusion_lines``) naming it or
    its members, and its text."""
    fusion_log = stop.get("fusion_log") or []
    counts: dict[str, int] = {}
    for i in fusion_lines:  # Inductor logs a pair again in each fusion round: once, with the count
        if i < len(fusion_log):
            counts[fusion_log[i]] = counts.get(fusion_log[i], 0) + 1
    log = [x if k == 1 else f"{x}  (logged {k} times: once per fusion round)" for x, k in counts.items()]
    before = len(stop.get("before") or [])
    order = f" ({stop['order']})" if stop.get("order") else ""
    return (f"# {n['name']}: {n.get('type')}, members {', '.join(n.get('members') or [])}\n"
            f"# {before} scheduler nodes before fusion -> {len(stop.get('after') or [])} after{order}\n"
            f"# ---- Inductor's fusion decisions involving {n['name']} ----\n"
            + ("\n".join("# " + x for x in log) if log else "# (none logged)") + "\n\n" + (n.get("text") or ""))


def body_text(b: dict[str, Any]) -> str:
    """Pane 5's detail: a scheduler node's LoopBody (``LoopBody.debug_str``)."""
    if "body" not in b:
        return f"# {b['node']}: {b.get('none', 'no LoopBody')}"
    return (f"# LoopBody of {b['node']} (in {b.get('fused_node')}), writes {', '.join(b.get('buffers') or [])}\n"
            + b["body"])


def template_note(b: dict[str, Any], ir_type: str, bodies: list[dict[str, Any]], kernel: str | None) -> tuple[str, str]:
    """(table cell, detail) for pane 5's row of a template node: a ``SchedulerNode`` whose buffer Inductor lowered to
    a template (``CppTemplateBuffer``, ``TritonTemplateBuffer``: flex attention, max-autotune's GEMMs; ``ir_type`` from
    the lowering stop) is recorded as "SchedulerNode has no LoopBody" (tracer.adapter.snapshots.loop_bodies: it has
    no ``_body``).  Its code is a filled-in template, in pane 6 (``kernel`` when codegen linked it); the nodes fused
    into it before (prologue) and after it (epilogue) in its fused node have LoopBodies, from ``bodies`` (pane 5's
    rows)."""
    node, fused = b.get("node"), b.get("fused_node")
    order = fused.split("_") if fused else []
    mates = [x for x in bodies if x.get("fused_node") == fused and x.get("node") != node and "body" in x]
    at = order.index(node) if node in order else len(order)

    def side(x: dict[str, Any]) -> str:
        return "prologue" if x.get("node") in order and order.index(x["node"]) < at else "epilogue"
    where = f"kernel {kernel}" if kernel else "its kernel, from codegen on"
    lines = [f"# {node}: a template kernel ({ir_type} {', '.join(b.get('buffers') or [])}), no LoopBody:",
             "# Inductor fills in a kernel template for it rather than a loop nest",
             f"# its code: pane 6, {where}"]
    if mates:
        lines.append("# the nodes fused into it have LoopBodies (rows of pane 5): "
                     + ", ".join(f"{x.get('node')} ({side(x)})" for x in mates))
    else:
        lines.append(f"# no epilogue or prologue node was fused into it ({fused} is this node alone)")
    return f"{ir_type}: a template, no LoopBody", "\n".join(lines)


def stop_summary(stop: dict[str, Any]) -> str:
    """One line about a stop, as ``--headless`` prints it: ``[0/0] forward  lowering  9 IR buffers``."""
    stage = stop.get("stage")
    if stage == "dynamo":
        g = stop.get("graph") or {}
        what = f"{len(g.get('nodes') or [])} FX nodes"
        if stop.get("graph_breaks"):
            what += f", {len(stop['graph_breaks'])} graph break(s)"
        if stop.get("recompile_reasons"):
            what += ", recompile"
        if stop.get("restart_reasons"):
            what += f", restarted ({stop.get('trace_id') or 'attempt ' + str(stop.get('attempt'))}): " \
                + str(stop["restart_reasons"][0]).strip().split("\n")[0]
        if stop.get("corrects"):
            what += f" (AOTAutograd compiles it as {stop.get('graph_kind')}, not {stop['corrects']})"
        if isinstance(stop.get("symbols"), list) and stop["symbols"]:
            what += ", dynamic: " + ", ".join(f"{s.get('name')}={s.get('source')}" for s in stop["symbols"][:4]) \
                + (", ..." if len(stop["symbols"]) > 4 else "")
    elif stage == "aot":
        what = (f"graphs: {', '.join(sorted((stop.get('aot_graphs') or {}).keys())) or '-'}, "
                f"post-grad {len((stop.get('post_grad') or {}).get('nodes') or [])} nodes")
    elif stage == "lowering":
        what = f"{len(stop.get('buffers') or [])} IR buffers"
    elif stage == "scheduling":
        what = f"{len(stop.get('before') or [])} scheduler nodes -> {len(stop.get('after') or [])} after fusion"
    elif stage == "loopbody":
        what = f"{sum(1 for b in stop.get('bodies') or [] if 'body' in b)} LoopBodies"
    elif stage == "codegen":
        ks = stop.get("kernels") or []
        by: dict[str, int] = {}
        for k in ks:
            by[kernel_backend(k)] = by.get(kernel_backend(k), 0) + 1
        what = f"{len(ks)} kernels (" + ", ".join(f"{n} {b}" for b, n in sorted(by.items())) + ")"
        if stop.get("autotune"):
            what += f", {len(stop['autotune'])} autotuning selection(s)"
        from inductor_step.session.gpu_modes import partition_note  # noqa: PLC0415

        if partition_note(stop.get("cudagraphs")):
            what += f"; {partition_note(stop.get('cudagraphs'))}"
    else:
        what = ""
    if stage != "dynamo" and isinstance(stop.get("unavailable"), str) and not stop.get("buffers") \
            and not stop.get("kernels") and not stop.get("after"):  # a whole stage that is not there, and why
        what = f"not available: {stop['unavailable']}"
    if stop.get("backend"):  # Dynamo handed this graph to another backend
        what += f"  (backend {stop['backend']!r}, not Inductor)"
    return f"{graph_key(stop):<20} {stage:<11} {what}"


# --------------------------------------------------------------------------- run

#: the run table's columns, in order: :func:`run_cells` gives each but "fused nodes" (the codegen stop's)
RUN_COLUMNS = ("kernel", "median ms [p20-p80]", "share", "GB/s", "% peak BW", "bound", "in graph ms", "in script ms",
               "TFLOP/s", "backend", "fused nodes")


def run_kernel_label(k: dict[str, Any]) -> str:
    """A timed kernel call's name in the run table: the kernel's, with its call where it is called again."""
    return k["name"] + (f" (call {k['call']})" if k.get("call", 1) > 1 else "")


def run_cells(k: dict[str, Any]) -> dict[str, str]:
    """The run table's cells of one timed kernel call, by column label (times in ms, bandwidth in
    GB/s and % of the session's peak, TFLOP/s), from the ``run`` message's ``kernels`` entry."""
    pct = k.get("pct_peak_bw")
    in_graph = k.get("in_graph_ms") if k.get("in_graph_ms") is not None else k.get("warm_ms")
    med = k.get("median_ms")
    return {
        "kernel": run_kernel_label(k),
        "backend": str(k.get("backend") or ""),
        "median ms [p20-p80]": (f"{med:.4f}" + (f" [{k['p20_ms']:.4f}-{k['p80_ms']:.4f}]" if k.get("p20_ms") is not None
                                                else "")) if isinstance(med, (int, float))
                               else "collective, not timed" if k.get("collective") else "not timed",
        "in graph ms": num(in_graph, ".4f")
                       + ("" if k.get("in_graph_ms") is not None or k.get("warm_ms") is None else " warm"),
        "in script ms": num(k.get("in_script_ms"), ".4f"),
        "share": f"{100 * k['share']:.1f}%" if isinstance(k.get("share"), (int, float)) else "-",
        "GB/s": num(k.get("gbps"), ".1f"),
        "% peak BW": num(pct, ".1f") + ("%" if pct is not None else "") + ("*" if (pct or 0) > 100 else ""),
        "TFLOP/s": num(k.get("tflops"), ".2f"),
        "bound": str(k.get("bound") or "-"),
    }


def run_kernel_text(k: dict[str, Any], fused: list[str] | None, gpu: bool, summary: str) -> str:
    """The run pane's detail for one timed kernel call: its full name and every number of its row,
    then the graph's summary."""
    c = run_cells(k)
    lines = [f"# {c['kernel']}  ({c['backend']})"]
    if isinstance(k.get("median_ms"), (int, float)):
        lines.append(f"median {c['median ms [p20-p80]']} ms · {c['share']} of the kernel time")
    else:  # a collective: why it has no time, and what ran in its place
        lines.append(f"{'collective' if k.get('collective') else 'kernel'}, not timed: {k.get('not_timed') or 'no time'}")
        if k.get("stand_in"):
            lines.append(f"timed the graph with a local stand-in in its place: {k['stand_in']}"
                         + (f" ({k['stand_in_ms']:.4f} ms alone)" if isinstance(k.get("stand_in_ms"), (int, float))
                            else ""))
        if gpu and isinstance(k.get("in_script_ms"), (int, float)):
            lines.append(f"in the script's own calls {k['in_script_ms']:.4f} ms: its kernels as they ran with every "
                         "rank (CUPTI), waiting for the other ranks included")
    bw = [f"{c['GB/s']} GB/s"] if c["GB/s"] != "-" else []
    bw += [f"{c['% peak BW']} of peak bandwidth"] if c["% peak BW"] != "-" else []
    bw += [f"{c['TFLOP/s']} TFLOP/s"] if c["TFLOP/s"] != "-" else []
    if c["bound"] != "-":
        bw.append(f"bound by {c['bound']}")
    if bw:
        lines.append(" · ".join(bw))
    inside = [f"in {where} {c[f'in {where} ms']} ms" for where in ("graph", "script") if gpu and c[f"in {where} ms"] != "-"]
    if inside:
        lines.append(" · ".join(inside))
    if k.get("config"):
        lines.append(f"launch config: {k['config']}")
    lines += autotune_lines(k) + stages_lines(k)  # the autotuning decision, what the kernel became
    if fused:
        lines.append(f"fused nodes: {joined(fused)}")
    return "\n".join(lines) + "\n\n" + summary


# --------------------------------------------------------------------------- linked view

def linked_info(sel: str, b: dict[str, Any], user_source: dict[str, str], loopbody: dict[str, Any] | None,
                script_dir: str | None = None, partial: str | None = None) -> str:
    """Pane 8's middle text for buffer ``sel`` (its ``links["buffers"]`` entry ``b``): FX nodes,
    scheduler and fused node, kernels with their lines, notes, the user's lines with context, and
    its LoopBody.  ``partial``: before codegen, the last stage recorded (the kernel is said to come later)."""
    fused = b.get("fused_node")
    lines = [f"# {sel}: scheduler node {b.get('scheduler_node')} "
             + (f"in {fused}" if fused else "(its fused node comes with scheduling)" if partial else "in None"),
             f"post-grad FX nodes: {', '.join(b.get('fx_nodes') or []) or '-'}",
             f"Dynamo FX nodes:    {', '.join(b.get('dynamo_nodes') or []) or '-'}"]
    if partial:
        lines.append(f"kernel:             comes with codegen (recorded up to {partial}; n continues the compile)")
    for k in b.get("kernels") or []:
        ranges = (b.get("kernel_lines") or {}).get(k) or []
        where = ", ".join(f"{a}" if a == e else f"{a}-{e}" for a, e in ranges) or "no lines of its own"
        lines.append(f"kernel {k}: lines {where}")
    for n in b.get("notes") or []:
        lines.append(f"note: {n}")
    for ul in b.get("user_lines") or []:
        lines.append(f"\n# {code_label(ul, script_dir)}")
        ctx = user_source.get(ul)
        if ctx:
            lines.append(ctx)
    if loopbody and loopbody.get("body"):
        lines.append(f"\n# LoopBody of {loopbody['node']}")
        lines.append(loopbody["body"])
    return "\n".join(lines)


# --------------------------------------------------------------------------- torch's artifact texts
# (``inductor-step export``: the stages as TORCH_TRACE-style artifact payloads)

def _unavailable(v: Any) -> str | None:
    if isinstance(v, dict) and "unavailable" in v:
        return f"(not captured: {v['unavailable']})"
    return None


def _dims(v: Any) -> str:
    if isinstance(v, list):
        return "[" + ", ".join(str(x) for x in v) + "]"
    return str(v)


def _indent(text: str, pad: str = "    ") -> str:
    return "\n".join(pad + ln if ln else ln for ln in str(text).splitlines())


def ir_buffers_text(stop: dict[str, Any]) -> str:
    """The lowering stop as text: graph inputs, then every IR buffer with its fields and Inductor's own text."""
    out: list[str] = [f"# Inductor IR after lowering: {stop.get('compile_id')} {_kind(stop)}"]
    gi = stop.get("graph_inputs")
    if isinstance(gi, list) and gi:
        out.append("\n## graph inputs")
        for g in gi:
            if isinstance(g, dict):
                out.append(f"{g.get('name')}: {g.get('dtype')} size={_dims(g.get('size'))}")
    bufs = stop.get("buffers")
    out.append("\n## buffers")
    if _unavailable(bufs):
        out.append(_unavailable(bufs))  # type: ignore[arg-type]
    for b in bufs if isinstance(bufs, list) else []:
        if not isinstance(b, dict):
            continue
        head = f"{b.get('name')} ({b.get('operation') or '-'}): {b.get('ir_type')}"
        if b.get("kind"):
            head += f" / {b.get('kind')}"
        out.append("\n" + head)
        fields = []
        for k in ("ranges", "reduction_ranges", "reduction_type", "dtype", "device", "size", "stride", "layout"):
            if b.get(k) not in (None, [], ""):
                fields.append(f"{k}={_dims(b.get(k))}")
        if fields:
            out.append("    " + " ".join(fields))
        if b.get("origins"):
            out.append("    origins: " + ", ".join(str(o) for o in b["origins"]))
        if b.get("text"):
            out.append(_indent(b["text"]))
    return "\n".join(out) + "\n"


def scheduler_text(stop: dict[str, Any], which: str) -> str:
    """A scheduling stop's ``before`` or ``after`` nodes as text (members, buffers, Inductor's text)."""
    nodes = stop.get(which)
    label = "before fusion" if which == "before" else "after fusion"
    out = [f"# scheduler nodes {label}: {stop.get('compile_id')} {_kind(stop)}"]
    if _unavailable(nodes):
        out.append(_unavailable(nodes))  # type: ignore[arg-type]
    for n in nodes if isinstance(nodes, list) else []:
        if not isinstance(n, dict):
            continue
        out.append(f"\n{n.get('name')}: {n.get('type')}")
        for k in ("members", "buffers"):
            if n.get(k):
                out.append(f"    {k}: " + ", ".join(str(x) for x in n[k]))
        for k in ("device", "group"):
            if n.get(k):
                out.append(f"    {k}: {n[k]}")
        if n.get("text"):
            out.append(_indent(n["text"]))
    return "\n".join(out) + "\n"


def fusion_text(stop: dict[str, Any]) -> str:
    """A scheduling stop's fusion log (logger ``torch._inductor.scheduler.__fusion``) as text."""
    log = stop.get("fusion_log")
    head = f"# fusion decisions (logger torch._inductor.scheduler.__fusion): {stop.get('compile_id')} {_kind(stop)}"
    if _unavailable(log):
        return head + "\n" + _unavailable(log) + "\n"  # type: ignore[operator]
    lines = [str(x) for x in log] if isinstance(log, list) else []
    return head + "\n" + ("\n".join(lines) if lines else "(none logged)") + "\n"


def loopbody_text(stop: dict[str, Any]) -> str:
    """A loopbody stop as text: each scheduler node's ``LoopBody``."""
    out = [f"# LoopBody of each scheduler node: {stop.get('compile_id')} {_kind(stop)}"]
    bodies = stop.get("bodies")
    if stop.get("none"):
        out.append(f"(none: {stop['none']})")
    if _unavailable(bodies):
        out.append(_unavailable(bodies))  # type: ignore[arg-type]
    for b in bodies if isinstance(bodies, list) else []:
        if not isinstance(b, dict):
            continue
        head = f"\n## {b.get('node')}"
        if b.get("fused_node") and b.get("fused_node") != b.get("node"):
            head += f" (in {b.get('fused_node')})"
        head += f": {b.get('type')}"
        if b.get("buffers"):
            head += " -> " + ", ".join(str(x) for x in b["buffers"])
        out.append(head)
        out.append(str(b.get("body") or ""))
    return "\n".join(out) + "\n"


def run_text(msg: dict[str, Any]) -> str:
    """A run message as the export's artifact text: graph times, then one line per kernel call."""
    out = [f"# run: {msg.get('compile_id')} {_kind(msg)} on {msg.get('device')} "
           f"({msg.get('method')}" + (f", {msg['threads']} threads" if msg.get("threads") else "") + ")"]
    out.append(f"compiled_ms {fmt_ms(msg.get('compiled_ms'))}")
    out.append(f"eager_ms {fmt_ms(msg.get('eager_ms'))}" + (f"  ({msg['eager_how']})" if msg.get("eager_how") else ""))
    from inductor_step.session.script_call import script_call_lines  # noqa: PLC0415

    out += script_call_lines(msg)
    if "decomposed_ms" in msg:  # the post-grad graph op by op, a third figure, never eager
        out.append(f"decomposed_ms {fmt_ms(msg.get('decomposed_ms'))}  (decomposed post-grad graph, op by op)")
    c, e = msg.get("compiled_ms"), msg.get("eager_ms")
    if isinstance(c, (int, float)) and isinstance(e, (int, float)) and c > 0:
        out.append(f"speedup {e / c:.2f}x")
    out.append(f"kernel_sum_ms {fmt_ms(msg.get('kernel_sum_ms'))}")
    if msg.get("kernels_note"):
        out.append(f"kernels: {msg['kernels_note']}")
    if msg.get("collectives_note"):
        out.append(f"collectives, not timed: {msg['collectives_note']}")
    ks = msg.get("kernels")
    if isinstance(ks, list) and ks:
        out.append("")
        out.append(f"{'kernel':<48} {'backend':<8} {'median_ms':>10} {'p20_ms':>10} {'p80_ms':>10} {'share':>6}")
        for k in ks:
            if not isinstance(k, dict):
                continue
            share = k.get("share")
            out.append(f"{str(k.get('name')):<48} {str(k.get('backend')):<8} {fmt_ms(k.get('median_ms')):>10} "
                       f"{fmt_ms(k.get('p20_ms')):>10} {fmt_ms(k.get('p80_ms')):>10} "
                       f"{(f'{share * 100:.0f}%' if isinstance(share, (int, float)) else '-'):>6}"
                       + (f"  collective, not timed: {k.get('not_timed')}" if k.get("collective") else ""))
    return "\n".join(out) + "\n"
