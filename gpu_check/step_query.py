"""Drive the agent in step mode: can_fuse at the first scheduling stop, then run; python step_query.py SCRIPT."""

import queue
import sys
import time

from tui.client import AgentProcess

TOTAL_S = 300


def main(script):
    q = queue.Queue()
    agent = AgentProcess(script, [], on_message=q.put, writer=None, step=True)
    deadline = time.monotonic() + TOTAL_S
    rc = 0

    def get(until=None):
        left = (until or deadline) - time.monotonic()
        if left <= 0:
            raise TimeoutError
        return q.get(timeout=left)

    try:
        asked = False
        done = False
        while not done:
            m = get()
            t = m.get("type")
            if t == "stop":
                if m["stage"] == "scheduling" and not asked:
                    asked = True
                    names = [n["name"] for n in m.get("after") or []]
                    print(f"scheduling {m['compile_id']} {m['graph_kind']}: after fusion {names}")
                    if len(names) >= 2:
                        a, b = names[0], names[1]
                        agent.send("can_fuse", a=a, b=b)
                        while True:
                            r = get(time.monotonic() + 120)
                            if r.get("type") == "fusion_query":
                                break
                            if r.get("type") in ("error", "agent_exit"):
                                print("unexpected:", r)
                                rc = 1
                                break
                        print(f"fusion_query a={r.get('a')} b={r.get('b')} verdict={r.get('verdict')!r}")
                        for line in r.get("reasons") or []:
                            print(f"   reason: {line[:300]}")
                    else:
                        print("fewer than 2 after-fusion nodes; no query")
                        rc = 1
                agent.send("continue")
            elif t == "error":
                print("error:", m.get("stage"), m.get("message"))
                rc = 1
            elif t == "done":
                print(f"done rc={m.get('returncode')} graphs={m.get('graphs')}")
                done = True
            elif t == "agent_exit":
                print("agent exited early", m)
                return 1
        agent.send("run")
        while True:
            m = get()
            t = m.get("type")
            if t == "run":
                if m.get("error"):
                    print(f"run {m['compile_id']} {m['graph_kind']}: ERROR {m['error']}")
                    rc = 1
                    continue
                ks = m.get("kernels") or []
                print(f"run {m['compile_id']} {m['graph_kind']} ({m.get('device')}, {m.get('method')}): "
                      f"compiled {m.get('compiled_ms'):.4f} ms, eager {m.get('eager_ms'):.4f} ms, "
                      f"{len(ks)} kernels, sum {m.get('kernel_sum_ms') or 0:.4f} ms")
                for k in sorted(ks, key=lambda k: -(k.get("median_ms") or 0))[:3]:
                    p20, p80 = k.get("p20_ms"), k.get("p80_ms")
                    print(f"   {k['name']} [{k.get('backend')}] median {k.get('median_ms'):.4f} ms"
                          f" p20 {p20 if p20 is None else f'{p20:.4f}'} p80 {p80 if p80 is None else f'{p80:.4f}'}")
            elif t == "run_status":
                if m.get("done"):
                    print("run_status:", m.get("message"))
                    break
                if "no compiled graph" in (m.get("message") or "") or "already" in (m.get("message") or ""):
                    print("run_status:", m.get("message"))
                    rc = 1
                    break
            elif t == "agent_exit":
                print("agent exited during run", m)
                return 1
    except TimeoutError:
        print("TIMEOUT")
        rc = 1
    finally:
        agent.terminate()
    print(f"step_query RESULT {'OK' if rc == 0 else 'FAIL'}")
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
