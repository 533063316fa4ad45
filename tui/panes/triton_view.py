"""Pane 6's sub-views below the Triton line: ``t`` cycles the kernel's source -> TTIR -> TTGIR ->
LLIR -> PTX -> SASS (recorded live by the run stage, else compiled again here by ``inductor-step lower``
in a child process that may import Triton), the selected buffer's kernel lines marked in the stage shown,
the cursor's stage line told as kernel line, buffer, FX nodes and user line; ``x`` writes the kernel's
standalone repro; ``X`` asks the live agent to save the kernel's real arguments at its launch and then writes the
repro that loads them (tracer.save_inputs, session.saved_inputs)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from typing import Any

from inductor_step.session.code_lines import buffer_source_lines, stage_marks
from inductor_step.session.format import CMD_SAVE_INPUTS
from inductor_step.session.format.records import Record
from inductor_step.session.kernel_stages import KernelStages, lowered_stages, recorded_stages, stage_line
from inductor_step.live.children import write_repro
from inductor_step.session.saved_inputs import cannot_save, repro_dir, saved_line
from inductor_step.tui.panes.base import Detail

#: the order ``t`` cycles through
VIEWS = ("source", "ttir", "ttgir", "llir", "ptx", "sass")
CPP_VIEWS = ("source", "asm")  # a C++ kernel: its compiled function (objdump), recorded by the run stage
LABELS = {"source": "Triton source", "ttir": "TTIR", "ttgir": "TTGIR", "llir": "LLIR", "ptx": "PTX", "sass": "SASS",
          "asm": "x86 asm"}


def view_label(view: str, backend: str | None) -> str:
    """What ``t``'s view ``view`` is called for a kernel of ``backend``: a C++ kernel's source is C++, not Triton."""
    return "C++ source" if view == "source" and backend == "cpp" else LABELS[view]


def views_for(backend: str | None) -> tuple[str, ...]:
    """The views ``t`` cycles for a kernel of ``backend``: Triton's stages, or a C++ kernel's disassembly."""
    return VIEWS if backend == "triton" else CPP_VIEWS if backend == "cpp" else ("source",)



def lower_command(session_path: str, kernel: str, graph: str, out_json: str | None = None,
                  repro_dir: str | None = None, target: str | None = None, no_compile: bool = False) -> list[str]:
    """The ``inductor-step lower`` child process for one kernel (the UI never imports Triton itself)."""
    cmd = [sys.executable, "-m", "inductor_step.tracer.lower", session_path, kernel, "--graph", graph]
    if out_json:
        cmd += ["--json", out_json]
    if repro_dir:
        cmd += ["--repro", repro_dir]
    if target:
        cmd += ["--target", target]
    if no_compile:
        cmd.append("--no-compile")
    return cmd


def run_lower(session_path: str, kernel: str, graph: str) -> KernelStages:
    """Compile ``kernel`` of ``graph`` again (child process) and return its stages, or why it could not."""
    with tempfile.TemporaryDirectory(prefix="istep_ui_lower_") as d:
        out = os.path.join(d, "r.json")
        try:
            p = subprocess.run(lower_command(session_path, kernel, graph, out), capture_output=True, text=True,
                               timeout=600)
        except (OSError, subprocess.TimeoutExpired) as e:
            return KernelStages.failed(f"inductor-step lower did not run ({type(e).__name__}: {e})")
        hit = lowered_stages(json.load(open(out)) if os.path.exists(out) else [], kernel)
        if hit is None:
            said = (p.stdout.strip().splitlines() or p.stderr.strip().splitlines() or ["no output"])[-1]
            return KernelStages.failed(said)
        return hit


class TritonStages:
    """What pane 6 holds for Triton's lower stages (and a C++ kernel's asm): the stage ``t`` shows (``view``), the
    kernels lowered here, and the keys t, x, X.  The pane calls :meth:`stage_detail` and :meth:`stage_cursor` while a
    stage other than the source is shown; ``pane`` is the codegen pane (its app, code view, cursor kernel)."""

    def __init__(self, pane: Any) -> None:
        self.pane = pane
        self.view = "source"  # the stage shown, one of VIEWS or CPP_VIEWS
        #: (graph, kernel) -> its offline lowering (inductor-step lower), None while it runs
        self.lowered: dict[tuple[str, str], KernelStages | None] = {}

    @property
    def app(self) -> Any:
        return self.pane.app

    def stages_for(self, kernel: str) -> KernelStages | None:
        """The kernel's stages: recorded live by the run stage, else an offline lowering made here."""
        graph = self.app.view.graph
        got = self.lowered.get((graph, kernel))
        if got is not None:
            return got
        return recorded_stages(self.app.session.runs.get(graph), kernel)

    def _prose(self, text: str) -> Detail:
        """A one-paragraph answer wrapped at the code view's width (at 80 columns a C++ kernel's
        reason took 200 presses of Right to read)."""
        from inductor_step.session.fusion import wrapped  # noqa: PLC0415

        width = getattr(self.pane.code, "size", None)
        return Detail(wrapped(text, max(30, (width.width if width else 80) - 8)), "text")

    def stage_detail(self, kernel: str | None, source: str) -> Detail | None:
        """The stage in view for ``kernel`` with the selected buffer's kernel lines marked; None while the
        source is shown.  ``source``: the kernel's recorded source, for the header line."""
        if self.view == "source" or not kernel:
            return None
        st = self.stages_for(kernel)
        label = LABELS[self.view]
        if st is None and self.view == "asm":
            return self._prose(f"# x86 asm of {kernel}: not recorded (the run stage disassembles each C++ kernel it "
                               "times: press r, or open a session recorded with --run)")
        if st is None:
            self._lower(kernel)
            return self._prose(f"# {label} of {kernel}: compiling with the installed Triton (inductor-step lower)…")
        if st.error:
            return self._prose(f"# {label} of {kernel}: {st.error}")
        text = st.texts.get(self.view)
        if not text:
            return self._prose(f"# {label} of {kernel}: not in this recording ({st.missing or 'not produced'})")
        head = st.head(label, kernel, self.view, source)
        app = self.app
        wanted = buffer_source_lines(app.session.links(app.view.graph), app.view.selected, kernel)
        marks = stage_marks(st.lines(self.view), wanted, head.count("\n"))
        return Detail(head + text, "text", marks=marks, goto=marks[0][0] if marks else 1)

    def stage_cursor(self, kernel: str, line: int, source: str) -> tuple[str, str | None] | None:
        """What the cursor's stage line (1-based, in the shown text) came from: Triton line, buffer, FX nodes
        and user line, for the status line, and the buffer; None on the source view or an unmapped line."""
        st = self.stages_for(kernel)
        if st is None:
            return None
        graph = self.app.view.graph
        at = stage_line(st, self.view, LABELS[self.view], line, source,
                        self.app.session.line_buffers(graph).get(kernel, {}), self.app.session.links(graph))
        return (at.said, at.buffer) if at is not None else None

    def next_stage(self) -> None:
        """t: the next stage of the kernel under the cursor (lowering it in a child process if not recorded)."""
        app = self.app
        kernel = self.pane.current_kernel()
        views = views_for(kernel.backend if kernel is not None else None)
        if kernel is None or len(views) == 1:
            app.say("t: put the cursor on a Triton or C++ kernel first (a library call has no code of ours below it)")
            return
        at = views.index(self.view) if self.view in views else 0
        self.view = views[(at + 1) % len(views)]
        name = kernel.name
        app.say(f"t: {name}: {view_label(self.view, kernel.backend)}")
        self.pane.show(force=True)

    def _lower(self, name: str) -> None:
        """Compile ``name`` of the shown graph in a child process (once), then show the pane again."""
        app = self.app
        graph = app.view.graph
        lowered = self.lowered
        if (graph, name) in lowered:
            return
        if not app.session_path:
            lowered[(graph, name)] = KernelStages.failed("no session file to compile from (start with --record)")
            return
        lowered[(graph, name)] = None
        path = app.session_path

        def work() -> None:
            res = run_lower(path, name, graph)
            lowered[(graph, name)] = res

            def done() -> None:
                app.say(f"t: {name}: " + (res.error or f"compiled with Triton {res.triton} for {res.target}"))
                self.pane.show(force=True)
            app.call_from_thread(done)
        app.run_worker(work, thread=True, group="triton-lower")

    def kernel_repro(self) -> None:
        """x: write the kernel's standalone repro next to the session (child process; needs no GPU)."""
        app = self.app
        kernel = self.pane.current_kernel()
        if kernel is None or kernel.backend not in ("triton", "cpp"):
            app.say("x: put the cursor on a Triton or C++ kernel first")
            return
        if not app.session_path:
            app.say("x: no session file to write the repro from (start with --record)", "warning")
            return
        out_dir = os.path.join(os.path.dirname(os.path.abspath(app.session_path)), "repros")
        cmd = lower_command(app.session_path, kernel.name, app.view.graph, repro_dir=out_dir, no_compile=True)

        def work() -> None:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
            said = (p.stdout.strip().splitlines() or p.stderr.strip().splitlines() or ["no output"])[-1]
            app.call_from_thread(lambda: app.say(f"x: {said}"))
        app.run_worker(work, thread=True, group="triton-repro", exclusive=True)

    def save_inputs(self) -> None:
        """X: the live agent saves the kernel's real arguments at its launch (repros/KERNEL.inputs.pt beside the
        session); its ``inputs_saved`` answer then writes the repro that loads them (:meth:`inputs_saved`)."""
        app = self.app
        kernel = self.pane.current_kernel()
        if kernel is None or kernel.backend not in ("triton", "cpp"):
            app.say("X: put the cursor on a Triton or C++ kernel first")
            return
        agent = getattr(app, "agent", None)
        why = cannot_save(agent is not None, agent is not None and agent.alive)
        if why is None and not app.session_path:
            why = "inputs cannot be saved now: no session file to save them beside (start with --record)"
        if why:
            app.say(f"X: {why}", "warning")
            return
        agent.send(CMD_SAVE_INPUTS, graph=app.view.graph, kernel=kernel.name, dir=repro_dir(app.session_path))
        app.say(f"X: {kernel.name}: the agent runs {app.view.graph} once on the script's inputs and saves the "
                "kernel's arguments at its launch…")

    def inputs_saved(self, msg: Record) -> None:
        """``inputs_saved`` (after X; its InputsSaved record): say what was saved, then write the repro that loads
        it (child process)."""
        app = self.app
        app.say(f"X: {saved_line(msg)}", "warning" if msg.error else "information")
        if msg.error or not app.session_path:
            return
        from inductor_step.session.format import graph_key  # noqa: PLC0415

        path, graph, name = app.session_path, graph_key(msg), str(msg.kernel)

        def work() -> None:
            said = write_repro(path, graph, name)
            app.call_from_thread(lambda: app.say(f"X: {said}"))
        app.run_worker(work, thread=True, group="triton-repro", exclusive=True)
