"""A graph's memory plan read from its recorded wrapper (no torch, no Textual): every storage's bytes, the live bytes after each statement, the peak.

The plan (:func:`plan`) walks the output code's ``call`` (and, under CUDA graphs or graph partitions, each
``partition_N`` that ``Runner.call`` calls, inlined where it is called) statement by statement, as Inductor's
wrapper codegen wrote it:

- ``buf3 = empty_strided_cuda((8, 256), (256, 1), torch.float32)``: an allocation; its bytes are the storage
  extent of that size and stride (1 + sum((size - 1) * stride), 0 when a size is 0) times the dtype's size;
- ``buf6 = buf4; del buf4  # reuse`` and ``buf6 = reinterpret_tensor(buf4, ...); del buf4  # reuse``: buf6
  reuses buf4's storage (no new bytes);
- ``buf9 = reinterpret_tensor(buf8, ...)`` without ``del``: a view (alias) of buf8's storage;
- ``buf12 = extern_kernels.convolution(...)``, ``buf9 = torch.ops.aten.X.default(...)``, ``buf10 = buf9[0]``:
  an extern kernel or fallback allocates its own output; its bytes come from the lowering stop's layout of that
  buffer (a multi-output's tuple itself holds none);
- ``del buf3``: buf3's name goes; its storage is freed when no name holds it;
- ``return (...)``: the outputs, live past the graph; locals of a function are freed when it returns.

Every figure is planned from the wrapper's allocations, not measured.  Graph inputs (``primals_*``, ``arg*_1``,
``tangents_*``) are the caller's: they are counted apart (:attr:`Plan.inputs_bytes`), never in the live bytes.
Inductor's own estimate (torch/_inductor/memory.py, recorded at the codegen stop where the torch version has it)
is read beside the plan (:attr:`Plan.inductor_estimate`).  A backward's saved activations are the caller's inputs,
but only the graph holds them: its ``del`` frees them, and :attr:`Plan.high_water` counts that.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Any

from inductor_step.session.format.values import DTYPE_BYTES, dtype_bytes, split_args  # noqa: F401 - DTYPE_BYTES re-exported

SOURCE = "planned from the wrapper's allocations (empty_strided, del, # reuse); not measured"
ESTIMATE = "Inductor's estimate: not recorded (torch._inductor.memory.estimate_peak_memory is not in the session)"
_ALLOC = re.compile(r"^(\w+) = (?:torch\.)?empty_strided\w*\(\((.*?)\), \((.*?)\), (?:torch\.)?(\w+)")
_ASSERT = re.compile(r"^assert_size_stride\((\w+), \((.*?)\), \((.*?)\)")
_DEF = re.compile(r"^(\s*)def (call|partition_\d+)\((?:self, )?args\):")
_PART_CALL = re.compile(r"^\(?([\w, ]*?),?\)? = self\.partitions\[(\d+)\]\(")
_NAME = re.compile(r"^[A-Za-z_]\w*$")
_KERNEL_CALL = re.compile(r"^(\w+)\.run\(|^(extern_kernels\.\w+)\(|^(cpp_fused_\w+)\(")


def _eval(expr: str, hints: dict[str, int]) -> int | None:
    """An integer size expression (``"8"``, ``"s0*512"``) with symbols replaced by their hints; None otherwise."""
    try:
        tree = ast.parse(str(expr).strip(), mode="eval").body
    except SyntaxError:
        return None

    def ev(n: ast.AST) -> int | None:
        if isinstance(n, ast.Constant) and isinstance(n.value, int):
            return n.value
        if isinstance(n, ast.Name):
            return hints.get(n.id)
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub):
            v = ev(n.operand)
            return None if v is None else -v
        if isinstance(n, ast.BinOp):
            a, b = ev(n.left), ev(n.right)
            if a is None or b is None:
                return None
            ops = {ast.Add: lambda: a + b, ast.Sub: lambda: a - b, ast.Mult: lambda: a * b,
                   ast.FloorDiv: lambda: a // b if b else None, ast.Mod: lambda: a % b if b else None}
            f = ops.get(type(n.op))
            return f() if f else None
        return None
    return ev(tree)


def _dims(text: str | list[Any] | None, hints: dict[str, int]) -> list[int] | None:
    if text is None:
        return None
    items = [x for x in (text.split(",") if isinstance(text, str) else text) if str(x).strip()]
    out = [_eval(str(x), hints) for x in items]
    return None if any(v is None for v in out) else out  # type: ignore[misc]


def storage_bytes(size: list[int], stride: list[int] | None, dtype: str | None) -> int | None:
    """Bytes of the storage a tensor of ``size`` / ``stride`` / ``dtype`` needs: its storage extent
    (1 + sum((size_i - 1) * stride_i); 0 when any size is 0; numel when ``stride`` is None) times the dtype's
    size.  None when the dtype is unknown or the lengths disagree."""
    item = dtype_bytes(dtype)
    if item is None or (stride is not None and len(stride) != len(size)):
        return None
    if any(s == 0 for s in size):
        return 0
    if stride is None:
        n = 1
        for s in size:
            n *= s
        return n * item
    return (1 + sum((s - 1) * st for s, st in zip(size, stride))) * item


def fmt_bytes(n: int | float | None) -> str:
    """``12.3 MB`` (decimal units: 1 MB = 1e6 bytes), ``512 B``; ``?`` for None."""
    if n is None:
        return "?"
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if abs(n) >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{int(n)} B"


@dataclass
class MemBuffer:
    """One name in the wrapper that holds or shares a storage.  ``how``: ``allocated`` (empty_strided),
    ``extern`` (an extern kernel or fallback allocated it; bytes from the lowering layout), ``reuse`` (took
    ``storage``'s storage over: ``# reuse``), ``view`` (reinterpret_tensor or a plain alias of ``storage``),
    ``input`` (a graph input).  ``bytes``: the bytes its own allocation holds (0 for a reuse or a view; None
    where the size could not be read).  Lines are 1-based wrapper lines; ``freed`` None: live to the end."""

    name: str
    how: str
    bytes: int | None
    storage: str
    line: int
    size: list[int] | None = None
    stride: list[int] | None = None
    dtype: str | None = None
    freed: int | None = None
    returned: bool = False
    events: list[tuple[int, str]] = field(default_factory=list)
    source: str = ""


@dataclass
class Step:
    """One wrapper statement that changed the plan, or a kernel call: ``what`` is ``alloc``, ``reuse``,
    ``view``, ``del``, ``free`` (a function's locals at its return), ``release`` (``del`` of an input only the
    graph holds: its storage freed), ``kernel`` or ``return``; ``live`` the live bytes of the graph's own storages
    after it (inputs not counted)."""

    line: int
    what: str
    name: str
    live: int
    text: str = ""
    #: bytes of the caller's storages freed so far by the graph's own ``del`` (a backward's saved activations)
    released: int = 0


@dataclass
class Plan:
    """A graph's memory plan from its wrapper (:data:`SOURCE`).  ``peak`` the most live bytes of the graph's own
    storages (temporaries and outputs, inputs not counted), reached at ``steps[peak_step]`` (wrapper line
    ``peak_line``, allocating ``peak_buffer``) for kernel ``peak_kernel`` (the next kernel call);
    ``live_at_peak`` the storages live there, largest first; ``inputs_bytes`` the graph inputs' bytes (held by the
    caller throughout: peak + inputs_bytes is the graph's planned high-water mark); ``outputs`` the returned
    names in the return's order (a non-tensor's text in its place), ``outputs_bytes`` their distinct storages' bytes."""

    key: str
    buffers: dict[str, MemBuffer]
    steps: list[Step]
    peak: int
    peak_step: int | None
    peak_line: int | None
    peak_buffer: str | None
    peak_kernel: str | None
    live_at_peak: list[str]
    inputs: list[str]
    inputs_bytes: int | None
    outputs: list[str]
    outputs_bytes: int
    notes: list[str] = field(default_factory=list)
    source: str = SOURCE
    estimate: str = ESTIMATE
    #: Inductor's own peak estimate in bytes (the codegen stop's ``memory_estimate``), None where not recorded
    inductor_estimate: int | None = None
    #: the most bytes allocated above what was allocated when the call began: max(live - released) over the steps,
    #: what ``torch.cuda.max_memory_allocated()`` minus ``memory_allocated()`` before one call measures; below
    #: ``peak`` where the graph frees inputs only it holds (a backward's saved activations: AOTAutograd hands them
    #: over and drops its own references, unless ``retain_graph=True``)
    high_water: int = 0
    #: wrapper line where ``high_water`` is reached; the caller's bytes the graph frees in all (:attr:`Step.released`)
    high_water_line: int | None = None
    released: int = 0
    #: ``high_water`` where the user dropped the forward's outputs that are also saved (``loss = model(x, y)[1]``
    #: drops nanoGPT's logits): then the backward frees those too (``released_outputs`` bytes of them)
    high_water_outputs_dropped: int = 0
    released_outputs: int = 0
    #: the inputs the graph frees by its own ``del`` (their storage freed when their last name goes), and why
    freed_inputs: list[str] = field(default_factory=list)
    freed_inputs_how: str = ""

    def allocations(self) -> list[MemBuffer]:
        """The buffers that hold storage of their own (allocated or extern), in wrapper order."""
        return [b for b in self.buffers.values() if b.how in ("allocated", "extern")]


def _functions(lines: list[str], first: int = 0, last: int | None = None) -> dict[str, tuple[int, int]]:
    """``call`` / ``partition_N`` -> (first body line, end) as 0-based indexes into ``lines``."""
    out: dict[str, tuple[int, int]] = {}
    last = len(lines) if last is None else last
    i = first
    while i < last:
        m = _DEF.match(lines[i])
        if m:
            ind, j = len(m.group(1)), i + 1
            while j < last and (not lines[j].strip() or len(lines[j]) - len(lines[j].lstrip()) > ind):
                j += 1
            out.setdefault(m.group(2), (i + 1, j))
            i = j
            continue
        i += 1
    return out


def _hints(session: Any, key: str) -> dict[str, int]:
    dyn = session.stop_for(key, "dynamo") or {}
    syms = dyn.get("symbols")
    out: dict[str, int] = {}
    for s in syms if isinstance(syms, list) else []:
        if isinstance(s, dict) and isinstance(s.get("hint"), int):
            out[str(s.get("name"))] = s["hint"]
    return out


def _get_args_hints(lines: list[str], hints: dict[str, int]) -> None:
    """Symbols the Dynamo stop gave no hint for, from the wrapper itself: ``s77 = arg0_1`` in ``call`` and
    ``arg0_1 = 16`` in ``get_args()`` (the size hints Inductor benchmarks the module at)."""
    ints = {m.group(1): int(m.group(2)) for m in (re.match(r"^\s+(\w+) = (\d+)$", ln) for ln in lines) if m}
    for ln in lines:
        m = re.match(r"^\s+(s\d+|u\d+) = (\w+)$", ln)
        if m and m.group(1) not in hints and m.group(2) in ints:
            hints[m.group(1)] = ints[m.group(2)]


def plan(session: Any, key: str) -> Plan | None:
    """The memory plan of graph ``key`` from its codegen stop's wrapper (session.store.Store ``session``);
    None when the graph has no Python wrapper (no codegen stop yet, a C++ wrapper, an AOTInductor compile)."""
    cg = session.stop_for(key, "codegen") or {}
    wrapper = cg.get("wrapper")
    if not isinstance(wrapper, str) or cg.get("wrapper_language") == "cpp" or not wrapper:
        return None
    low = session.stop_for(key, "lowering") or {}
    hints = _hints(session, key)
    layouts = {b.get("name"): b for b in low.get("buffers") or [] if isinstance(b, dict)}
    gin = [i for i in low.get("graph_inputs") or [] if isinstance(i, dict)]
    in_dtypes = {i.get("name"): i.get("dtype") for i in gin}
    lines = wrapper.splitlines()
    _get_args_hints(lines, hints)
    fl = cg.get("function_lines")
    if isinstance(fl, list) and len(fl) == 2:  # a subgraph: its own function in the parent's module
        funcs = {"call": (fl[0], fl[1])}
    else:
        funcs = _functions(lines)
    if "call" not in funcs:
        return None
    kernel_at: dict[int, str] = {}
    for k in cg.get("kernels") or []:
        for ln in k.get("call_lines") or []:
            kernel_at[int(ln)] = str(k.get("name", "")).split("#")[0]
    p = _Planner(lines, funcs, layouts, in_dtypes, hints, kernel_at)
    if " backward" in key:
        from inductor_step.session.memory_saved import backward_releases  # noqa: PLC0415 - it imports this module

        p.groups, p.group_bytes, p.user_groups, p.freed_how = backward_releases(session, key)
        p.in_layouts = {str(i.get("name")): i for i in gin}
    p.run("call", top=True)
    est = cg.get("memory_estimate")
    for i in gin:  # inputs no assert_size_stride spelled out (grouped asserts, C++ side): numel x dtype size
        b = p.buffers.get(str(i.get("name")))
        if b is not None and b.how == "input" and b.bytes is None and not i.get("size") and not i.get("dtype"):
            b.bytes, b.source = 0, "graph input: a SymInt (a size), no storage"
        elif b is not None and b.how == "input" and b.bytes is None:
            b.size = _dims(i.get("size"), hints)
            b.dtype = i.get("dtype")
            b.bytes = storage_bytes(b.size, None, b.dtype) if b.size is not None else None
            b.source = "graph input: the lowering stop's size (numel x dtype size)"
    out = p.result(key)
    if isinstance(est, dict) and isinstance(est.get("bytes"), int):
        out.inductor_estimate = est["bytes"]
        src = est.get("source") or "torch._inductor.memory"
        out.estimate = f"Inductor's estimate: {fmt_bytes(est['bytes'])} ({src})"
    elif isinstance(est, dict) and (est.get("unavailable") or est.get("not_read")):
        out.estimate = f"Inductor's estimate: not available ({est.get('unavailable') or est['not_read']})"
    return out


class _Planner:
    """Walks the wrapper's functions statement by statement (see the module's docstring)."""

    def __init__(self, lines: list[str], funcs: dict[str, tuple[int, int]], layouts: dict[str, Any],
                 in_dtypes: dict[str, Any], hints: dict[str, int], kernel_at: dict[int, str]) -> None:
        self.lines, self.funcs, self.layouts, self.in_dtypes = lines, funcs, layouts, in_dtypes
        self.hints, self.kernel_at = hints, kernel_at
        self.buffers: dict[str, MemBuffer] = {}
        self.names: dict[str, str] = {}  # live name -> its storage (the allocating buffer's name)
        self.holders: dict[str, set[str]] = {}  # storage -> live names
        self.size: dict[str, int] = {}  # storage -> bytes (graph's own storages only)
        self.steps: list[Step] = []
        self.live = 0
        self.peak, self.peak_step, self.peak_set = 0, None, []  # type: ignore[var-annotated]
        self.inputs: list[str] = []
        self.input_bytes: int | None = 0
        self.outputs: list[str] = []
        self.notes: list[str] = []
        # inputs the graph frees by its own del (session.memory_saved.backward_releases): name -> storage group
        self.groups: dict[str, str] = {}
        self.group_bytes: dict[str, int | None] = {}
        self.user_groups: set[str] = set()  # groups that are also user outputs: freed only if the user dropped them
        self.maybe = 0
        self.hw2 = 0
        self.freed_how = ""
        self.in_layouts: dict[str, Any] = {}
        self.released = 0
        self.released_names: list[str] = []
        self.hw, self.hw_line = 0, None  # type: ignore[var-annotated]

    # storages ---------------------------------------------------------------------------------------
    def _bind(self, name: str, storage: str) -> None:
        self._drop(name, None)
        self.names[name] = storage
        self.holders.setdefault(storage, set()).add(name)

    def _drop(self, name: str, line: int | None) -> bool:
        """Drop ``name``; True when that freed its storage."""
        st = self.names.pop(name, None)
        if st is None:
            return False
        held = self.holders.get(st, set())
        held.discard(name)
        if not held and st in self.groups:
            return self._release(st)
        if held or st not in self.size:
            return False
        self.live -= self.size[st]
        b = self.buffers.get(st)
        if b is not None and line is not None:
            b.freed = line
        return True

    def _release(self, name: str) -> bool:
        """Input ``name``'s last name went: when no other input of its storage group is left, its bytes are freed."""
        g = self.groups.pop(name)
        self.released_names.append(name)
        if g in self.groups.values():
            return False
        nbytes = self.group_bytes.get(g)
        if nbytes is None:
            b = self.buffers.get(name)
            nbytes = b.bytes if b is not None else None
        if nbytes is None:
            lay = self.in_layouts.get(name) or {}
            size = _dims(lay.get("size"), self.hints)
            nbytes = storage_bytes(size, None, lay.get("dtype")) if size is not None else None
        if g in self.user_groups:
            self.maybe += nbytes or 0
        else:
            self.released += nbytes or 0
        return True

    def _step(self, line: int, what: str, name: str, text: str) -> None:
        self.steps.append(Step(line, what, name, self.live, text, self.released))
        if self.live - self.released > self.hw:
            self.hw, self.hw_line = self.live - self.released, line
        self.hw2 = max(self.hw2, self.live - self.released - self.maybe)
        if self.live > self.peak:
            self.peak, self.peak_step = self.live, len(self.steps) - 1
            self.peak_set = [s for s, h in self.holders.items() if h and s in self.size]

    def _new(self, name: str, how: str, nbytes: int | None, line: int, size: Any, stride: Any, dtype: Any,
             source: str) -> None:
        self.buffers[name] = MemBuffer(name, how, nbytes, name, line, size, stride, dtype, source=source)
        self.buffers[name].events.append((line, f"{how} {fmt_bytes(nbytes)}"))
        self._bind(name, name)
        self.size[name] = nbytes or 0
        self.live += nbytes or 0

    def _from_layout(self, name: str) -> tuple[int | None, Any, Any, Any]:
        lay = self.layouts.get(name) or {}
        size, stride = _dims(lay.get("size"), self.hints), _dims(lay.get("stride"), self.hints)
        if not lay or size is None or "MultiOutput" in str(lay.get("layout") or ""):
            return None, None, None, None
        return storage_bytes(size, stride, lay.get("dtype")), size, stride, lay.get("dtype")

    # statements -------------------------------------------------------------------------------------
    def run(self, func: str, top: bool = False) -> list[str]:
        """Walk ``func``; returns the names its ``return`` hands back."""
        first, end = self.funcs[func]
        local_from = set(self.names)
        returned: list[str] = []
        unpacked = False
        for i in range(first, end):
            raw = self.lines[i].strip()
            ln = i + 1
            if not raw or raw.startswith("#"):
                continue
            reuse = "# reuse" in raw
            if not unpacked and raw.endswith("= args"):
                unpacked = True
                if top:
                    for n in split_args(raw[: -len("= args")]):
                        self.inputs.append(n)
                        self.buffers[n] = MemBuffer(n, "input", None, n, ln, source="graph input")
                        self._bind(n, n)
                continue
            if ln in self.kernel_at:
                self._step(ln, "kernel", self.kernel_at[ln], raw)
            elif _KERNEL_CALL.match(raw):
                m = _KERNEL_CALL.match(raw)
                self._step(ln, "kernel", next(g for g in m.groups() if g), raw)  # type: ignore[union-attr]
            for st in split_args(raw, ";"):
                returned = self._statement(st, ln, reuse, top, returned)
        if not top:  # the function's locals go when it returns
            for n in [n for n in self.names if n not in local_from and n not in returned]:
                if self._drop(n, end):
                    self._step(end, "free", n, f"{func} returns")
        return returned

    def _statement(self, st: str, ln: int, reuse: bool, top: bool, returned: list[str]) -> list[str]:
        """Statement ``st`` (line ``ln``) of a wrapper function: an input's asserted layout, a ``del``, the
        ``return`` (its names are returned; ``top``: the graph's own outputs), an allocation, a partition
        call, or an assignment (a reuse or view of another name's storage, ``reuse``: a reuse; an extern
        kernel's output).  Returns the names returned so far (``returned``, unchanged but by ``return``)."""
        if m := _ASSERT.match(st):
            self._asserted(m)
        elif st.startswith("del "):
            self._del(st, ln)
        elif st.startswith("return"):
            return self._return(st, ln, top)
        elif m := _ALLOC.match(st):
            self._alloc(m, st, ln)
        elif m := _PART_CALL.match(st):
            self._partition_call(m)
        elif " = " in st:
            self._assign(st, ln, reuse)
        return returned

    def _asserted(self, m: re.Match[str]) -> None:
        """``assert_size_stride(name, size, stride)``: an input's size, stride, dtype and bytes, once."""
        b = self.buffers.get(m.group(1))
        if b is not None and b.how == "input" and b.bytes is None:
            size, stride = _dims(m.group(2), self.hints), _dims(m.group(3), self.hints)
            dt = self.in_dtypes.get(b.name)
            b.size, b.stride, b.dtype = size, stride, dt
            b.bytes = storage_bytes(size, stride, dt) if size is not None else None

    def _del(self, st: str, ln: int) -> None:
        """``del a, b``: a storage whose last name goes is released; an input the graph held alone is freed."""
        for n in split_args(st[4:]):
            freeable = (self.names.get(n) or n) in self.groups
            if self._drop(n, ln):
                self._step(ln, "release" if freeable else "del", n, st)
                if freeable and n in self.buffers and self.buffers[n].how == "input":
                    self.buffers[n].events.append((ln, "del: the graph held its only reference, so it is freed"))
                    continue
                owner = self.buffers.get(self.buffers[n].storage if n in self.buffers else n)
                if owner is not None:
                    owner.events.append((ln, "del"))
            elif n in self.buffers:
                self.buffers[n].events.append((ln, "del (the graph's reference; the caller holds the input)"
                                               if self.buffers[n].how == "input" else
                                               "del (name only: its storage lives on)"))

    def _return(self, st: str, ln: int, top: bool) -> list[str]:
        """``return (a, b, None)``: the names returned that hold storage; ``top``: the graph's outputs, in place."""
        body = st[len("return"):].strip()
        body = body[1:-1] if body.startswith("(") and body.endswith(")") else body
        names = [re.split(r"[(,\[ ]", x.removeprefix("reinterpret_tensor("))[0] for x in split_args(body)]
        if top:  # positional: an output that is not a tensor name (None, a constant) keeps its place
            self.outputs = names
            for n in [n for n in names if n in self.names]:
                for b in (self.buffers.get(n), self.buffers.get(self.names[n])):
                    if b is not None:
                        b.returned = True
            self._step(ln, "return", ", ".join(names[:4]), st)
        return [n for n in names if n in self.names]

    def _alloc(self, m: re.Match[str], st: str, ln: int) -> None:
        """``buf3 = empty_strided(size, stride, dtype=...)``: a new storage of its extent x dtype size."""
        name, dt = m.group(1), m.group(4)
        size, stride = _dims(m.group(2), self.hints), _dims(m.group(3), self.hints)
        nbytes = storage_bytes(size, stride, dt) if size is not None else None
        if nbytes is None:
            self.notes.append(f"{name}: size {m.group(2)!r} not known (a symbol without a hint)")
        self._new(name, "allocated", nbytes, ln, size, stride, dt, "empty_strided: storage extent x dtype size")
        self._step(ln, "alloc", name, st)

    def _partition_call(self, m: re.Match[str]) -> None:
        """``(a, b) = partition_0(args)``: the partition's function run, its returned storages bound to ``a, b``."""
        part = f"partition_{m.group(2)}"
        if part in self.funcs:
            got = self.run(part)
            for a, b in zip(split_args(m.group(1)), got):
                if a != b and b in self.names:
                    self._bind(a, self.names[b])
                    self._drop(b, None)

    def _assign(self, st: str, ln: int, reuse: bool) -> None:
        """``name = rhs``: a reuse (``reuse``) or view of another name's storage, or an extern kernel's output."""
        name, rhs = (x.strip() for x in st.split(" = ", 1))
        if not _NAME.match(name):
            return
        src = rhs.removeprefix("reinterpret_tensor(").split(",")[0].strip() if rhs.startswith(
            "reinterpret_tensor(") else rhs
        if _NAME.match(src) and src in self.names:  # a reuse or a view of src's storage
            storage = self.names[src]
            how = "reuse" if reuse else "view"
            self.buffers[name] = MemBuffer(name, how, 0, storage, ln, source=f"{how} of {src}")
            self._bind(name, storage)
            owner = self.buffers.get(storage)
            if owner is not None:
                owner.events.append((ln, f"{'reused' if reuse else 'viewed'} as {name}"))
            self._step(ln, how, name, st)
            return
        if name in self.layouts:  # an extern kernel / fallback / a multi-output's item allocates its own
            nbytes, size, stride, dt = self._from_layout(name)
            self._new(name, "extern", nbytes or 0, ln, size, stride, dt,
                      "allocated by the extern kernel: its lowering layout (storage extent x dtype size)"
                      if nbytes is not None else "a multi-output's tuple (its items hold the bytes)")
            self._step(ln, "alloc", name, st)

    def result(self, key: str) -> Plan:
        inb: int | None = 0
        for n in self.inputs:
            b = self.buffers[n].bytes
            inb = None if inb is None or b is None else inb + b
        if inb is None:
            self.notes.append("some inputs' sizes are not known: inputs' bytes left out")
        live = sorted(self.peak_set, key=lambda s: -self.size.get(s, 0))
        ps = self.steps[self.peak_step] if self.peak_step is not None else None
        kernel = None
        if self.peak_step is not None:
            kernel = next((s.name for s in self.steps[self.peak_step:] if s.what == "kernel"), None)
        seen: set[str] = set()
        outb = 0
        for n in self.outputs:
            st = self.buffers[n].storage if n in self.buffers else n
            if st not in seen and st in self.size:
                seen.add(st)
                outb += self.size[st]
        out = Plan(key, self.buffers, self.steps, self.peak, self.peak_step, ps.line if ps else None,
                   ps.name if ps else None, kernel, live, self.inputs, inb, self.outputs, outb, self.notes)
        out.high_water, out.high_water_line, out.released = self.hw, self.hw_line, self.released
        out.high_water_outputs_dropped, out.released_outputs = self.hw2, self.maybe
        out.freed_inputs, out.freed_inputs_how = self.released_names, self.freed_how if self.released_names else ""
        return out
