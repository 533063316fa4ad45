"""Timing each graph in a process of its own, so a crash in a kernel cannot take the agent with it.

Timing Hugging Face GPT-2's ``[1/0] backward`` on an H100 killed the agent with SIGSEGV
inside ``aten._scaled_dot_product_efficient_attention_backward`` (fed a CUDA philox seed where the
op reads a CPU one from the host); the session lost the graph's timing, the graphs after it and the
agent.  Now the agent hands each graph to a worker process (``python -m
inductor_step.tracer.timing.worker``): :class:`TimingWorker` starts one, sends it one graph at a
time, relays its progress lines and returns its result.  A worker that dies (a signal, ``os._exit``,
an exhausted time limit) costs only the graph it was timing: that graph is reported as failed with
the signal, the kernel or ATen op it was running (read from the worker's ``faulthandler`` dump and
the output-code line it points at) and the step, and the next graph gets a fresh worker.

Standard library and torch only; the worker imports :func:`tracer.timing.harness.time_graph`.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any, Callable

TIMEOUT_S = float(os.environ.get("INDUCTOR_STEP_TIMING_TIMEOUT", "600"))  # one graph's timing, at most (s; --timing-limit)
CANCEL_GRACE_S = 1.0  # after `c`, how long the worker may take to stop by itself before it is killed (s)


def _signal_name(rc: int) -> str:
    try:
        return signal.Signals(-rc).name
    except ValueError:
        return f"signal {-rc}"


_OP_ON_LINE = re.compile(r"(torch\.ops\.(\w+)\.(\w+)(?:\.\w+)?)\(|extern_kernels\.(\w+)\(|\b(\w+)\.run\(|\b(cpp_\w+)\(")


def crash_site(fault_text: str, output_path: str) -> tuple[str | None, int | None]:
    """``(what, line)``: the kernel or ATen op the worker was running when it died, read from its
    ``faulthandler`` dump (the innermost frame in ``output_path``) and that line of the output code:
    ``aten._scaled_dot_product_efficient_attention_backward``, ``extern_kernels.mm``, a Triton or C++
    kernel's name; ``(None, None)`` when no frame of the output code is in the dump."""
    try:
        with open(output_path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError:
        lines = []
    first = None
    for m in re.finditer(r'File "([^"]+)", line (\d+)', fault_text):  # the most recent call first
        if os.path.abspath(m.group(1)) != os.path.abspath(output_path):
            continue
        line = int(m.group(2))
        first = first or line
        op = _OP_ON_LINE.search(lines[line - 1]) if 0 < line <= len(lines) else None
        if op:
            if op.group(1):
                return f"{op.group(2)}.{op.group(3)}", line
            return (f"extern_kernels.{op.group(4)}" if op.group(4) else op.group(5) or op.group(6)), line
    return None, first


class TimingWorker:
    """A worker process that times graphs one at a time (:func:`tracer.timing.harness.time_graph`).

    ``time(...)`` takes time_graph's arguments and returns its result, or raises
    :class:`TimingFailed` with a one-line reason (``crashed: SIGSEGV in aten.X (output code line N,
    while recording the kernels' calls)``, ``timed out after 900 s``, or the exception the harness
    raised).  After a crash the next ``time`` starts a new worker.  ``close()`` ends it.
    """

    def __init__(self) -> None:
        self.proc: subprocess.Popen | None = None
        self.dir = tempfile.mkdtemp(prefix="inductor_step_timing_")
        self.reader: Any = None
        self.n = 0

    def _start(self) -> None:
        rfd, wfd = os.pipe()
        env = dict(os.environ)
        # the worker imports what this process imports (the package, the script's own path first)
        env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
        env.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")  # kernels load from Inductor's cache: no pool
        env["PYTHONFAULTHANDLER"] = ""  # the worker enables faulthandler itself, into a file
        env["INDUCTOR_STEP_PARENT_PID"] = str(os.getpid())  # the worker ends with us (tracer.lifetime)
        self.fault_path = os.path.join(self.dir, f"fault-{self.n}.txt")
        self.log_path = os.path.join(self.dir, f"log-{self.n}.txt")
        self.n += 1
        log = open(self.log_path, "wb")  # noqa: SIM115 - the worker's stdout/stderr, for the reason on failure
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "inductor_step.tracer.timing.worker", str(wfd), self.fault_path],
                stdin=subprocess.PIPE, stdout=log, stderr=log, pass_fds=(wfd,), env=env, text=True)
        finally:
            os.close(wfd)
            log.close()
        self.reader = os.fdopen(rfd, "r", encoding="utf-8")

    def _stop(self) -> None:
        if self.proc is not None:
            try:
                if self.proc.poll() is None:
                    self.proc.stdin.close()  # type: ignore[union-attr]
                    try:
                        self.proc.wait(2)  # an idle worker ends at once; a busy one is killed
                    except subprocess.TimeoutExpired:
                        self.proc.kill()
                        self.proc.wait()
            except Exception:  # noqa: BLE001
                pass
        if self.reader is not None:
            try:
                self.reader.close()
            except Exception:  # noqa: BLE001
                pass
        self.proc, self.reader = None, None

    def close(self) -> None:
        """End the worker and remove its files."""
        self._stop()
        import shutil  # noqa: PLC0415

        shutil.rmtree(self.dir, ignore_errors=True)

    def _tail(self, path: str, n: int = 2000) -> str:
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                return f.read()[-n:]
        except OSError:
            return ""

    def time(self, output_path: str, eager_gm: Any, device: str, *, cancel: threading.Event | None = None,
             progress: Callable[[str], None] | None = None, num_gb: dict[str, float] | None = None,
             script: dict[str, Any] | None = None, timeout_s: float = TIMEOUT_S,
             compare: dict[str, Any] | None = None, pair: dict[str, Any] | None = None,
             dynamo: dict[str, Any] | None = None) -> dict[str, Any]:
        """Time one graph in the worker; see :func:`tracer.timing.harness.time_graph` for the
        arguments and the result, which gets ``isolated`` (how it was timed) and, where the post-grad
        graph could not be sent to the worker, ``decomposed_note``.  ``compare`` (a what-if variant:
        ``{"original_path", "eager_gm"}``) adds ``numerics`` (tracer.whatif.compare_outputs).  ``pair`` (
        ``{"output_path", "eager_gm", "script"}`` of a second graph): the two are timed round by round instead
        (:func:`tracer.timing.interleave.pair_rounds`'s result).  ``dynamo``: Dynamo's graph and its first-call
        inputs, the eager baseline (:func:`tracer.timing.eager_user.user_eager`), sent as it is (the caller checked
        it pickles: :func:`tracer.timing.eager_user.sendable_reason`)."""
        import torch  # noqa: PLC0415

        job = os.path.join(self.dir, f"job-{time.monotonic_ns()}.pt")
        spec, note = _job_spec(output_path, eager_gm, device, num_gb, script, compare, pair, dynamo)
        torch.save(spec, job)
        proc = self._send(job)
        state: dict[str, Any] = {"step": "starting the timing process", "done": False, "timed_out": False}
        threading.Thread(target=_watch, args=(proc, state, cancel, timeout_s), daemon=True).start()
        try:
            result, error = self._read(state, progress)
        finally:
            state["done"] = True
            try:
                os.remove(job)
            except OSError:
                pass
        if result is not None:
            result["isolated"] = f"timed in a process of its own (pid {proc.pid}), so a crash there loses only this graph"
            if note:  # the decomposed post-grad graph's, not eager's (eager is Dynamo's graph, sent as `dynamo`)
                result["decomposed_note"] = note
                if result.get("decomposed_ms") is None:
                    result["decomposed_error"] = f"decomposed post-grad graph not timed: {note}"
            return result
        if error is not None:
            raise TimingFailed(error[0], error[1])
        raise self._died(proc, state, output_path, timeout_s)

    def _send(self, job: str) -> subprocess.Popen:
        """Hand the job file ``job`` to the worker (a new one where none runs); return its process."""
        if self.proc is None or self.proc.poll() is not None:
            self._stop()
            self._start()
        assert self.proc is not None and self.proc.stdin is not None
        self.proc.stdin.write(job + "\n")
        self.proc.stdin.flush()
        return self.proc

    def _read(self, state: dict[str, Any], progress: Callable[[str], None] | None
              ) -> tuple[dict[str, Any] | None, tuple[str, str] | None]:
        """Read the worker's lines until its result or error, relaying each progress line (and keeping
        it in ``state["step"]``); ``(result, None)``, ``(None, (message, traceback))``, or ``(None, None)``
        when the pipe ended first (the worker died)."""
        for line in self.reader:
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            if "progress" in msg:
                state["step"] = msg["progress"]
                if progress is not None:
                    progress(msg["progress"])
            elif "result" in msg:
                return msg["result"], None
            elif "error" in msg:
                return None, (msg["error"], msg.get("traceback", ""))
        return None, None

    def _died(self, proc: subprocess.Popen, state: dict[str, Any], output_path: str, timeout_s: float) -> "TimingFailed":
        """The failure of a worker that died (a signal, ``os._exit``, the time limit, a cancel that
        did not stop in time): the kernel or op it was running and the step, with its fault dump and
        log; the worker is stopped."""
        try:
            rc = proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            rc = proc.wait()
        fault = self._tail(self.fault_path, 20000)
        log = self._tail(self.log_path)
        self._stop()
        what, line = crash_site(fault, output_path)
        where = (f" in {what}" if what else "") + (f" (output code line {line}" if line else " (") \
            + f"{', ' if line else ''}while {state['step']})"
        if state.get("cancelled"):
            return TimingFailed(f"cancelled{where}", "", cancelled=True)
        if state["timed_out"]:
            reason = (f"timed out: the per-graph limit of {timeout_s:g} s ran out{where} "
                      "(--timing-limit S sets it)")
        elif rc < 0:
            reason = f"crashed: {_signal_name(rc)}{where}"
        else:
            reason = f"the timing process exited with status {rc}{where}"
        return TimingFailed(reason, (fault or "") + ("\n" + log if log else ""), crashed=not state["timed_out"],
                            signal=_signal_name(rc) if rc < 0 and not state["timed_out"] else None)


def _job_spec(output_path: str, eager_gm: Any, device: str, num_gb: dict[str, float] | None,
              script: dict[str, Any] | None, compare: dict[str, Any] | None, pair: dict[str, Any] | None,
              dynamo: dict[str, Any] | None) -> tuple[dict[str, Any], str | None]:
    """The job the worker reads (``torch.save``'d): :meth:`TimingWorker.time`'s arguments with the
    script's TF32 settings; the post-grad graph only where it survives a save and load (else the
    returned note says why), ``compare``'s and ``pair``'s graphs only where they save.
    Returns ``(spec, note)``."""
    import io  # noqa: PLC0415

    import torch  # noqa: PLC0415

    spec: dict[str, Any] = {"output_path": output_path, "device": device, "num_gb": num_gb, "script": script,
                            "eager_gm": None, "dynamo": dynamo,
                            # the script's TF32 settings: its matmuls and convolutions ran with them
                            "float32_matmul_precision": torch.get_float32_matmul_precision(),
                            "cudnn_allow_tf32": bool(torch.backends.cudnn.allow_tf32)}
    note = None
    if eager_gm is not None:
        try:
            buf = io.BytesIO()
            torch.save(eager_gm, buf)
            buf.seek(0)
            try:  # and back: a frozen graph's get_attr of a weight Inductor folded away fails only here
                torch.load(buf, weights_only=False)
            except Exception as e:  # noqa: BLE001
                first = str(e).splitlines()[0] if str(e) else ""
                raise RuntimeError(f"{type(e).__name__}: {first} (rebuilding the post-grad graph from its code: a frozen graph's "
                                   "constant that Inductor folded into the compiled code is no longer on the graph)") from e
            spec["eager_gm"] = eager_gm
            from inductor_step.tracer import adapter  # noqa: PLC0415

            spec["triton_side_table"] = adapter.triton_side_table_entries(eager_gm)  # user Triton kernels
        except Exception as e:  # noqa: BLE001
            note = f"the post-grad graph could not be sent to the timing process ({type(e).__name__}: {e})"
    if compare is not None:
        spec["compare"] = dict(compare)
        try:
            torch.save(compare.get("eager_gm"), io.BytesIO())
        except Exception:  # noqa: BLE001 - numerics against the original only
            spec["compare"]["eager_gm"] = None
    if pair is not None:
        spec["pair"] = dict(pair)
        try:
            torch.save(pair.get("eager_gm"), io.BytesIO())
        except Exception:  # noqa: BLE001 - the compiled pair only
            spec["pair"]["eager_gm"] = None
    return spec, note


def _watch(proc: subprocess.Popen, state: dict[str, Any], cancel: threading.Event | None, timeout_s: float) -> None:
    """Run beside the reader (which blocks): on ``cancel``, ask the worker to stop and kill it after
    :data:`CANCEL_GRACE_S`; past ``timeout_s``, kill it; ``state`` records which, and ends the watch when done."""
    t0 = time.monotonic()
    sent_at = None
    while not state["done"] and proc.poll() is None:
        if cancel is not None and cancel.is_set() and sent_at is None:
            try:
                proc.stdin.write("cancel\n")  # type: ignore[union-attr]
                proc.stdin.flush()  # type: ignore[union-attr]
            except Exception:  # noqa: BLE001
                pass
            sent_at = time.monotonic()
        if sent_at is not None and time.monotonic() - sent_at > CANCEL_GRACE_S:
            # the worker checks between kernels only: a whole-graph round or a comparison
            # would keep it past the two seconds `c` promises, so it goes
            state["cancelled"] = True
            proc.kill()
            return
        if time.monotonic() - t0 > timeout_s:
            state["timed_out"] = True
            proc.kill()
            return
        time.sleep(0.05)


class TimingFailed(Exception):
    """A graph could not be timed: ``reason`` (one line), ``detail`` (the worker's traceback, fault
    dump or log tail), ``crashed`` (the worker died), ``signal`` (its name, e.g. ``"SIGSEGV"``)."""

    def __init__(self, reason: str, detail: str = "", crashed: bool = False, signal: str | None = None,
                 cancelled: bool = False):
        super().__init__(reason)
        self.reason, self.detail, self.crashed, self.signal = reason, detail, crashed, signal
        self.cancelled = cancelled  # `c`: the worker was stopped, nothing failed
