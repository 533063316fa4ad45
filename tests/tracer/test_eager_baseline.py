"""The run stage's eager is what the script runs without torch.compile, on CPU, real compiles.

* An MLP block with LayerNorms: ``eager_ms`` is within 1.5x of a plain perf_counter timing of the same module
  without compile, taken in this test before and after the recording (the strict 10% check is
  benchmarks/eager_baseline.py); the decomposed post-grad graph run op by op, the old "eager", is a third figure
  (``decomposed_ms``) and far from it.
* A training step: the backward graph's eager is autograd's backward of Dynamo's graph, within 1.5x of
  ``torch.autograd.backward`` timed here on the module itself (its forward untimed).
* torch's own prims (prims::convert_element_type, registered by torch with torch.library.custom_op) are never
  "defined by the script"; an op the script defines is.
* A torch.cond training step's forward, backward and branch rows, a jagged NestedTensor graph and a
  nested_compile_region get an eager time or a one-line reason, subgraph rows carry contention verdicts.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import textwrap
import time

import pytest

from inductor_step.session.format import graph_key, read_session

torch = pytest.importorskip("torch")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPTS = os.path.join(ROOT, "tests", "scripts")

MODEL = textwrap.dedent('''
    import torch

    class Block(torch.nn.Module):
        """256 -> 1024 -> 256 with a LayerNorm on each side and tanh-GELU: decomposed, these run op by op."""
        def __init__(self, d=256, h=1024):
            super().__init__()
            self.fc1, self.fc2 = torch.nn.Linear(d, h), torch.nn.Linear(h, d)
            self.ln1, self.ln2 = torch.nn.LayerNorm(h), torch.nn.LayerNorm(d)

        def forward(self, x):
            h = torch.nn.functional.gelu(self.ln1(self.fc1(x)), approximate="tanh")
            return self.ln2(x + self.fc2(h))

    torch.manual_seed(0)
    m = Block()
    x = torch.randn(64, 256)
''')

INFERENCE = MODEL + textwrap.dedent('''
    c = torch.compile(m)
    with torch.no_grad():
        for _ in range(3):
            c(x)
''')

TRAINING = MODEL + textwrap.dedent('''
    c = torch.compile(m)
    for _ in range(3):
        c(x).sum().backward()
''')


def _headless(tmp_path, script: str) -> tuple[subprocess.CompletedProcess, dict[str, dict]]:
    """``--headless --run`` of ``script`` (a path, or source text); the run messages by graph key."""
    if not os.path.exists(script):
        p = tmp_path / "script.py"
        p.write_text(script)
        script = str(p)
    record = tmp_path / "s.jsonl"
    # one thread on each side (the recording's processes and the plain loops here): the shared 2-core box leaves
    # one core to a run far more often than two
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (os.environ.get("PYTHONPATH"), ROOT) if p),
               OMP_NUM_THREADS="1")
    proc = subprocess.run([sys.executable, "-m", "inductor_step", "--headless", "--run", "--record", str(record), script],
                          cwd=str(tmp_path), env=env, capture_output=True, text=True, timeout=600)
    runs = {graph_key(m): m for m in read_session(str(record)) if m.get("type") == "run"} if record.exists() else {}
    return proc, runs


def _plain_ms(fn, calls: int = 200) -> float:
    """Median ms of ``fn()`` over ``calls`` calls (perf_counter each; 10 warm-up calls first)."""
    for _ in range(10):
        fn()
    ms = []
    for _ in range(calls):
        t0 = time.perf_counter()
        fn()
        ms.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(ms)


def _module():
    ns: dict = {}
    exec(MODEL, ns)  # noqa: S102 - the same module the recorded script compiles
    return ns["m"], ns["x"]


def _plain_inference_ms() -> float:
    m, x = _module()
    with torch.no_grad():
        return _plain_ms(lambda: m(x))


def _plain_backward_ms(calls: int = 100) -> float:
    """torch.autograd.backward of the module's output (ones as its grad), the forward run untimed before each."""
    m, x = _module()
    ms = []
    for i in range(calls + 5):
        m.zero_grad(set_to_none=True)
        out = m(x)
        g = torch.ones_like(out)
        t0 = time.perf_counter()
        torch.autograd.backward([out], [g])
        if i >= 5:
            ms.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(ms)


def _quiet(measure, n: int = 3) -> list[float]:
    """``n`` plain timings (ms) by ``measure()``, keeping those whose threads did not wait for a core more than
    tracer.timing.contention.WAIT_SHARE_LIMIT of the time (the shared 2-core box: others' compiles inflate a
    plain loop as much as ours); may be empty."""
    from inductor_step.tracer.timing.contention import WAIT_SHARE_LIMIT, Span

    out = []
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as the recording's processes run (OMP_NUM_THREADS=1, _headless)
    try:
        for _ in range(n):
            with Span() as s:
                ms = measure()
            if (s.result or {}).get("wait_share", 0.0) <= WAIT_SHARE_LIMIT:
                out.append(ms)
    finally:
        torch.set_num_threads(threads)
    return out


def _within(ours: float, plain: list[float], factor: float = 1.5) -> None:
    if not plain:
        pytest.skip("every plain timing in this test waited for a core (the machine was busy): no comparison")
    assert min(plain) / factor <= ours <= max(plain) * factor, (ours, plain)


def _reliable_or_skip(run: dict, *figures: str) -> None:
    """Skip when the run's verdict on any of ``figures`` (``eager``, ``decomposed``) says its threads waited for
    a core: a busy machine's figure proves nothing either way."""
    bad = [f for f in figures if ((run.get("verdicts") or {}).get(f) or {}).get("reliable") is False]
    if bad:
        pytest.skip(f"the machine was busy while timing {', '.join(bad)} ({run.get('unreliable')}): no comparison")


def test_eager_is_the_module_without_compile_not_the_decomposed_graph(tmp_path):
    before = _quiet(_plain_inference_ms)
    proc, runs = _headless(tmp_path, INFERENCE)
    after = _quiet(_plain_inference_ms)
    assert proc.returncode == 0, proc.stderr[-3000:]
    run = runs["[0/0] inference"]
    assert run["eager_how"].startswith("Dynamo's graph"), run.get("eager_how")
    assert run.get("eager_ms") is not None, run.get("eager_error")
    assert run.get("decomposed_ms") is not None, run.get("decomposed_error")
    assert "decomposed post-grad graph, op by op" in proc.stdout  # the third figure, named for what it is
    _reliable_or_skip(run, "eager", "decomposed")
    _within(run["eager_ms"], before + after)
    # the old "eager": Inductor's decomposed graph op by op, much slower than the module on CPU
    assert run["decomposed_ms"] > 1.3 * run["eager_ms"], (run["decomposed_ms"], run["eager_ms"])


def test_backward_eager_is_autograds_backward_of_dynamos_graph(tmp_path):
    before = _quiet(_plain_backward_ms)
    proc, runs = _headless(tmp_path, TRAINING)
    after = _quiet(_plain_backward_ms)
    assert proc.returncode == 0, proc.stderr[-3000:]
    fwd, bwd = runs["[0/0] forward"], runs["[0/0] backward"]
    assert "with grad enabled" in fwd["eager_how"], fwd.get("eager_how")
    assert bwd["eager_how"].startswith("autograd's backward of Dynamo's graph"), bwd.get("eager_how")
    assert bwd.get("eager_ms") is not None, bwd.get("eager_error")
    _reliable_or_skip(bwd, "eager")
    _within(bwd["eager_ms"], before + after)


def test_torch_prims_are_not_the_scripts_ops(tmp_path):
    from inductor_step.tracer import adapter
    from inductor_step.tracer.timing.inprocess import in_process_reason

    @torch.library.custom_op("isteager::scale", mutates_args=())
    def scale(x: torch.Tensor) -> torch.Tensor:
        return x * 3

    # torch 2.13 registers these prims with torch.library.custom_op: they sit in the same registry
    from torch._library.custom_ops import OPDEFS
    assert "prims::convert_element_type" in OPDEFS
    code = ("buf0 = torch.ops.prims.convert_element_type.default(arg0_1, torch.float16)\n"
            "buf1 = torch.ops.prims.iota.default(8, start=0, step=1, dtype=torch.int64, device='cpu', requires_grad=False)\n")
    assert adapter.script_ops_in(code) == []
    out = tmp_path / "out.py"
    out.write_text(code)
    assert in_process_reason(str(out), None) is None
    out.write_text(code + "buf2 = torch.ops.isteager.scale.default(buf0)\n")
    assert adapter.script_ops_in(out.read_text()) == ["isteager::scale"]
    assert "isteager::scale, defined by the script" in in_process_reason(str(out), None)


def test_cond_training_step_and_jagged_graph_get_eager_times_or_reasons(tmp_path):
    from concurrent.futures import ThreadPoolExecutor  # noqa: PLC0415

    jag = tmp_path / "jagged"
    jag.mkdir()
    cond_dir = tmp_path / "cond"
    cond_dir.mkdir()
    # the two recordings side by side (each mostly one Python thread compiling): nothing here compares a time
    with ThreadPoolExecutor(2) as pool:
        cond_run = pool.submit(_headless, cond_dir, os.path.join(SCRIPTS, "hop_cond_train.py"))
        jagged_run = pool.submit(_headless, jag, os.path.join(SCRIPTS, "nested_jagged.py"))
        (proc, runs), (jproc, jruns) = cond_run.result(), jagged_run.result()
    assert proc.returncode == 0, proc.stderr[-3000:]
    for key in ("[0/0] forward", "[0/0] backward"):
        assert runs[key].get("eager_ms") is not None, (key, runs[key].get("eager_error"))
    subs = [k for k in runs if "›" in k]
    assert len(subs) == 4, sorted(runs)
    for k in subs:
        r = runs[k]
        assert r.get("eager_ms") is not None or r.get("eager_note"), k  # a time or a one-line reason
        assert "verdicts" in r and "reliable" in r, k  # judged for contention like its parent
    assert jproc.returncode == 0, jproc.stdout[-2000:] + jproc.stderr[-2000:]
    run = jruns["[0/0] inference"]
    assert run.get("compiled_ms") is not None and run.get("eager_ms") is not None, run.get("error")
    assert "nested int" in run.get("in_process", ""), run.get("in_process")
