"""Key press to repainted frame in a real terminal (tmux), on a recorded session.

Starts ``inductor-step --open SESSION`` (or ``--cmd``'s command) in a detached tmux server, waits for the
first frame (the stage bar's "✓dynamo" and the footer's "n Next", which the UI before and after the restructure of November 2026's
restructure both show), then
sends real key events with ``tmux send-keys`` and polls ``tmux capture-pane -e`` (colours included,
so a moved cursor counts) until the screen changes: that is the latency of one key, end to end
(tmux parses the key, the app handles it and repaints, tmux applies the output).  After each key
it also waits until the screen has been still for 150 ms, so keys never queue, and records the
time until the last change ("settled": the detail panes update 40 ms after the cursor stops) and
how many changes it saw ("changes": 1 when the key's result came in one frame; a cursor move's
details make it 2).  Prints median and p95 per action and over all keys, in ms.  Polling
resolution is a few ms; the screen is read through one tmux control-mode client (``--poll
spawn``: a tmux process per read, as before).

    python benchmarks/key_latency.py SESSION [--size 160x50] [--repeats 30] [--wait 4] [--poll control|spawn]
        [--cmd "COMMAND THAT OPENS A SESSION"] [--json OUT.json]

``--cmd`` runs another checkout, e.g. the one before the restructure (top-level ``tui`` package):
``--cmd "cd /tmp/before && PYTHONPATH=/tmp/before python -m tui.cli --open"``; the session's absolute path is
appended (or replaces ``{session}``).  ``--json`` writes every key's times, per action, for aggregating runs.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import uuid

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# On the first frame of both UIs (before and after the package restructure): the stage bar, then the footer.
FIRST_FRAME = ("✓dynamo", "n Next")


def has_first_frame(text: str) -> bool:
    """Whether a screen (without colour escapes) shows the stage bar and the footer.  The stage bar marks the
    stage shown with ``●`` since the bars show it (``●dynamo`` on an opened session), ``✓`` before."""
    return all(m in text or (m == "✓dynamo" and "●dynamo" in text) for m in FIRST_FRAME)


def open_command(cmd: str | None, session: str) -> str:
    """The shell command that opens ``session``: ``cmd`` with ``{session}`` replaced or the path appended;
    None: this checkout's ``python -m inductor_step --open``."""
    if cmd is None:
        cmd = f"cd {ROOT} && {sys.executable} -m inductor_step --open"
    return cmd.replace("{session}", session) if "{session}" in cmd else f"{cmd} {session}"


class Term:
    """A tmux server of our own running one command.

    ``poll="control"`` (the default) sends ``capture-pane`` and ``send-keys`` through one tmux
    control-mode client (``tmux -C``, pane output notifications off) instead of starting a tmux
    client process for each: on the 2-core box each of those cost ~2 ms of CPU, and polling
    every few ms took that from the app being measured.  What is measured is the same: the
    screen as tmux holds it.  ``poll="spawn"`` is the earlier way, for comparison."""

    def __init__(self, cmd: str, w: int, h: int, poll: str = "control"):
        self.tm = ["tmux", "-L", f"lat-{uuid.uuid4().hex[:6]}"]
        subprocess.run(self.tm + ["new-session", "-d", "-s", "b", "-x", str(w), "-y", str(h), cmd], check=True)
        self.ctl = None
        if poll == "control":
            self.ctl = subprocess.Popen(self.tm + ["-C", "attach", "-t", "b"], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE)
            self._command(None)  # the block answering the attach itself
            self._command("refresh-client -f no-output")

    def _command(self, command: str | None) -> str:
        """Run one tmux command through the control client; its output (tmux frames it between
        ``%begin`` and ``%end`` lines carrying the same command number; notifications come
        outside those blocks).  None: only read the next block."""
        assert self.ctl is not None and self.ctl.stdin is not None and self.ctl.stdout is not None
        if command is not None:
            self.ctl.stdin.write(command.encode() + b"\n")
            self.ctl.stdin.flush()
        number, out = None, []
        while True:
            line = self.ctl.stdout.readline()
            if not line:
                raise RuntimeError("tmux control client ended")
            if number is None:
                if line.startswith(b"%begin "):
                    number = line.split()[2]
                continue
            if line.startswith((b"%end ", b"%error ")) and line.split()[2] == number:
                if line.startswith(b"%error "):
                    raise RuntimeError(b"".join(out).decode(errors="replace"))
                return b"".join(out).decode(errors="replace")
            out.append(line)

    def screen(self, plain: bool = False) -> str:
        """The screen as tmux holds it, with colour escapes (``-e``) unless ``plain``."""
        flags = "-p" if plain else "-p -e"
        if self.ctl is not None:
            return self._command(f"capture-pane {flags} -t b")
        return subprocess.run(self.tm + ["capture-pane", *flags.split(), "-t", "b"], capture_output=True,
                              text=True).stdout

    def keys(self, *k: str) -> None:
        if self.ctl is not None:
            self._command("send-keys -t b " + " ".join(k))
            return
        subprocess.run(self.tm + ["send-keys", "-t", "b", *k], check=True)

    def close(self) -> None:
        if self.ctl is not None and self.ctl.stdin is not None:
            self.ctl.stdin.close()
        subprocess.run(self.tm + ["kill-server"], check=False, capture_output=True)
        if self.ctl is not None:
            self.ctl.wait(timeout=5)


def press(term: Term, key: str, still_s: float = 0.15,
          timeout_s: float = 20.0) -> tuple[float, float, int] | None:
    """(ms to the first change of the screen, ms to the last change, how many changes were seen)
    for one key; None when the screen did not change within ``timeout_s``."""
    before = term.screen()
    t0 = time.perf_counter()
    term.keys(key)
    first = last = None
    cur = before
    changes = 0
    while time.perf_counter() - t0 < timeout_s:
        s = term.screen()
        now = time.perf_counter()
        if s != cur:
            cur = s
            last = now
            changes += 1
            if first is None:
                first = now
        elif first is not None and now - last >= still_s:
            break
        time.sleep(0.002)
    if first is None:
        return None
    return (first - t0) * 1000, (last - t0) * 1000, changes


def unmeasured(term: Term, key: str, still_s: float = 0.3, timeout_s: float = 5.0) -> None:
    """Press ``key`` and wait until the screen has been still for ``still_s`` (it may not change at all)."""
    term.keys(key)
    t0 = last = time.perf_counter()
    cur = term.screen()
    while time.perf_counter() - t0 < timeout_s and time.perf_counter() - last < still_s:
        time.sleep(0.01)
        s = term.screen()
        if s != cur:
            cur, last = s, time.perf_counter()


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))]


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("session")
    p.add_argument("--size", default="160x50")
    p.add_argument("--repeats", type=int, default=30, help="cursor moves per table")
    p.add_argument("--wait", type=float, default=4.0,
                   help="seconds between the first frame and the first key (the app parses the rest of a "
                        "large session in the background meanwhile; 0 measures keys during that)")
    p.add_argument("--poll", choices=("control", "spawn"), default="control",
                   help="how the screen is read: one tmux control-mode client (default), or a tmux "
                        "process per read (the earlier way; it costs the 2-core box ~2 ms of CPU a read)")
    p.add_argument("--cmd", default=None,
                   help="shell command that opens a session (SESSION appended, or put where {session} is); "
                        "default: this checkout's python -m inductor_step --open")
    p.add_argument("--json", default=None, help="also write the per-key times to this file")
    a = p.parse_args()
    w, h = map(int, a.size.split("x"))
    session = os.path.abspath(a.session)
    cmd = open_command(a.cmd, session) + "; sleep 30"
    t0 = time.perf_counter()
    term = Term(cmd, w, h, a.poll)
    try:
        while not has_first_frame(term.screen(plain=True)):
            if time.perf_counter() - t0 > 60:
                raise TimeoutError("no first frame in 60 s")
            time.sleep(0.01)
        first_ms = (time.perf_counter() - t0) * 1000
        with open(session, "rb") as f:
            fmt = json.loads(f.readline()).get("format")
        print(f"{a.session} ({os.path.getsize(session) / 1e6:.1f} MB, {fmt}) at {w}x{h}, poll={a.poll}: "
              f"first frame {first_ms:.0f} ms")
        time.sleep(max(a.wait, 0.3))  # let the first detail update (and, with --wait, the preload) finish
        # Each series of cursor moves starts at the table's first row (Home, not measured): a
        # pane shown again puts its cursor on the selected buffer's row, which can be the last row of a small
        # table, where Down changes nothing; from row 0 both UIs move over the same rows.
        plan = [("next stop (n)", ["n"] * 5),
                ("back to dynamo (1)", ["1"]),
                (None, ["Home"]),
                ("move in FX nodes (Down)", ["Down"] * a.repeats),
                ("switch to lowering (3)", ["3"]),
                (None, ["Home"]),
                ("move in IR buffers (Down)", ["Down"] * a.repeats),
                ("switch to scheduling (4)", ["4"]),
                (None, ["Home"]),
                ("move in scheduler nodes (Down)", ["Down"] * a.repeats),
                ("switch to codegen (6)", ["6"]),
                (None, ["Home"]),
                ("move in kernels (Down)", ["Down"] * a.repeats),
                ("switch to linked (8)", ["8"]),
                (None, ["Home"]),
                ("move in linked buffers (Down)", ["Down"] * a.repeats),
                # n steps through recorded stops, and the linked view is none: back to codegen first
                ("back to codegen (6)", ["6"]),
                ("next graph's stops (n)", ["n"] * 6)]
        rows: list[tuple[str, list[float], list[float], list[int]]] = []
        missed: dict[str, int] = {}
        for label, keys in plan:
            if label is None:
                for k in keys:
                    unmeasured(term, k)
                continue
            firsts, settled, changes = [], [], []
            for k in keys:
                r = press(term, k)
                if r is not None:
                    firsts.append(r[0])
                    settled.append(r[1])
                    changes.append(r[2])
                else:
                    missed[label] = missed.get(label, 0) + 1
            rows.append((label, firsts, settled, changes))
    finally:
        term.close()
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"session": session, "cmd": cmd, "size": a.size, "first_frame_ms": first_ms,
                       "actions": [{"action": lbl, "first_ms": fs, "settled_ms": ss, "changes": cs}
                                   for lbl, fs, ss, cs in rows], "missed": missed}, f)
    every_first = [x for _, f, _, _ in rows for x in f]
    every_settled = [x for _, _, s, _ in rows for x in s]
    every_changes = [x for _, _, _, c in rows for x in c]
    print(f"{'action':<34}{'n':>4} {'first change: median':>21} {'p95':>7} {'settled: median':>16} {'p95':>7}"
          f" {'changes':>8}")
    for label, f, s, c in rows + [("all keys", every_first, every_settled, every_changes)]:
        if f:
            print(f"{label:<34}{len(f):>4} {statistics.median(f):>21.0f} {pct(f, 0.95):>7.0f} "
                  f"{statistics.median(s):>16.0f} {pct(s, 0.95):>7.0f} {statistics.mean(c):>8.1f}")
    moves = [x for lbl, f, _, _ in rows if "move" in lbl for x in f]
    if moves:
        print(f"{'cursor moves only':<34}{len(moves):>4} {statistics.median(moves):>21.0f} {pct(moves, 0.95):>7.0f}")
    for label, n in missed.items():
        print(f"no screen change in 20 s: {n} key(s) of '{label}' (left out above)")


if __name__ == "__main__":
    main()
