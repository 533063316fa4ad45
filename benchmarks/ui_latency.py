"""UI latency on a large recorded session: time to first frame of `--open`, and key press to
repainted frame while stepping and moving the selection (Textual Pilot: press, then wait until the
app has processed the key and refreshed).  Prints medians and p95 in ms.

    python benchmarks/big_model.py            # under inductor-step, once:
    inductor-step --headless --record big.jsonl benchmarks/big_model.py --blocks 400
    python benchmarks/ui_latency.py big.jsonl
"""

import asyncio
import statistics
import sys
import time

sys.path.insert(0, __file__.rsplit("/benchmarks/", 1)[0])

from inductor_step.session.format import read_session  # noqa: E402
from inductor_step.tui.app import StepApp  # noqa: E402


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))]


async def main(path: str) -> None:
    t0 = time.perf_counter()
    msgs = list(read_session(path, lazy_over=1 << 18))  # as `inductor-step --open` reads it
    app = StepApp(messages=msgs, session_path=path, screenshots="/tmp")
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.pause()
        first_frame = (time.perf_counter() - t0) * 1000
        timings: dict[str, list[float]] = {}

        async def press(label, *keys):
            for k in keys:
                s = time.perf_counter()
                await pilot.press(k)
                await pilot.pause()
                timings.setdefault(label, []).append((time.perf_counter() - s) * 1000)

        await press("next stop (n)", *["n"] * 6)
        await press("switch to lowering (3)", "3")
        await press("move in IR buffers (down)", *["down"] * 40)
        await press("switch to codegen (6)", "6")
        await press("move in kernels (down)", *["down"] * 40)
        await press("switch to linked (8)", "8")
        await press("move in linked buffers (down)", *["down"] * 40)
    print(f"session {path}: {len(msgs)} messages")
    print(f"time to first frame (read + mount + first paint): {first_frame:.0f} ms")
    every = []
    for label, xs in timings.items():
        every += xs
        print(f"{label:<32} n={len(xs):<3} median {statistics.median(xs):7.1f} ms   p95 {pct(xs, 0.95):7.1f} ms")
    print(f"{'all keys':<32} n={len(every):<3} median {statistics.median(every):7.1f} ms   p95 {pct(every, 0.95):7.1f} ms")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
