"""The app's keys: one list, from which the footer, the help screen and the command palette are made.

Each binding has an ``id`` (so a user's keymap can rebind it, Textual's convention) and a
``tooltip`` holding its help text.  Order matters: the footer shows them in this order and cuts what
does not fit, so the keys a person needs first (quit, help, next) come first.
"""

from __future__ import annotations

from textual.binding import Binding

STAGE_KEYS = {"1": "dynamo", "2": "aot", "3": "lowering", "4": "scheduling", "5": "loopbody", "6": "codegen",
              "7": "run", "8": "linked", "9": "ledger", "l": "log"}

_STAGES = Binding.Group("panes", compact=True)

BINDINGS: list[Binding] = [
    Binding("q", "quit_app", "Quit", id="quit",
            tooltip="quit: ends the script's process; the session file is kept (exit status: the script's)"),
    Binding("ctrl+c", "quit_app(True)", "Quit", show=False, priority=True, id="interrupt",
            tooltip="quit at once (exit status 130, as after an interrupt); the session file is kept"),
    Binding("question_mark,f1", "help", "Help", key_display="?", id="help", tooltip="this help"),
    Binding("n,space", "next_stop", "Next", key_display="n", id="next",
            tooltip="next stop: continues the paused compile at the newest stop"),
    Binding("b", "prev_stop", "Back", id="back", tooltip="back to the previous stop (viewing only)"),
    # one binding group; the footer shows it once, as "1-9 panes" (nine keys would take a third of 80 columns)
    *[Binding(k, f"stage('{s}')", "panes" if k == "1" else (s.capitalize() if s != "aot" else "AOT"),
              show=k == "1", key_display="1-9" if k == "1" else None, group=_STAGES,
              id=f"pane-{s}", tooltip={"dynamo": "pane 1: Dynamo's FX graph, graph breaks, guards",
                                       "aot": "pane 2: the AOT graphs and the post-grad graph Inductor lowered",
                                       "lowering": "pane 3: Inductor's IR buffers",
                                       "scheduling": "pane 4: scheduler nodes after fusion; f: why (not) fused",
                                       "loopbody": "pane 5: each scheduler node's LoopBody",
                                       "codegen": "pane 6: the generated kernels in the wrapper",
                                       "run": "pane 7: run and time the kernels",
                                       "linked": "pane 8: a buffer's FX nodes, scheduler node, kernel lines, LoopBody, "
                                                 "your source line",
                                       "ledger": "pane 9: where the time goes: roofline per kernel, wasted time by "
                                                 "user line, missed fusions priced (after timing)",
                                       "log": "the script's stdout and stderr"}[s])
      for k, s in STAGE_KEYS.items()],
    Binding("0", "stage('ranks')", "Ranks", show=False, id="pane-ranks",
            tooltip="pane 0 (a torchrun job): every rank's state and stop, and whether the ranks' graphs, kernels "
                    "and kernel times agree; Enter: that rank, or the diff of two ranks' versions of a graph"),
    Binding("T", "stage('ctime')", "Compile time", show=False, id="pane-ctime",
            tooltip="pane T: where the compile's own time went: graphs, kernels and user lines ranked by compile "
                    "time, each graph's stages and cache verdicts; Enter: that graph, kernel or line"),
    Binding("M", "stage('memory')", "Memory", show=False, id="pane-memory",
            tooltip="pane M: where the bytes go: the graph's planned peak, the buffers live there (largest first), "
                    "what the forward saves for the backward; the cursor selects a buffer; Enter: pane 3 at it"),
    Binding("B", "blame", "Blame", show=False, id="blame",
            tooltip="pane B: blame: on a graph whose buffers diverge (pane e), bisect it in child processes to the "
                    "backend, subsystem and single pass or lowering that caused it (torch's compiler bisector); from "
                    "pane 7, which setting makes the graph slower (what-if variants timed round by round); the steps "
                    "and the verdict; Enter on the verdict: its FX node in pane 2; c cancels; a recompile: the sizes "
                    "made static and the lines that did it"),
    Binding("greater_than_sign", "next_rank", "Rank", key_display=">", show=False, id="next-rank",
            tooltip="a torchrun job: the next rank's recorded stops, at the same graph, stage and selection"),
    Binding("less_than_sign", "next_rank(-1)", "Rank back", key_display="<", show=False, id="prev-rank",
            tooltip="a torchrun job: the previous rank's recorded stops"),
    Binding("g", "pick_graph", "Graphs", id="graphs",
            tooltip="graph picker (compile id and kind: [0/0] forward, [0/0] backward, [1/0] …), one line each, why "
                    "the highlighted one exists below; Enter picks; g or Esc closes it"),
    Binding("d", "diff", "Diff", show=False, id="diff",
            tooltip="diff two graphs level by level: the shown one (or the one highlighted in the graph list) "
                    "against its default partner ([0/1] against [0/0], a what-if variant against its original); with "
                    "no recompile it says so and opens ctrl+p's Diff with … (any graph)"),
    Binding("slash", "search", "Find", key_display="/", id="search",
            tooltip="search the focused part of the pane (table or code); Enter: next match; Esc: close"),
    Binding("w", "what_if", "What if", show=False, id="what-if",
            tooltip="what if: recompile the shown graph with Inductor settings changed (max_autotune, ...), "
                    "time it and diff it against the original"),
    Binding("r", "run", "Run", id="run", tooltip="run and time every compiled graph and kernel; c cancels"),
    # where nothing can be timed (--open, a torchrun job) the footer leaves r out (StepApp.check_action) and r says why
    Binding("r", "run('why')", "Run", show=False, id="run-why"),
    Binding("e", "numerics", "Numerics", show=False, id="numerics",
            tooltip="numerics (pane e): compare every buffer of the shown graph with eager and float64 on the "
                    "script's own inputs; the first divergence and the first NaN first; Enter goes to that buffer"),
    Binding("c", "cancel_run", "Cancel run", show=False, id="cancel-run", tooltip="cancel a timing run"),
    Binding("f", "fusion_pair", "Fused?", show=False, id="fusion-pair",
            tooltip="pane 4: f on a node, f on another: were they fused, and why (can_fuse, live)"),
    Binding("s", "screenshot", "Shot", id="screenshot",
            tooltip="screenshot of the screen (SVG, and PNG with rsvg-convert)"),
    Binding("R", "report", "Report", id="report", tooltip="bug-report bundle: REPORT.md, screenshots, session, repro"),
    Binding("tab", "focus_next", "Focus", show=False, id="focus-next",
            tooltip="next part of the pane (table, code, graph list); the focused part is outlined"),
    Binding("shift+tab", "focus_previous", "Focus back", show=False, id="focus-previous",
            tooltip="previous part of the pane"),
]

#: keys of pane 9 (the ledger) only, bound on the pane
LEDGER_BINDINGS: list[Binding] = [
    Binding("u", "ncu", "ncu", id="ledger-ncu",
            tooltip="pane 9: ncu's speed-of-light summary of the kernel under the cursor (re-runs the script "
                    "under Nsight Compute; where ncu is missing or cannot read counters, says why)"),
]

#: keys of pane 6 (the code) only, bound on the pane
CODEGEN_BINDINGS: list[Binding] = [
    Binding("t", "triton_stage", "IR/asm", id="codegen-triton-stage",
            tooltip="pane 6: the kernel's next lower stage: Triton source -> TTIR -> TTGIR -> LLIR -> PTX -> SASS (recorded "
                    "by the run stage on a GPU, else compiled here with the installed Triton for the recorded target); "
                    "the selected buffer's lines are marked; the cursor's line says its Triton line and buffer); a C++ kernel: "
                    "source -> its compiled function's x86 asm (objdump, recorded by the run stage)"),
    Binding("x", "kernel_repro", "Repro", id="codegen-repro",
            tooltip="pane 6: write the kernel's standalone repro next to the session (Triton: rebuilds it, recorded sizes "
                    "and launch config, times it on a GPU; C++: builds it as Inductor does, times it on the CPU); it loads "
                    "the kernel's real inputs where X saved them"),
    Binding("X", "save_inputs", "Save inputs", show=False, id="codegen-save-inputs",
            tooltip="pane 6, live: save the kernel's real arguments at its launch (repros/KERNEL.inputs.pt beside the "
                    "session; the size is said) and write its repro, which loads them and checks its output"),
]

#: keys handled by the tables and code views themselves, for the help screen
MOVING = [("↑ ↓ PgUp PgDn Home End", "move in a table or code pane; a table row selects its buffer in every pane"),
          ("Enter", "pane 1: the buffer the FX node became, in pane 8 (pane 3 before codegen); "
                    "pane e: the first divergent buffer, selected in every pane (Enter on it: its kernel); "
                    "pane 7: the kernel's code in pane 6; pane 9: the kernel in pane 6, or a missed fusion's pair "
                        "in pane 4; pane T: that graph, kernel or line; graph list: pick the graph"),
          ("ctrl+p", "commands: go to a stage or graph, diff with a graph, run, report, screenshot")]


def help_rows(bindings: list[Binding]) -> list[tuple[str, str]]:
    """(keys, what they do) for the help screen, in the bindings' order."""
    rows: list[tuple[str, str]] = []
    for b in bindings:
        if b.id == "run-why":
            continue  # r's second binding: one row for r
        keys = " / ".join({"question_mark": "?", "slash": "/", "greater_than_sign": ">", "less_than_sign": "<"}.get(k, k)
                          for k in b.key.split(","))
        rows.append((keys, b.tooltip or b.description))
    return rows + [(b.key, b.tooltip or b.description) for b in LEDGER_BINDINGS + CODEGEN_BINDINGS] + MOVING
