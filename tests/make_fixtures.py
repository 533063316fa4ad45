"""Record the session fixtures the UI tests replay (run by hand after a format change).

    python tests/make_fixtures.py

Each fixture is a real ``inductor-step --headless`` run on CPU: the bundled demo with timings,
a compile that fails in codegen (torch's own fault injection), and a script with two graph breaks.
"""

import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
FIXTURES = os.path.join(HERE, "fixtures")

RUNS = {
    "demo.jsonl": ["--run"],
    "codegen_error.jsonl": [os.path.join(HERE, "scripts", "cpp_compile_error.py")],
    "graph_breaks.jsonl": [os.path.join(HERE, "scripts", "graph_breaks.py")],
    # diff pairs: a dynamic-shape recompile, a dtype change, one script under two Inductor configs
    "diff_recompile.jsonl": ["--run", os.path.join(HERE, "scripts", "diff_recompile.py")],
    "diff_dtype.jsonl": [os.path.join(HERE, "scripts", "diff_dtype.py")],
    "diff_config_a.jsonl": ["--run", os.path.join(HERE, "scripts", "diff_config.py")],
    "diff_config_b.jsonl": ["--run", os.path.join(HERE, "scripts", "diff_config.py")],
    # the ledger: timed, with a missed fusion Inductor logs a reason for and two extern round trips
    "ledger.jsonl": ["--run", os.path.join(HERE, "scripts", "ledger_small.py")],
    # how each graph was compiled, a C++ GEMM template and autotuning; dynamic symbols, timed
    "modes_autotune.jsonl": [os.path.join(HERE, "scripts", "modes_autotune.py")],
    "modes_dynamic.jsonl": ["--run", os.path.join(HERE, "scripts", "modes_dynamic.py")],
    # a torch.cond's branches as graphs of their own, timed
    "subgraphs_cond.jsonl": ["--run", os.path.join(HERE, "scripts", "hop_cond.py")],
    # a C++ kernel's compiled function disassembled by the run stage
    "cpu_asm.jsonl": ["--run", os.path.join(HERE, "scripts", "cpu_asm.py")],
    # every buffer against eager: a bf16 chain, a NaN from the data, a wrong tanh lowering
    "numerics.jsonl": ["--numerics", os.path.join(HERE, "scripts", "numerics_small.py")],
    # blame: the bisect of torch's planted relu bug to its lowering, after pane e's numerics of it; a loop over a
    # dynamic size made static (recompile blame)
    "blame.jsonl": ["--numerics", "--blame=numerics", os.path.join(HERE, "scripts", "blame_relu.py")],
    # speed blame: cpp.simdlen = 1 planted; each variant timed round by round (on a busy machine: all noise)
    "blame_speed.jsonl": ["--blame=speed", os.path.join(HERE, "scripts", "blame_slow.py")],
    # a concat's NopKernelSchedulerNode (no kernel), asked about with f
    "nop_concat.jsonl": [os.path.join(HERE, "scripts", "nop_concat.py")],
    # a frame Dynamo traced that made no Inductor graph (pane T against the graph list)
    "no_graph_frame.jsonl": [os.path.join(HERE, "scripts", "no_graph_frame.py")],
    # one recompile of a training step, its forward and backward (the gate counted it twice)
    "recompile_train.jsonl": [os.path.join(HERE, "scripts", "recompile_train.py")],
    # memory: an in-place setting and the partitioner's activation budget, each a what-if variant, timed
    "memory_whatif.jsonl": ["--run", "--what-if=inplace_buffers=False", "--what-if=activation_memory_budget=0.5",
                            os.path.join(HERE, "scripts", "memory_whatif.py")],
    # memory measured by the timing worker, two configs of one script (the diff's and the gate's eager figures)
    "memory_measured_a.jsonl": ["--run", os.path.join(HERE, "scripts", "memory_measured.py")],
    "memory_measured_b.jsonl": ["--run", os.path.join(HERE, "scripts", "memory_measured.py")],
}
#: extra environment of a run
ENV = {"diff_config_b.jsonl": {"DIFF_NO_FUSION": "1"}, "memory_measured_b.jsonl": {"MEMORY_MORE": "1"}}
#: the rank comparison: one script run as rank 0, rank 1 and a rank 1 that dies (--run, script args)
RANKS = {"ranks_r0.jsonl": ["--rank", "0"], "ranks_r1.jsonl": ["--rank", "1"],
         "ranks_r1_died.jsonl": ["--rank", "1", "--die"]}

if __name__ == "__main__":
    os.makedirs(FIXTURES, exist_ok=True)
    env = dict(os.environ, PYTHONPATH=ROOT)
    for name, args in RUNS.items():
        out = os.path.join(FIXTURES, name)
        if os.path.exists(out):
            os.remove(out)
        opts = [a for a in args if a.startswith("--")]
        script = [a for a in args if not a.startswith("--")]
        subprocess.run([sys.executable, "-m", "inductor_step", "--headless", *opts, "--record", out, *script],
                       cwd="/tmp", env=dict(env, **ENV.get(name, {})), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        print(name, os.path.getsize(out), "bytes")
    for name, script_args in RANKS.items():
        out = os.path.join(FIXTURES, name)
        if os.path.exists(out):
            os.remove(out)
        subprocess.run([sys.executable, "-m", "inductor_step", "--headless", "--run", "--record", out,
                        os.path.join(HERE, "scripts", "ranks_job.py"), *script_args],
                       cwd="/tmp", env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        print(name, os.path.getsize(out), "bytes")
    # real two-rank torchrun jobs (gloo), through the job launcher: a job file and one session per rank
    for name, script, opts in (("ranks_torchrun", "ranks_dist.py", []), ("ranks_ddp", "ranks_ddp.py", ["--run"]),
                               ("ranks_failed", "job_step.py", ["--die-rank", "1"])):
        launch = ["-m", "torch.distributed.run", "--nproc-per-node", "2", "--standalone"] if name == "ranks_failed" \
            else ["--nproc-per-node", "2", *opts]
        args = opts if name == "ranks_failed" else []
        subprocess.run([sys.executable, "-m", "inductor_step", "--headless", "--record",
                        os.path.join(FIXTURES, f"{name}.jsonl"), *launch, os.path.join(HERE, "scripts", script), *args],
                       cwd="/tmp", env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        print(f"{name}.job.json", [os.path.getsize(os.path.join(FIXTURES, f"{name}.rank{r}.jsonl")) for r in (0, 1)], "bytes")
