"""Check the cross-level links of every codegen stop in a session: python check_links.py SESSION."""

import json
import re
import sys
from collections import Counter

from tracer.protocol import graph_key, read_session

PTR = re.compile(r"\b(in_out_ptr|out_ptr|in_ptr)\d+\b")


def is_extern_name(n):
    return n.startswith(("extern_kernels.", "torch.ops.", "aten."))


def main(path):
    msgs = list(read_session(path))
    hdr = msgs[0]
    dev = hdr.get("device")
    gen_backend = "triton" if dev == "cuda" else "cpp"
    print(f"== {path}: device={dev} ({hdr.get('device_name')}) torch={hdr.get('torch')} triton={hdr.get('triton')}")
    fails = []

    def fail(g, text):
        fails.append(f"{g}: {text}")
        print(f"  FAIL {g}: {text}")

    stops = [m for m in msgs if m.get("type") == "stop" and m.get("stage") == "codegen"]
    errors = [m for m in msgs if m.get("type") == "error"]
    for e in errors:
        fail(graph_key(e), f"error message at stage {e.get('stage')}: {e.get('message')}")
    if not stops:
        fail(path, "no codegen stop")
    samples = []
    for stop in stops:
        g = graph_key(stop)
        links = stop.get("links") or {}
        if "buffers" not in links:
            fail(g, f"links unavailable: {links.get('unavailable')}")
            continue
        kernels = {k["name"]: k for k in stop["kernels"]}
        lb, lk = links["buffers"], links["kernels"]
        # 1. reachability both ways
        reached = {k for b in lb.values() for k in b["kernels"]}
        if set(kernels) - reached:
            fail(g, f"kernels no buffer reaches: {sorted(set(kernels) - reached)}")
        if set(kernels) - set(lk):
            fail(g, f"kernels missing from links.kernels: {sorted(set(kernels) - set(lk))}")
        for kname, k in lk.items():
            if not k["buffers"]:
                fail(g, f"links.kernels[{kname}] has no buffers")
            for b in k["buffers"]:
                if b not in lb or kname not in lb[b]["kernels"]:
                    fail(g, f"{kname} -> {b} but not back")
        for bname, b in lb.items():
            for kname in b["kernels"]:
                if kname not in lk or bname not in lk[kname]["buffers"]:
                    fail(g, f"{bname} -> {kname} but not back")
        # 2. backends
        backends = Counter(k["backend"] for k in kernels.values())
        for kname, k in kernels.items():
            want = "extern" if is_extern_name(kname) else gen_backend
            if k["backend"] != want:
                fail(g, f"{kname}: backend {k['backend']!r}, expected {want!r}")
            if kname in lk and lk[kname]["backend"] != k["backend"]:
                fail(g, f"{kname}: links backend {lk[kname]['backend']!r} != kernels backend {k['backend']!r}")
        # 3. highlighted lines mention a pointer
        empty = []
        checked = 0
        for bname, b in lb.items():
            for kname, ranges in b["kernel_lines"].items():
                k = kernels.get(kname)
                if k is None:
                    fail(g, f"{bname}: kernel_lines names unknown kernel {kname}")
                    continue
                if k["backend"] == "extern":
                    if not (bname in k["source"] or any(bname in a for c in k["calls"] for a in c)):
                        fail(g, f"{bname}: extern {kname} neither names it in source nor calls")
                    continue
                if not ranges:
                    empty.append((bname, kname))
                    continue
                src = k["source"].split("\n")
                body0 = next((i + 1 for i, l in enumerate(src) if l.startswith("def ")), 0)
                outside = [n for a, e in ranges for n in range(a, e + 1) if n <= body0]
                if outside:
                    fail(g, f"{bname} in {kname}: highlighted lines before/at the def line (decorator/meta): "
                            f"{[(n, src[n - 1].strip()[:120]) for n in outside[:3]]}")
                for a, e in ranges:
                    for n in range(a, e + 1):
                        checked += 1
                        if n - 1 >= len(src) or not PTR.search(src[n - 1]):
                            fail(g, f"{bname} in {kname} line {n}: no pointer: {src[n - 1] if n - 1 < len(src) else '<past end>'!r}")
                if ranges and len(samples) < 3 and k["backend"] == gen_backend and not any(s[0] == g for s in samples):
                    samples.append((g, bname, kname, [src[n - 1].strip() for a, e in ranges for n in range(a, e + 1)]))
        if checked == 0:
            fail(g, "no highlighted generated-kernel line checked at all")
        # 4. provenance agreement
        prov = next((m for m in msgs if m.get("type") == "provenance" and graph_key(m) == g), None)
        nprov = 0
        if prov is None:
            print(f"  note {g}: no provenance message")
        else:
            c2p = json.loads(prov["mappings"]).get("cppCodeToPost") or {}
            nprov = len(c2p)
            for key, post in c2p.items():
                base = key.split(":")[0]
                ours = [k for k in lk if k.split("#")[0] == base]
                if not ours:
                    fail(g, f"provenance names {key}, links lack it (kernels: {sorted(lk)})")
                    continue
                origins = {o for k in ours for b in lk[k]["buffers"] for o in lb[b]["fx_nodes"]}
                if not origins & set(post):
                    fail(g, f"provenance {key} -> {post}: linked buffers' origins {sorted(origins)} share none")
        # summary
        print(f"  {g}: {len(kernels)} kernels {dict(backends)}, {len(lb)} buffers "
              f"({sum(1 for b in lb.values() if b['kernels'])} linked to a kernel), {checked} highlighted lines ok, "
              f"{len(empty)} buffer-kernel pairs w/o lines, provenance kernels {nprov}, sources {links.get('sources')}")
        if links.get("notes"):
            print(f"    links notes: {links['notes']}")
        for bname, kname in empty:
            print(f"    empty {bname} @ {kname}: {'; '.join(lb[bname]['notes'])[:200]}")
        unlinked = [b for b, d in lb.items() if not d["kernels"]]
        if unlinked:
            print(f"    no kernel: {unlinked}")
    print("  samples:")
    for g, bname, kname, text in samples:
        print(f"    {g}: {bname} -> {kname} ->")
        for t in text[:6]:
            print(f"        {t[:150]}")
        if len(text) > 6:
            print(f"        ... (+{len(text) - 6} lines)")
    print(f"  RESULT {'FAIL (' + str(len(fails)) + ')' if fails else 'OK'}")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
