"""Pane M's measured figures: a person opens the recorded training step (tests/fixtures/memory_whatif.jsonl), its runs'
``memory`` replaced by what the timing worker measured for the same script on this CPU
(tests/fixtures/memory_eager_measured.json: ``--headless --run`` of tests/scripts/memory_whatif.py, tracer.timing.memory),
presses M: the PEAK head shows the compiled and eager peaks with their source, the SAVED head the compiled forward's
saved bytes against eager autograd's.  No torch needed."""

from __future__ import annotations

import json
import os

from test_flows import press

from inductor_step.session.format import graph_key, read_session

FIX = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures")


def _rows(app) -> list[tuple[str, ...]]:
    t = app.query_one("#table-memory")
    return [tuple(str(c) for c in t.get_row_at(i)) for i in range(t.row_count)]


def test_m_shows_eager_beside_the_compiled_peak_and_saved_bytes(app_driver, tmp_path):
    with open(os.path.join(FIX, "memory_eager_measured.json"), encoding="utf-8") as f:
        measured = json.load(f)
    path = tmp_path / "s.jsonl"
    with open(path, "w", encoding="utf-8") as f:
        for m in read_session(os.path.join(FIX, "memory_whatif.jsonl")):
            if m.get("type") == "run" and not m.get("variant") and graph_key(m) in measured:
                m = {**m, "memory": measured[graph_key(m)]}
            f.write(json.dumps(m) + "\n")
    seen: dict = {}

    async def steps(app, pilot):
        app.show_graph("[1/0] forward")
        await press(pilot, "M", "home")  # the PEAK head: the plan and what the timing measured
        seen["peak"] = app.query_one("#code-memory").text
        heads = [r[0] for r in _rows(app)]
        await press(pilot, *["down"] * heads.index("SAVED"))  # down to the SAVED head
        seen["saved"] = app.query_one("#code-memory").text

    app_driver(steps, size=(160, 50), path=str(path))
    assert "# measured (compiled): 2.2 MB (2228228 bytes; torch.profiler (profile_memory=True)" in seen["peak"]
    assert "# measured (eager, same graph): 2.4 MB (2359312 bytes; Dynamo's graph run eagerly with grad enabled" \
        in seen["peak"] and seen["peak"].count("torch.profiler (profile_memory=True)") == 2
    assert "saves 5 tensors for [1/0] backward: 2.2 MB in distinct storages" in seen["saved"]
    assert "# against eager: eager autograd saves 2.2 MB in 3 storages (parameters 32.8 kB, graph inputs 262.1 kB " \
        "apart; saved_tensors_hooks on Dynamo's graph) (measured)" in seen["saved"]


def test_the_diff_screen_shows_eager_beside_the_compiled_peaks_and_what_changed(app_driver):
    """``inductor-step diff A B`` on two measured runs of one script (tests/fixtures/memory_measured_{a,b}.jsonl, b with
    ``inplace_buffers=False`` and ``activation_memory_budget=0.5``): above the levels, the memory line of each pair
    (p: the next) carries the measured and eager peaks and eager autograd's saved bytes, shown whole."""
    a, b = os.path.join(FIX, "memory_measured_a.jsonl"), os.path.join(FIX, "memory_measured_b.jsonl")
    seen: list = []

    async def steps(app, pilot):
        for _ in range(2):  # [0/0] inference, then [1/0] forward
            w = app.screen.query_one("#diff-memory")
            seen.append((str(w.content), w.display, w.size.height, w.size.width))
            await press(pilot, "p")

    app_driver(steps, size=(160, 50), path=b, diff_against=(a, list(read_session(a))))
    (inf, shown, rows, cols), (fwd, *_rest) = seen
    assert shown and inf.startswith("memory: planned peak 262.1 kB -> 393.2 kB (+50%)")
    assert "measured peak 262.1 kB -> 393.2 kB (+50%), eager's 393.2 kB in both" in inf
    assert inf.endswith("compiled peak against eager's x0.67 -> x1.00") and rows * cols >= len(inf)  # not cut
    assert "eager autograd saves 2.2 MB in both" in fwd and fwd.endswith("against eager autograd's x1.00 -> x0.47")
