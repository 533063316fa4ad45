"""Compile time and Triton's cache verdicts on a CUDA GPU, marked ``gpu``; skipped without CUDA::

    python -m pytest -m gpu tests/gpu/test_compile_time_gpu.py -rA -s

tests/scripts/gpu_ctime.py recorded twice with ``--headless --caches on`` into one fresh
``TORCHINDUCTOR_CACHE_DIR`` (Triton's cache lives under it): the first run compiles every Triton kernel in the
compile workers, each with torch's own ``compile_time_us``; the second hits the FX graph / AOTAutograd caches,
its skipped stages say "cache hit", and its Triton kernels come from the cache entry's bundle, not compiled.
A third run with Inductor's caches off (the default) compiles every graph again, but Triton's own on-disk cache
(under the same directory) serves each kernel's binary: each says so; a fourth changes Triton's cache
key (an environment variable in it), and each kernel's miss says its earlier entry has another key.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid

import pytest
from gpu_helpers import GPU_MARKS, SCRIPTS, headless_env, keep_session  # (tests/gpu/ is on sys.path)

from inductor_step.session import compile_time as ct
from inductor_step.session.format import read_session
from inductor_step.session.store import Store

pytestmark = GPU_MARKS


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    cwd = tmp_path_factory.mktemp("gpu_ctime")
    env = headless_env(("TORCH_LOGS", "TORCH_TRACE"))
    env.update(TORCHINDUCTOR_CACHE_DIR=str(cwd / "inductor_cache"), CTIME_SALT=uuid.uuid4().hex)
    out = []
    # the last run changes one of Triton's cache-invalidating environment variables: every key changes
    for name, caches, extra in (("first", ["--caches", "on"], {}), ("again", ["--caches", "on"], {}),
                                ("triton_cache", [], {}), ("rekeyed", [], {"TRITON_DISABLE_LINE_INFO": "1"})):
        rec = str(cwd / f"{name}.jsonl")
        p = subprocess.run([sys.executable, "-m", "inductor_step", "--headless", *caches, "--record", rec,
                            os.path.join(SCRIPTS, "gpu_ctime.py")], cwd=str(cwd), env={**env, **extra},
                           capture_output=True,
                           text=True, timeout=420)
        keep_session(rec, f"gpu_ctime_{name}")
        assert p.returncode == 0, p.stderr[-3000:]
        s = Store.of([dict(m) for m in read_session(rec)])
        out.append({"stdout": p.stdout, "times": ct.graph_times(s), "session": s})
    return out


def _triton(times: dict) -> list[dict]:
    return [k for g in times.values() for k in g.kernels if k.get("kind") == "triton"]


def test_each_triton_kernel_has_its_compile_time(two_runs) -> None:
    first = two_runs[0]
    times = first["times"]
    print("\n".join(f"{k['name']:<40} {k.get('compile_ms')} ms {k.get('cache')} {k.get('autotune_cache', '')}"
                    for k in _triton(times)))
    print([line for line in first["stdout"].splitlines() if line.startswith("compile time:")])
    code = {k["name"] for st in first["session"].stops if st["stage"] == "codegen" for k in st.get("kernels") or []
            if k.get("backend") == "triton"}
    triton = _triton(times)
    assert code and {k["name"] for k in triton} >= code, (sorted(code), [k["name"] for k in triton])
    for k in triton:
        assert k["compile_ms"] and k["compile_ms"] > 0 and k["cache"] == "miss", k
        assert "written during this compile" in k["cache_note"], k
        assert "compile_time_us" in k["source"], k
    ranked = [r for r in ct.rankings(first["session"])["kernels"] if r.label.startswith("triton_")]
    assert ranked and ranked[0].ms == max(k["compile_ms"] for k in triton)
    fwd = times["[0/0] forward"]
    assert fwd.stages.get("kernels", 0) > 0, fwd.stages
    assert all(v["status"] == "miss" for g in times.values() for v in g.cache.values()), \
        {k: g.cache for k, g in times.items()}


def test_a_second_run_hits_the_caches_and_loads_its_triton_kernels(two_runs) -> None:
    again = two_runs[1]["times"]
    print({k: g.cache for k, g in again.items()}, {k: g.skipped() for k, g in again.items()})
    print("\n".join(f"{k['name']:<40} {k.get('compile_ms')} ms {k.get('cache')}: {k.get('cache_note')}"
                    for k in _triton(again)))
    print([line for line in two_runs[1]["stdout"].splitlines() if line.startswith("compile time:")])
    verdicts = {k: v["status"] for g in again.values() for k, v in g.cache.items()}
    assert "hit" in verdicts.values(), verdicts
    fwd = again["[0/0] forward"]
    assert set(fwd.skipped()) >= {"lowering", "scheduling", "codegen"}, (fwd.cache, fwd.stages)
    assert all(why.startswith("cache hit") for why in fwd.skipped().values())
    triton = _triton(again)
    assert triton and all(k["cache"] == "hit" and k["compile_ms"] == 0.0 for k in triton), triton
    first = _triton(two_runs[0]["times"])
    assert {k["name"] for k in triton} == {k["name"] for k in first}


def test_inductor_caches_off_and_triton_serves_the_kernels_from_its_own_cache(two_runs) -> None:
    third = two_runs[2]["times"]
    triton = _triton(third)
    print("\n".join(f"{k['name']:<40} {k.get('compile_ms')} ms {k.get('cache')}: {k.get('cache_note')}"
                    for k in triton))
    print([line for line in two_runs[2]["stdout"].splitlines() if line.startswith("compile time:")])
    fwd = third["[0/0] forward"]
    assert not fwd.skipped() and fwd.stages.get("lowering", 0) > 0, (fwd.cache, fwd.stages)
    first = {k["name"]: k for k in _triton(two_runs[0]["times"])}
    assert triton and {k["name"] for k in triton} == set(first)
    for k in triton:
        assert k["cache"] == "hit" and "Triton's own on-disk cache" in k["cache_note"], k
        assert isinstance(k["compile_ms"], float), k  # torch's time: the load and the lookup, not 0
    assert sum(k["compile_ms"] for k in triton) < sum(k["compile_ms"] for k in first.values())


def test_a_changed_triton_cache_key_is_told_from_a_cold_cache(two_runs) -> None:
    """Run 4 sets TRITON_DISABLE_LINE_INFO (in Triton's cache key): each kernel compiles again, and its miss
    says the same kernel's entry from the earlier runs sits under another key."""
    triton = _triton(two_runs[3]["times"])
    print("\n".join(f"{k['name']:<40} {k.get('compile_ms')} ms {k.get('cache')}: {k.get('cache_note')}"
                    for k in triton))
    assert triton and {k["name"] for k in triton} == {k["name"] for k in _triton(two_runs[0]["times"])}
    for k in triton:
        assert k["cache"] == "miss" and "under a new cache key" in k["cache_note"], k
    first = _triton(two_runs[0]["times"])  # the first run's misses: a cold cache, no earlier entry
    assert all("new cache key" not in k["cache_note"] for k in first), first
