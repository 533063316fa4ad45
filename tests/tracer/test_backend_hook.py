"""One wrapper of Dynamo's ``OutputGraph.call_user_compiler`` (tracer.adapter.backends.install_backend_hook) for
every hook set: the agent's (which backend each graph goes to) and blame's (each graph's first call compared with
eager, through the callable the backend returns) both see a real torch.compile, and a ``wrap`` replaces the callable
Dynamo runs.  In a process of its own: the hooks patch torch for good."""

from __future__ import annotations

import json
import math
import subprocess
import sys

CHILD = r'''
import json, torch
from torch._dynamo.output_graph import OutputGraph
from inductor_step.tracer.adapter import backends, blame

seen = {"before": [], "after": [], "compared": []}
backends.install_backend_hook(lambda gm, name: seen["before"].append(name),
                              lambda gm, name, err: seen["after"].append((name, err is None)))
blame.install_compare_hook(lambda cid, compare: seen["compared"].append((cid, compare()["worst"]["status"])))
backends.install_backend_hook(wrap=lambda gm, name, compiled, state: (lambda *a: [2 * o for o in compiled(*a)]))
out = torch.compile(lambda x: (x.sin() + 1,), backend="eager")(torch.ones(4))
seen["out"] = out[0].tolist()
seen["one_wrapper"] = bool(getattr(OutputGraph.call_user_compiler, "_inductor_step", False))
print(json.dumps(seen))
'''


def test_the_agents_hook_and_blames_compare_share_one_wrapper_and_wrap_replaces_the_callable():
    p = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    seen = json.loads(p.stdout.strip().splitlines()[-1])
    assert seen["one_wrapper"]  # blame's hook went through install_backend_hook, not a wrapper of its own
    assert seen["before"] == ["eager"] and seen["after"] == [["eager", True]]
    assert seen["compared"] == [["[0/0]", "ok"]]  # blame's first-call comparison ran
    assert all(abs(v - 2 * (1 + math.sin(1.0))) < 1e-5 for v in seen["out"]), seen["out"]  # the wrap's callable ran
