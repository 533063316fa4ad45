"""``e`` at the forward's codegen stop, then ``n`` through the backward: its stops stay the backward's.

``e`` before the script's first call of the graph waits for that call, then compares on another thread while the
script goes on to ``.backward()`` and pauses in the backward's compile.  That comparison used to put back, when it
ended, the graph the compile was at when it began (the forward): the backward's aot stop then went out as
``[0/0] forward aot`` (the backward's inputs ``tangents_1`` in the forward's post-grad graph) and the backward's
own aot stop never came.
"""

from __future__ import annotations

import os

from conftest import wait_for
from test_live import HERE, live

DEMO = os.path.join(os.path.dirname(HERE), "tracer", "demo", "train_step.py")


def _placeholders(stop) -> list[str]:
    return [n["name"] for n in (stop.get("post_grad") or {}).get("nodes") or [] if n.get("op") == "placeholder"]


def test_e_at_the_forward_codegen_then_n_keeps_the_backward_stops_its_own(tmp_path):
    seen: dict = {}

    def at(graph, stage):
        p = app_ref[0].view.paused
        return p is not None and p["stage"] == stage and f"{p['compile_id']} {p['graph_kind']}" == graph

    app_ref: list = []

    async def steps(app, pilot):
        app_ref.append(app)
        await wait_for(pilot, lambda: app.view.paused is not None, timeout=120)
        for _ in range(5):  # to the forward's codegen stop, as the person did
            was = app.view.paused
            await pilot.press("n")
            await wait_for(pilot, lambda was=was: app.view.paused is not None and app.view.paused is not was,
                           timeout=120)
        assert at("[0/0] forward", "codegen"), app.view.paused and (app.view.paused["graph_kind"],
                                                                    app.view.paused["stage"])
        await pilot.press("e")
        await wait_for(pilot, lambda: any(m.get("waiting") for m in app.session.numerics.values()),
                       timeout=60, seen=lambda: app.session.numerics)
        await pilot.press("n")  # the script calls the forward (the comparison starts), then the backward compiles
        await wait_for(pilot, lambda: at("[0/0] backward", "dynamo"), timeout=120,
                       seen=lambda: app.view.paused and (app.view.paused["graph_kind"], app.view.paused["stage"]))
        # the comparison of the forward ends while the backward's compile is paused at its dynamo stop
        await wait_for(pilot, lambda: (app.session.numerics.get("[0/0] forward") or {}).get("rows")
                       or (app.session.numerics.get("[0/0] forward") or {}).get("failed"), timeout=120,
                       seen=lambda: app.session.numerics.get("[0/0] forward"))
        await pilot.press("n")
        await wait_for(pilot, lambda: app.view.paused is not None and app.view.paused["stage"] == "aot",
                       timeout=120, seen=lambda: app.view.paused and (app.view.paused["graph_kind"],
                                                                       app.view.paused["stage"]))
        seen["paused"] = f"{app.view.paused['compile_id']} {app.view.paused['graph_kind']}"
        seen["stops"] = [(f"{s['compile_id']} {s['graph_kind']}", s["stage"]) for s in app.session.stops]
        seen["fwd_aot"] = _placeholders(app.session.stop_for("[0/0] forward", "aot") or {})
        seen["bwd_aot"] = _placeholders(app.session.stop_for("[0/0] backward", "aot") or {})

    live(DEMO, steps, tmp_path, size=(80, 24))
    fwd = [("[0/0] forward", st) for st in ("dynamo", "aot", "lowering", "scheduling", "loopbody", "codegen")]
    assert seen["stops"] == fwd + [("[0/0] backward", "dynamo"), ("[0/0] backward", "aot")], seen["stops"]
    assert seen["paused"] == "[0/0] backward"
    assert seen["fwd_aot"] and all(p.startswith("primals_") for p in seen["fwd_aot"]), seen["fwd_aot"]
    assert any(p.startswith("tangents_") for p in seen["bwd_aot"]), seen["bwd_aot"]
