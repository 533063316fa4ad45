"""``w`` / ctrl+p "What if …": recompile the shown graph with Inductor settings changed.

:class:`WhatIfScreen` is a small form: the common ``torch._inductor.config`` settings with the values
the script runs with (the session header's ``inductor_settings``), and a free field for any other
``name=value``.  On confirm the app sends the agent ``what_if`` (tracer.whatif): the agent recompiles
the graph's post-grad graph with the settings that differ, records every stage as the variant
``"[0/0] forward · max_autotune=True"``, and times the original and the variant (with numerics).
The functions below are the app's side: :func:`open_form` (the key), :func:`on_message` (the agent's
``what_if`` and ``run`` messages: the diff view of the original and the variant opens when the
variant is compiled, and again with the timings once both are timed).
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label, Static

from inductor_step.session.format import CMD_WHAT_IF, VARIANT_SEP, GraphKey, graph_key, parse_settings
from inductor_step.session.format.records import Record, as_record
from inductor_step.session.format.types import DynamoStop

#: the form's settings, in its order (the agent's list is tracer.adapter.WHAT_IF_SETTINGS)
SETTINGS = ("max_autotune", "coordinate_descent_tuning", "benchmark_fusion", "aggressive_fusion",
            "loop_ordering_after_fusion", "split_reductions", "realize_opcount_threshold",
            "triton.cudagraphs", "emulate_precision_casts")


def _text(v: Any) -> str:
    return repr(v) if isinstance(v, str) else str(v)


class WhatIfScreen(ModalScreen[dict[str, Any] | None]):
    """The form for graph ``key``; dismisses with the settings that changed (``{name: value}``) or None.

    ``current`` holds each setting's value as the script runs it; a field left at it is not sent.
    Enter recompiles (from any field), Esc cancels.  A value is a Python literal (``True``, ``4``,
    ``0.5``, ``'name'``); the free field takes ``name=value, name=value``.
    """

    BINDINGS = [Binding("escape", "cancel", "Cancel"), Binding("ctrl+s", "confirm", "Recompile", show=False)]
    DEFAULT_CSS = """
    WhatIfScreen { align: center middle; }
    WhatIfScreen > Vertical { width: 76; max-width: 95%; height: auto; max-height: 95%;
                              border: round $accent; padding: 0 1; background: $panel; }
    WhatIfScreen Horizontal { height: 1; }
    WhatIfScreen Label.name { width: 30; }
    WhatIfScreen Input, WhatIfScreen Input:focus { width: 1fr; height: 1; border: none; padding: 0 1; }
    WhatIfScreen Input:focus { background: $accent 30%; }
    WhatIfScreen #whatif-title, WhatIfScreen #whatif-help, WhatIfScreen #whatif-error { height: auto; }
    WhatIfScreen #whatif-error { color: $error; }
    """

    def __init__(self, key: str, current: dict[str, Any]):
        super().__init__()
        self.key, self.current = key, dict(current)

    def compose(self) -> ComposeResult:
        with Vertical(id="whatif-box"):
            yield Static(Text.assemble("What if: recompile ", (self.key, "bold"),
                                       " with these torch._inductor.config settings"), id="whatif-title")
            for name in SETTINGS:
                with Horizontal():
                    yield Label(name, classes="name")
                    yield Input(_text(self.current[name]) if name in self.current else "",
                                id=f"whatif-{name.replace('.', '-')}", placeholder="(not in this session's header)")
            with Horizontal():
                yield Label("other (name=value, ...)", classes="name")
                yield Input("", id="whatif-other", placeholder="max_fusion_size=1, triton.max_tiles=3")
            yield Static("Enter: recompile and time it beside the original (diff view); Esc: cancel",
                         id="whatif-help")
            yield Static("", id="whatif-error")

    def on_mount(self) -> None:
        self.query_one(f"#whatif-{SETTINGS[0]}", Input).focus()

    def settings(self) -> dict[str, Any]:
        """The settings that differ from the current values, with the free field's; raises ValueError."""
        out: dict[str, Any] = {}
        for name in SETTINGS:
            text = self.query_one(f"#whatif-{name.replace('.', '-')}", Input).value.strip()
            if not text or (name in self.current and text == _text(self.current[name])):
                continue
            out.update(parse_settings(f"{name}={text}"))
        other = self.query_one("#whatif-other", Input).value.strip()
        if other:
            out.update(parse_settings(other))
        return {k: v for k, v in out.items() if k not in self.current or v != self.current[k]}

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_confirm()

    def action_confirm(self) -> None:
        try:
            settings = self.settings()
        except ValueError as e:
            self.query_one("#whatif-error", Static).update(str(e))
            return
        if not settings:
            self.query_one("#whatif-error", Static).update("no setting differs from the current values")
            return
        self.dismiss(settings)

    def action_cancel(self) -> None:
        self.dismiss(None)


# ----------------------------------------------------------------------------- the app's side

def open_form(app: Any) -> None:
    """w: the form for the graph shown (a variant's original when a variant is shown)."""
    key = app.view.graph
    if key is None:
        app.notify("no graph yet: what if needs a compiled graph")
        return
    if app.agent is None or not app.agent.alive:
        app.notify("what if needs the live script's agent (a recorded session cannot recompile)", severity="warning")
        return
    k = GraphKey.parse(key).original
    base = str(k)

    def done(settings: dict[str, Any] | None) -> None:
        if not settings:
            return
        # a subgraph's kind goes with its path ("inference › true_graph_0"), the agent splits it
        cid, kind, part = k.compile_id, (k.kind_label if k.subgraph else k.kind), (None if k.subgraph else k.part)
        app.agent.send(CMD_WHAT_IF, compile_id=cid, graph_kind=kind, settings=settings, run=True,
                       **({"part": part} if part else {}))
        said = ", ".join(f"{k}={v}" for k, v in settings.items())
        app.session.note_run_status(f"what if: recompiling {base} with {said}…")
        app.refresh_status()

    # the settings as this graph compiled with them (its dynamo stop's compiled_with.config, which
    # holds torch.compile's mode and options), over the header's, read before the script ran
    current = dict(app.session.header.inductor_settings or {})
    stop = app.session.stop_for(base, "dynamo")
    cw = as_record(stop, DynamoStop).compiled_with if stop is not None else None
    if isinstance(cw, dict) and isinstance(cw.config, dict):
        current.update({k: v for k, v in cw.config.items() if k in current})
    app.push_screen(WhatIfScreen(base, current), done)


def on_message(app: Any, msg: Record) -> None:
    """The agent's ``what_if`` messages, and ``run`` of a variant (``msg``: a WhatIf or Run record,
    session.format.messages): say what happened; open the diff view of the original and the variant when it
    compiled, and again when both are timed."""
    from inductor_step.tui.screens.diff import DiffScreen  # noqa: PLC0415

    if msg.type == "run":
        k = GraphKey.of(msg)
        base, variant = str(k.original), k.variant
        top = app.screen
        if variant and isinstance(top, DiffScreen) and top.pair.key_b == graph_key(msg):
            # the same pair again, now with both timings and the numerics: in place, the view stays
            from inductor_step.session.diff import DiffSide, diff_graphs  # noqa: PLC0415
            from inductor_step.tui.screens.diff import DiffPair  # noqa: PLC0415

            a, b = top.pair.key_a, top.pair.key_b
            d = diff_graphs(DiffSide.from_session(app.session, a), DiffSide.from_session(app.session, b))
            top.replace_pair(DiffPair(a, b, "", d), f"{graph_key(msg)} timed: 7 shows the timings and numerics")
        elif variant:
            from inductor_step.session.trust import unreliable  # noqa: PLC0415
            bad = unreliable(msg) or unreliable(app.session.runs.get(base))
            app.notify(f"{graph_key(msg)} timed: d on it diffs it with {base}, times and numerics included"
                       + (f"; the times are NOT RELIABLE ({bad})" if bad else ""),
                       severity="warning" if bad else "information", timeout=10 if bad else 5)
        return
    status, key = msg.status, graph_key(msg)
    base = str(GraphKey.of(msg).original)
    if status == "failed":
        app.notify(f"what if {key}: {msg.message}", severity="error", timeout=10)
    elif status == "done":
        app.notify(f"{key}: compiled; timing it and {base}…")
        if key in app.session.graphs and base in app.session.graphs:
            while isinstance(app.screen, (DiffScreen, WhatIfScreen)):
                app.pop_screen()
            app.diff_with(base, key)
    if msg.message:
        app.session.note_run_status(f"what if: {msg.message}")
        app.refresh_status()


__all__ = ["WhatIfScreen", "open_form", "on_message", "VARIANT_SEP"]
