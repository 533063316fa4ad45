"""``inductor-step export``: a recorded session as a TORCH_TRACE structured log (standard library only).

The output is the format torch writes with ``TORCH_TRACE=<dir>`` (``torch._logging._internal``:
``trace_structured`` records, formatted by ``TorchLogsFormatter(trace=True)``), so ``tlparse``
and other tools that read torch's trace read it::

    V1121 08:54:44.670000 9664 inductor_step/s.jsonl:17] {"dynamo_output_graph": {...}, "frame_id": 0, "frame_compile_id": 0, "attempt": 0, "has_payload": "<md5>"}
    \t<payload line>
    \t<payload line>

One glog-style line per event: ``V<MMDD HH:MM:SS.ffffff> <pid> <file>:<line>] <metadata JSON>`` (the
file:line names the session file and the line the event came from); the payload follows, one
tab-prefixed line per payload line, and ``has_payload`` is the MD5 of the payload text.

Torch's own event names are used where one exists (``dynamo_start``, ``dynamo_output_graph``,
``aot_*_graph``, ``inductor_post_grad_graph``, ``fx_graph_runnable``, ``inductor_output_code``,
``dynamo_cpp_guards_str``, ``compilation_metrics``, ...); the levels only inductor-step captures go in as
``artifact`` events with string payloads: ``inductor_step_ir_buffers``, ``inductor_step_scheduler_pre_fusion``,
``inductor_step_scheduler_post_fusion``, ``inductor_step_fusion_decisions``, ``inductor_step_loopbody``,
``inductor_step_run`` and ``inductor_step_error``.

A job (``X.job.json`` naming one session per rank) exports as one log per rank,
``dedicated_log_torch_trace_rank_{N}_X.log``, each event carrying ``"rank": N`` as torch writes it
under torchrun: what ``tlparse DIR --all-ranks-html`` reads (:func:`export_job`).  Each graph that
calls collectives gets torch's ``inductor_collective_schedule`` artifact, rebuilt from the wrapper's
calls (:func:`collective_schedule`), which tlparse's collective-schedule divergence check compares;
a rank the job file says died ends with an ``inductor_step_rank_state`` artifact (the job file's message).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
from typing import Any

from inductor_step.session.store import load_session
from inductor_step.session.text import fusion_text, ir_buffers_text, loopbody_text, run_text, scheduler_text

#: artifact names of the levels torch has no event for
ARTIFACTS = {
    "lowering": "inductor_step_ir_buffers",
    "pre_fusion": "inductor_step_scheduler_pre_fusion",
    "post_fusion": "inductor_step_scheduler_post_fusion",
    "fusion": "inductor_step_fusion_decisions",
    "loopbody": "inductor_step_loopbody",
    "run": "inductor_step_run",
    "error": "inductor_step_error",
}

_AOT_EVENTS = (("joint", "aot_joint_graph"), ("forward", "aot_forward_graph"),
               ("backward", "aot_backward_graph"), ("inference", "aot_inference_graph"))

_CID_RE = re.compile(r"^\[(?:!(\d+)/)?(\d+|-)/(\d+|-)(?:_(\d+))?\]$")


def compile_id_fields(compile_id: str | None) -> dict[str, int]:
    """``"[1/0]"`` -> ``{"frame_id": 1, "frame_compile_id": 0, "attempt": 0}`` (torch's envelope keys);
    ``{}`` for anything that is not a compile id."""
    m = _CID_RE.match(str(compile_id or "").strip())
    if not m:
        return {}
    out: dict[str, int] = {}
    if m.group(1) is not None:
        out["compiled_autograd_id"] = int(m.group(1))
    if m.group(2) != "-":
        out["frame_id"] = int(m.group(2))
    if m.group(3) != "-":
        out["frame_compile_id"] = int(m.group(3))
    out["attempt"] = int(m.group(4) or 0)
    return out


# --------------------------------------------------------------------------- writer

class _TraceWriter:
    def __init__(self, f: Any, *, pid: int, source: str, base_time: float, rank: int | None = None) -> None:
        self.f = f
        self.rank = rank
        self.pid = pid
        self.source = source
        self.base = base_time
        self.t = 0.0
        self.lineno = 0
        self.interned: dict[str, int] = {}
        self.count = 0

    def _prefix(self) -> str:
        ts = self.base + self.t
        lt = time.localtime(ts)
        us = int(round((ts - int(ts)) * 1e6)) % 1_000_000
        return f"V{time.strftime('%m%d %H:%M:%S', lt)}.{us:06d} {self.pid} {self.source}:{self.lineno}]"

    def intern(self, s: str) -> int:
        if s not in self.interned:
            self.interned[s] = len(self.interned)
            self.f.write(f"{self._prefix()} {json.dumps({'str': [s, self.interned[s]]})}\n")
            self.count += 1
        return self.interned[s]

    def event(self, name: str, metadata: Any, compile_id: str | None, payload: str | None = None) -> None:
        record: dict[str, Any] = {name: metadata}
        if self.rank is not None:
            record["rank"] = self.rank  # torch adds it once the process group exists (dist.get_rank())
        record.update(compile_id_fields(compile_id))
        if payload is not None:
            payload = payload.replace("\r\n", "\n").replace("\r", "\n")
            record["has_payload"] = hashlib.md5(payload.encode("utf-8")).hexdigest()
        line = f"{self._prefix()} {json.dumps(record, default=repr)}"
        if payload is not None:
            line += "".join(f"\n\t{ln}" for ln in payload.split("\n"))
        self.f.write(line + "\n")
        self.count += 1

    def artifact(self, name: str, compile_id: str | None, payload: str, encoding: str = "string") -> None:
        self.event("artifact", {"name": name, "encoding": encoding}, compile_id, payload)


def _graph_counts(dynamo_stop: dict[str, Any] | None) -> dict[str, int]:
    nodes = ((dynamo_stop or {}).get("graph") or {}).get("nodes")
    if not isinstance(nodes, list):
        return {}
    ops = [n.get("op") for n in nodes if isinstance(n, dict)]
    return {
        "graph_op_count": sum(1 for o in ops if o in ("call_function", "call_method", "call_module")),
        "graph_node_count": len(ops),
        "graph_input_count": sum(1 for o in ops if o == "placeholder"),
    }


def _sizes(nodes: Any) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    for n in nodes if isinstance(nodes, list) else []:
        if isinstance(n, dict) and isinstance(n.get("shape"), list):
            out[str(n.get("name"))] = [int(s) if isinstance(s, str) and s.lstrip("-").isdigit() else s for s in n["shape"]]
    return out


def _fail(err: dict[str, Any]) -> tuple[str, str]:
    msg = str(err.get("message") or "error")
    typ, _, reason = msg.partition(": ")
    if not reason or " " in typ:
        return "Error", msg
    return typ, reason


_COLLECTIVE_CALL = re.compile(r"\btorch\.ops\._?c10d_functional\.(\w+)\.default\(")


def collective_schedule(wrapper: str) -> list[str]:
    """The collectives a graph's wrapper (Inductor's output code) calls, in call order, spelled as
    torch's ``inductor_collective_schedule`` artifact spells them (``python_kernel_name`` of each
    ``ir._CollectiveKernel`` scheduler node, ``torch.ops._c10d_functional.all_reduce_.default``,
    ``...wait_tensor.default``): each such node is one call in the wrapper, in scheduler order.
    Comment lines (``# File: ...``, provenance handles) are skipped."""
    out: list[str] = []
    for line in wrapper.splitlines():
        code = line.split("#", 1)[0]
        out.extend(f"torch.ops._c10d_functional.{m.group(1)}.default" for m in _COLLECTIVE_CALL.finditer(code))
    return out


def rank_log_name(rank: int, stem: str) -> str:
    """The file name tlparse's ``--all-ranks-html`` finds rank ``rank``'s log by (it takes the number
    after ``dedicated_log_torch_trace_rank_``, up to the next ``_``; torch writes
    ``dedicated_log_torch_trace_rank_{rank}_{random}.log``)."""
    return f"dedicated_log_torch_trace_rank_{rank}_{re.sub(r'[^0-9A-Za-z.-]+', '-', stem)}.log"


def _session_rank(header: dict[str, Any]) -> int | None:
    dist = header.get("distributed")
    rank = dist.get("rank") if isinstance(dist, dict) else None
    return rank if isinstance(rank, int) and not isinstance(rank, bool) else None


def export_trace(session_path: str, out_dir: str, *, rank: int | None = None, log_name: str | None = None,
                 rank_note: str | None = None) -> str:
    """Write ``session_path`` as a TORCH_TRACE log into ``out_dir`` (created if needed); return the log's path.

    ``rank``: the ``rank`` every event carries, as torch writes it in a distributed process (default:
    the header's ``distributed.rank``; none for a single-process session); ``log_name``: the log's
    file name (default ``dedicated_log_torch_trace_<session stem>.log``); ``rank_note``: a line
    ending the log as an ``inductor_step_rank_state`` artifact of the last graph the session names
    (the job file's word on a rank that died).
    Raises OSError (unreadable session, unwritable ``out_dir``) or ValueError (not a session).
    """
    msgs = load_session(session_path)
    header = msgs[0]
    if rank is None:
        rank = _session_rank(header)
    stem = os.path.splitext(os.path.basename(session_path))[0]
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, log_name or f"dedicated_log_torch_trace_{stem}.log")
    last_t = max((m["t"] for m in msgs if isinstance(m.get("t"), (int, float))), default=0.0)
    try:
        end = os.path.getmtime(session_path)
    except OSError:
        end = time.time()
    pid = header.get("pid") if isinstance(header.get("pid"), int) else 0
    source = "inductor_step/" + re.sub(r"[:\s\]]", "_", os.path.basename(session_path))
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        ex = _TraceExport(_TraceWriter(f, pid=pid, source=source, base_time=end - last_t, rank=rank), msgs)
        for lineno, m in enumerate(msgs, start=1):
            ex.message(lineno, m)
        ex.finish(last_t, rank_note)
    return path


class _TraceExport:
    """One session's messages written as torch's trace events, in order, through a :class:`_TraceWriter`:
    a frame's ``dynamo_start`` before its first event, each event once per frame compile, and the
    ``compilation_metrics`` (and ``bwd_compilation_metrics``) torch ends a compile with."""

    def __init__(self, w: _TraceWriter, msgs: list[dict[str, Any]]) -> None:
        self.w = w
        self.msgs = msgs
        self.header = msgs[0]
        self.started: set[str] = set()
        self.dynamo_stop: dict[str, dict[str, Any]] = {}
        self.emitted: set[tuple[str, str]] = set()       # (cid, event) emitted once per frame compile
        self.metrics_done: set[str] = set()
        # cids whose session holds torch's own collective schedule (an agent that records it)
        self.own_schedule = {str(m.get("compile_id")) for m in msgs
                             if m.get("type") == "artifact" and m.get("name") == "inductor_collective_schedule"}
        self.backward_graphs: list[tuple[str, int | None]] = []  # (compile id, part): protocol.graph_key
        self.bwd_fail: dict[tuple[str, int | None], dict[str, Any]] = {}

    def start(self, cid: str, stop: dict[str, Any] | None) -> None:
        """Write the frame's ``dynamo_start`` once: its stack frame is the script, at the first user
        line a node of the dynamo ``stop`` names (line 0 without one)."""
        if cid in self.started:
            return
        self.started.add(cid)
        w = self.w
        name = f"<frame {compile_id_fields(cid).get('frame_id', '?')}>"
        frame = {"line": 0, "name": name, "filename": w.intern(str(self.header.get("script") or "<script>"))}
        nodes = ((stop or {}).get("graph") or {}).get("nodes")
        for n in nodes if isinstance(nodes, list) else []:
            ul = n.get("user_line") if isinstance(n, dict) else None
            if isinstance(ul, str) and ":" in ul and n.get("op") != "placeholder":
                file, _, line = ul.rpartition(":")
                if line.isdigit():
                    frame = {"line": int(line), "name": name, "filename": w.intern(file)}
                    break
        w.event("dynamo_start", {"stack": [frame]}, cid)

    def metrics(self, cid: str, err: dict[str, Any] | None = None) -> None:
        """Write the frame's ``compilation_metrics`` once: its graph counts, and the failure of ``err``."""
        if cid in self.metrics_done:
            return
        self.metrics_done.add(cid)
        script = self.header.get("script")
        md: dict[str, Any] = {"compile_id": cid.strip("[]"), "co_name": None,
                              "co_filename": script if isinstance(script, str) else None,
                              "co_firstlineno": None}
        md.update(_graph_counts(self.dynamo_stop.get(cid)))
        md.update({"fail_type": None, "fail_reason": None, "non_compliant_ops": [],
                   "compliant_custom_ops": [], "restart_reasons": [],
                   "inductor_step": "minimal metrics: the session records no compile times"})
        if err is not None:
            md["fail_type"], md["fail_reason"] = _fail(err)
        self.w.event("compilation_metrics", md, cid)

    def message(self, lineno: int, m: dict[str, Any]) -> None:
        """Write the events of session line ``lineno`` (message ``m``); a what-if recompile's messages
        are no compile of the script's and write none."""
        w = self.w
        w.lineno = lineno
        if isinstance(m.get("t"), (int, float)):
            w.t = float(m["t"])
        typ = m.get("type")
        if m.get("variant"):
            return
        cid = str(m.get("compile_id")) if m.get("compile_id") else None
        if typ == "stop" and cid:
            self.stop(cid, m)
        elif typ == "artifact" and isinstance(m.get("payload"), str) and m.get("name"):
            if cid:
                self.start(cid, None)
            w.artifact(str(m["name"]), cid, m["payload"])
        elif typ == "provenance" and isinstance(m.get("mappings"), str):
            try:
                json.loads(m["mappings"])
            except ValueError:
                return
            w.artifact("inductor_provenance_tracking_node_mappings", cid, m["mappings"], encoding="json")
        elif typ == "guards" and cid and isinstance(m.get("text"), str):
            w.event("dynamo_cpp_guards_str", {}, cid, m["text"])
            self.metrics(cid)
        elif typ == "error":
            self.error(cid, m)
        elif typ == "run" and cid:
            w.artifact(ARTIFACTS["run"] + (f"_{m['subgraph']}" if m.get("subgraph") else ""), cid, run_text(m))

    def error(self, cid: str | None, m: dict[str, Any]) -> None:
        """An ``error`` message: its artifact, and the failure its graph's compile metrics report."""
        kind = m.get("graph_kind")
        tb = m.get("traceback") if isinstance(m.get("traceback"), str) else ""
        self.w.artifact(ARTIFACTS["error"], cid,
                        f"# error in {m.get('stage')} of {cid or '-'} {kind or ''}\n{m.get('message')}\n\n{tb}")
        if cid and kind == "backward":
            self.bwd_fail[(cid, m.get("part"))] = m
            if (cid, m.get("part")) not in self.backward_graphs:
                self.backward_graphs.append((cid, m.get("part")))
        elif cid:
            self.metrics(cid, m)

    def dynamo(self, cid: str, m: dict[str, Any]) -> None:
        """A dynamo ``stop``: the frame's start, its ``dynamo_output_graph``, graph break and recompile
        reasons, each once per frame compile (a backward's stop repeats its frame's graph: skipped)."""
        w = self.w
        if m.get("graph_kind") == "backward" and cid in self.started:
            return  # the frame's Dynamo graph again (the backward has none of its own)
        self.dynamo_stop.setdefault(cid, m)
        self.start(cid, m)
        g = m.get("graph") or {}
        if (cid, "dynamo_output_graph") not in self.emitted and isinstance(g.get("code"), str):
            self.emitted.add((cid, "dynamo_output_graph"))
            w.event("dynamo_output_graph", {"sizes": _sizes(g.get("nodes"))}, cid, g["code"])
        if (cid, "breaks") not in self.emitted:
            self.emitted.add((cid, "breaks"))
            for gb in m.get("graph_breaks") or []:
                w.artifact("dynamo_graph_break_reason", cid, gb if isinstance(gb, str) else json.dumps(gb, indent=0))
            for rr in m.get("recompile_reasons") or []:
                w.artifact("recompile_reasons", cid, rr if isinstance(rr, str) else json.dumps(rr, indent=0),
                           encoding="json" if not isinstance(rr, str) else "string")

    def stop(self, cid: str, m: dict[str, Any]) -> None:
        """A ``stop`` message: torch's event or inductor-step's artifact for its stage; a higher-order
        op's subgraph gets its own artifacts, named for it."""
        stage = m.get("stage")
        if stage == "dynamo":
            self.dynamo(cid, m)
            return
        w = self.w
        self.start(cid, None)
        sub = m.get("subgraph")
        art = (lambda name, sub=sub: f"{name}_{sub}") if sub else (lambda name: name)
        if stage == "aot":
            aot = m.get("aot_graphs") if isinstance(m.get("aot_graphs"), dict) else {}
            for key, event in _AOT_EVENTS:  # once per graph of the frame compile (a DDP bucket's
                # submodule has its own: protocol.graph_key's part), as torch logs them
                if isinstance(aot.get(key), str) and (cid, f"{event} {m.get('part')}") not in self.emitted:
                    self.emitted.add((cid, f"{event} {m.get('part')}"))
                    w.event(event, {}, cid, aot[key])
            post = m.get("post_grad") if isinstance(m.get("post_grad"), dict) else {}
            if isinstance(post.get("code"), str):
                w.artifact(art("inductor_post_grad_graph"), cid, post["code"])
        elif stage == "lowering":
            w.artifact(art(ARTIFACTS["lowering"]), cid, ir_buffers_text(m))
        elif stage == "scheduling":
            w.artifact(art(ARTIFACTS["pre_fusion"]), cid, scheduler_text(m, "before"))
            w.artifact(art(ARTIFACTS["post_fusion"]), cid, scheduler_text(m, "after"))
            w.artifact(art(ARTIFACTS["fusion"]), cid, fusion_text(m))
        elif stage == "loopbody":
            w.artifact(art(ARTIFACTS["loopbody"]), cid, loopbody_text(m))
        elif stage == "codegen" and sub:
            if isinstance(m.get("function_lines"), list) and isinstance(m.get("wrapper"), str):
                first, last = m["function_lines"]  # its function: the output code is its parent's
                w.artifact(art("inductor_subgraph_code"), cid, "\n".join(m["wrapper"].split("\n")[first - 1:last]))
        elif stage == "codegen":
            self.codegen(cid, m)

    def codegen(self, cid: str, m: dict[str, Any]) -> None:
        """A graph's codegen ``stop``: its collective schedule (unless the session holds torch's own)
        and ``inductor_output_code``; a backward graph is noted for its ``bwd_compilation_metrics``."""
        w = self.w
        if isinstance(m.get("wrapper"), str):
            sched = collective_schedule(m["wrapper"]) if cid not in self.own_schedule else []
            if sched:  # torch logs it after scheduling, before the output code
                w.artifact("inductor_collective_schedule", cid,
                           "[\n" + ",\n".join(json.dumps(s) for s in sched) + "\n]", encoding="json")
            op = m.get("output_path")
            w.event("inductor_output_code", {"filename": op, "file_path": op}, cid, m["wrapper"])
        if m.get("graph_kind") == "backward" and (cid, m.get("part")) not in self.backward_graphs:
            self.backward_graphs.append((cid, m.get("part")))

    def finish(self, last_t: float, rank_note: str | None) -> None:
        """End the log at the session's last time: the metrics of every frame not yet ended, one
        ``bwd_compilation_metrics`` per backward compile, and ``rank_note`` as an
        ``inductor_step_rank_state`` artifact of the last graph the session names."""
        w, msgs = self.w, self.msgs
        w.lineno = len(msgs)
        w.t = last_t
        for cid in sorted(self.started - self.metrics_done):
            self.metrics(cid)
        for cid, part in self.backward_graphs:  # one per backward compile (a DDP frame compiles one per bucket)
            md: dict[str, Any] = {"compile_id": cid.strip("[]"), "inductor_compile_time_s": None,
                                  "code_gen_time_s": None, "fail_type": None, "fail_reason": None}
            if (cid, part) in self.bwd_fail:
                md["fail_type"], md["fail_reason"] = _fail(self.bwd_fail[(cid, part)])
            w.event("bwd_compilation_metrics", md, cid)
        if rank_note:  # under the graph the rank was last seen in (a graph-less event would be a
            # compile id of its own, '[-/-]', that tlparse counts as a compile-id divergence)
            last = next((str(m["compile_id"]) for m in reversed(msgs) if m.get("compile_id") and not m.get("variant")), None)
            w.artifact("inductor_step_rank_state", last, rank_note)


# --------------------------------------------------------------------------- jobs

def export_job(job_path: str, out_dir: str) -> tuple[list[str], list[str]]:
    """Write each rank's session of the job file ``job_path`` as a TORCH_TRACE log into ``out_dir``
    (:func:`rank_log_name`; tlparse: ``tlparse OUT_DIR --all-ranks-html``).  Returns ``(logs written,
    problems)``: a problem is one line naming a rank whose session is missing or unreadable; the
    other ranks are exported all the same.  A rank the job file says died ends its log with an
    ``inductor_step_rank_state`` artifact holding the job file's message.
    Raises ValueError (not a job file), OSError (unreadable job file, unwritable ``out_dir``).
    """
    from inductor_step.session.format import job_paths, read_job  # noqa: PLC0415

    job, sessions = read_job(job_path)
    base = os.path.basename(job_paths(job_path)[1])
    os.makedirs(out_dir, exist_ok=True)
    states = {int(r["rank"]): r for r in job.get("ranks") or [] if isinstance(r, dict) and "rank" in r}
    logs: list[str] = []
    problems: list[str] = []
    for rank in sorted(set(states) | set(sessions)):
        st = states.get(rank, {})
        session = sessions.get(rank)
        if session is None:
            problems.append(f"rank {rank}: the job file names no session for it (state {st.get('state', '?')})")
            continue
        note = None
        if st.get("state") == "died":
            note = f"rank {rank} died: {st.get('message') or 'no message'} (from the job file {os.path.basename(job_path)})"
        try:
            if not os.path.exists(session):
                raise FileNotFoundError(f"no such session file: {session}")
            logs.append(export_trace(session, out_dir, rank=rank, log_name=rank_log_name(rank, base), rank_note=note))
        except (OSError, ValueError) as e:
            problems.append(f"rank {rank}: {e}")
    return logs, problems
