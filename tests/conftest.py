"""Shared test settings, the recordings a whole test run shares (``demo_run``, ``train_step_run``: once across
the xdist workers too, ``once_per_run``), the order the workers get the files in, and the helpers tests import:
waits on a condition with a deadline (``wait_for``, ``wait_until``, ``screen_settled``) and the screen's text
through Textual's public API (``screen_lines``)."""

import atexit
import os
import sys

import pytest

_exit_status: list[int] = []

#: the recorded demo session most UI tests drive (tests/make_fixtures.py)
DEMO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "demo.jsonl")


@pytest.fixture
def app_driver():
    """Open a recorded session in the app, as ``inductor-step --open`` does, and drive it:
    ``app_driver(steps, size=(120, 40), path=DEMO, **app_kwargs)`` runs ``await steps(app, pilot)``
    in Textual's Pilot at that terminal size and returns the app (keys through ``pilot.press``)."""
    import asyncio

    from inductor_step.session.format import read_session
    from inductor_step.tui.app import StepApp

    def drive(steps, size=(120, 40), path: str = DEMO, notifications: bool = False, **kwargs):
        app = StepApp(messages=list(read_session(path)), session_path=path, **kwargs)

        async def main():
            async with app.run_test(size=size, notifications=notifications) as pilot:
                await pilot.pause()
                await steps(app, pilot)

        asyncio.run(main())
        return app

    return drive


# CPU timing rounds stop adding rounds after 0.3 s instead of 4 (tracer.timing.rounds.CPU_ROUNDS_S; at least five
# are taken): with the workers compiling, rounds on the 2-core box rarely agree and every timed graph ran to the cap;
# the tests check what is timed and shown, not how long the rounds went on.  The agents and timing workers inherit it.
os.environ.setdefault("INDUCTOR_STEP_CPU_ROUNDS_S", "0.3")
# and each CPU measurement's window is 10 ms instead of 50 (tracer.timing.rounds.CPU_REP_MS): the suite times the same
# calls in a fifth of the time; no test's assertion needs the default window's precision
os.environ.setdefault("INDUCTOR_STEP_CPU_REP_MS", "10")
# OpenMP threads that wait for work sleep instead of spinning (libgomp's OMP_WAIT_POLICY; read when torch loads it,
# so set here before any test imports torch): three workers' compiles and timings share 2 cores, and spinning
# threads took 17% of a --run recording's CPU (tests/scripts/three_calls.py: 13.1-13.4 s user, 10.7-11.2 passive)
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

#: an environment variable set only for the shared demo recording below, and its value: no report may carry it
DEMO_RUN_SECRET = ("INDUCTOR_STEP_TEST_SECRET", "s3cr3t-value-8d1f")


def once_per_run(tmp_path_factory, name: str, make):
    """``make(folder)`` called once for the whole test run, however many xdist workers ask for it: the
    first to ask runs it in ``<the run's temporary root>/name`` (pytest's basetemp of the xdist
    controller, which every worker of this run shares) while any other waits on a lock file there, then
    reads the result the first wrote.  ``make`` returns what JSON keeps (a tuple comes back as a list);
    when it raises, the next worker to ask runs it again (and fails as plainly).  Without xdist the root
    is the run's own basetemp: nothing is shared between runs."""
    import fcntl  # noqa: PLC0415
    import json  # noqa: PLC0415

    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # xdist gives worker gwN the basetemp <controller's basetemp>/gwN
    done = root / f"{name}.json"
    with open(root / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # let go when the file closes, or when the worker holding it ends
        if done.exists():
            return json.loads(done.read_text())
        folder = root / name
        folder.mkdir(exist_ok=True)
        result = make(folder)
        tmp = root / f"{name}.json.tmp"
        tmp.write_text(json.dumps(result))
        os.replace(tmp, done)
        return result


@pytest.fixture(scope="session")
def demo_run(tmp_path_factory) -> str:
    """The path of one real session of the bundled demo (tracer/demo/train_step.py: ``[0/0] forward``,
    ``[0/0] backward``, ``[1/0] inference``), recorded once for the whole test run, every xdist worker
    included (:func:`once_per_run`), by ``inductor-step --headless --run --record train_step-test.jsonl``
    with :data:`DEMO_RUN_SECRET` in its environment and no TORCH_TRACE / TORCH_LOGS; skips where torch is
    not installed.  Read it, never write it: the report, export and format tests share it."""
    import importlib.util  # noqa: PLC0415
    import subprocess  # noqa: PLC0415

    if importlib.util.find_spec("torch") is None:
        pytest.skip("torch is not installed: cannot record a real session")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (os.environ.get("PYTHONPATH"), root) if p))
    env.pop("TORCH_TRACE", None)
    env.pop("TORCH_LOGS", None)
    env[DEMO_RUN_SECRET[0]] = DEMO_RUN_SECRET[1]

    def record(d) -> list:
        path = str(d / "train_step-test.jsonl")
        proc = subprocess.run([sys.executable, "-m", "inductor_step", "--headless", "--run", "--record", path],
                              cwd=str(d), env=env, capture_output=True, text=True, timeout=300)
        return [proc.returncode, proc.stdout[-2000:] + proc.stderr[-2000:], path]

    returncode, tail, path = once_per_run(tmp_path_factory, "demo_run", record)
    assert returncode == 0, tail
    return path


@pytest.fixture(scope="session")
def train_step_run(tmp_path_factory):
    """examples/train_step.py recorded once for the whole test run, every xdist worker included
    (:func:`once_per_run`), by ``inductor-step --headless --run --record
    sessions/train_step.jsonl examples/train_step.py --steps 3 --lr 0.05`` (the session folder does not exist
    before), started in a thread of its own when first asked for, so a module's other recordings go on beside it:
    a future of ``(returncode, stdout, stderr, record path, cwd)``.  test_tracer and test_links read it."""
    import importlib.util  # noqa: PLC0415
    import subprocess  # noqa: PLC0415
    from concurrent.futures import ThreadPoolExecutor  # noqa: PLC0415

    if importlib.util.find_spec("torch") is None:
        pytest.skip("torch is not installed: cannot record a real session")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ)
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.pop("TORCH_LOGS", None)
    env.pop("TORCH_TRACE", None)

    def record(cwd) -> list:
        path = str(cwd / "sessions" / "train_step.jsonl")
        p = subprocess.run([sys.executable, "-m", "inductor_step", "--headless", "--run", "--record", path,
                            os.path.join(root, "examples", "train_step.py"), "--steps", "3", "--lr", "0.05"],
                           cwd=str(cwd), env=env, capture_output=True, text=True, timeout=300)
        return [p.returncode, p.stdout, p.stderr, path, str(cwd)]

    pool = ThreadPoolExecutor(1)
    yield pool.submit(lambda: tuple(once_per_run(tmp_path_factory, "train_step_run", record)))
    pool.shutdown(wait=True)


@pytest.fixture(scope="session", autouse=True)
def _basetemp_made_once(tmp_path_factory):
    """The run's temporary folder made before any test: fixtures record on threads (test_fidelity,
    test_compile_modes, test_links), and two threads making it at once remove each other's (pytest's
    ``getbasetemp`` is not thread-safe: FileExistsError / FileNotFoundError in a fresh clone's run)."""
    tmp_path_factory.getbasetemp()


@pytest.fixture(autouse=True)
def _details_follow_at_once(monkeypatch):
    """Tests read the detail panes right after a key: no key-repeat debounce (users get 40 ms)."""
    from inductor_step.tui.panes.base import StagePane

    monkeypatch.setattr(StagePane, "DETAIL_DELAY_S", 0)


def pytest_configure(config):
    """Under xdist the files go to the workers in the order :func:`pytest_collection_modifyitems` gives,
    not xdist's default most-tests-first (``--loadscope-reorder``, which leaves the files of one or two
    tests that each record a real compile or job for the end); ``--loadscope-reorder`` given on the
    command line still wins."""
    if hasattr(config.option, "loadscopereorder") and "--loadscope-reorder" not in config.invocation_params.args:
        config.option.loadscopereorder = False


#: folders whose files record real compiles, jobs and blames in subprocesses (up to a minute a file)
_RECORDING_DIRS = ("e2e", "tracer")


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    """On an xdist worker, order the files (``-n 2 --dist loadfile`` hands out whole files, in this order,
    each to the first worker with little left): tests/e2e and tests/tracer first, then the other folders'
    files by their number of tests, most first, so the run ends on short files (tests/ui's of one or two
    tests) and both workers finish at about the same time.  The tests of a file keep their order."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return
    per_file: dict = {}
    for item in items:
        per_file[item.path] = per_file.get(item.path, 0) + 1

    def key(item):
        recording = item.path.parent.name in _RECORDING_DIRS
        return (0, 0) if recording else (1, -per_file[item.path])

    items.sort(key=key)  # stable: collection order within each group and within each file


def pytest_unconfigure(config):
    session = getattr(config, "_inductor_step_session", None)
    if session is not None:
        _exit_status.append(int(session.exitstatus))


def pytest_sessionstart(session):
    session.config._inductor_step_session = session
    _probe_vec_isa_once()


def _probe_vec_isa_once() -> None:
    """Inductor probes the CPU's vector ISA once per process before its first C++ kernel
    (``cpu_vec_isa.VecISA.check_build``: a C++ build and, on torch 2.11, a child python that imports
    torch to load it; up to ~8.8 s on a 2-core box, BENCHMARKS.md "Suite time").  The suite records in
    ~100 processes, so it probes once here, in a child process as Inductor would, and hands the
    answer to every recording through torch's own switch ``TORCHINDUCTOR_VEC_ISA_OK=1``, set only
    when the ISA Inductor would pick first passed the probe (the pick is then the same).  A user's
    run still probes as plain torch does; ``INDUCTOR_STEP_TEST_ISA_PROBE=1`` keeps the probe per
    process in the suite too."""
    import subprocess  # noqa: PLC0415

    if "TORCHINDUCTOR_VEC_ISA_OK" in os.environ or os.environ.get("INDUCTOR_STEP_TEST_ISA_PROBE") == "1":
        return
    code = ("from torch._inductor import cpu_vec_isa as m\n"
            "v = m.valid_vec_isa_list()\n"
            "print(int(bool(v) and bool(v[0]) and m.pick_vec_isa() == v[0]))")
    try:
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.TimeoutExpired):
        return
    if r.returncode == 0 and r.stdout.strip().endswith("1"):
        os.environ["TORCHINDUCTOR_VEC_ISA_OK"] = "1"


def _skip_interpreter_teardown() -> None:
    """Triton's extension (nanobind) prints "nanobind: leaked N instances / types / functions" (~30
    lines) at interpreter teardown when any of its objects is still referenced then (a thread of
    Inductor's, a cached compile), which reads like a failure after the green summary.  Registered
    first, this runs last of the exit functions, after pytest has returned and printed everything:
    it ends the process with pytest's exit status, skipping only the teardown, as the agent does."""
    if _exit_status and "triton._C.libtriton" in sys.modules:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(_exit_status[-1])


atexit.register(_skip_interpreter_teardown)


def screen_lines(app) -> list[str]:
    """The terminal's text as the app draws it now, one string per row (``app.size``), read from Textual's
    public ``App.export_screenshot`` (Rich's SVG: one ``<text>`` per run of styled cells, at column
    ``x / cell width`` of row ``-line-N``); cells with no text are spaces."""
    import html  # noqa: PLC0415
    import re  # noqa: PLC0415

    width, height = app.size
    rows = [[" "] * width for _ in range(height)]
    svg = app.export_screenshot(simplify=True)
    for m in re.finditer(r'<text [^>]*\bx="([\d.]+)" [^>]*textLength="([\d.]+)" [^>]*-line-(\d+)\)">([^<]*)</text>',
                         svg):
        text = html.unescape(m.group(4)).replace("\xa0", " ")
        cell = float(m.group(2)) / len(text)
        col, y = round(float(m.group(1)) / cell), int(m.group(3))
        for i, ch in enumerate(text):
            if y < height and col + i < width:
                rows[y][col + i] = ch
    return ["".join(r) for r in rows]


async def wait_for(pilot, cond, timeout: float = 240.0, seen=None, every: float = 0.05) -> None:
    """Let the app run until ``cond()`` holds (a live agent's messages, timers and workers go on meanwhile),
    checking every ``every`` s; after ``timeout`` s the assertion says what ``seen()`` returns then."""
    import time  # noqa: PLC0415

    t0 = time.monotonic()
    await pilot.pause()
    while not cond():
        if time.monotonic() - t0 > timeout:
            raise AssertionError(f"timed out after {timeout} s waiting{f': {seen()}' if seen else ''}")
        await pilot.pause(every)


async def screen_settled(pilot, app, timeout: float = 10.0) -> None:
    """Let the app run until what it draws stops changing (two screenshots 0.05 s apart are equal), at most
    ``timeout`` s: after a key whose effect has no single attribute to wait on."""
    last: list = [None]

    def settled() -> bool:
        now = app.export_screenshot(simplify=False)
        done, last[0] = now == last[0], now
        return done

    await wait_for(pilot, settled, timeout=timeout)


def wait_until(cond, timeout: float = 120.0, seen=None, every: float = 0.05):
    """Outside an app: poll ``cond()`` every ``every`` s until it returns something true, and return that;
    after ``timeout`` s the assertion says what ``seen()`` returns then."""
    import time  # noqa: PLC0415

    end = time.monotonic() + timeout
    while True:
        got = cond()
        if got:
            return got
        if time.monotonic() > end:
            raise AssertionError(f"timed out after {timeout} s waiting{f': {seen()}' if seen else ''}")
        time.sleep(every)


def output_code_file(fn, args, directory) -> str:
    """Inductor's output code of ``torch.compile(fn)(*args)`` (inference, no_grad; Dynamo reset first) written to
    ``directory/graph.py``; its path, for :func:`tracer.timing.time_graph`."""
    import torch  # noqa: PLC0415
    from torch._inductor.utils import run_and_get_code  # noqa: PLC0415

    torch._dynamo.reset()
    with torch.no_grad():
        _, codes = run_and_get_code(torch.compile(fn), *args)
    path = directory / "graph.py"
    path.write_text(codes[-1])
    return str(path)


def cpu_ticks(pid: int) -> int:
    """Clock ticks (``os.sysconf("SC_CLK_TCK")`` a second, 100 on Linux) process ``pid`` has run in user and system
    mode (/proc/PID/stat utime + stime)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def busy_loops(n: int) -> list:
    """``n`` child processes each spinning on a core (``sh -c 'while :; do :; done'``); end them with :func:`stop_loops`."""
    import subprocess  # noqa: PLC0415

    return [subprocess.Popen(["sh", "-c", "while :; do :; done"]) for _ in range(n)]


def stop_loops(kids: list) -> None:
    """Kill and reap :func:`busy_loops`' children; the list is emptied."""
    for k in kids:
        k.kill()
        k.wait()
    kids.clear()


def screen_after(app_driver, keys: tuple[str, ...], **kw) -> list[str]:
    """The screen's rows (:func:`screen_lines`) once ``keys`` were pressed one by one, the screen settling after each,
    in an app :func:`app_driver` opens with ``kw`` (``size``, ``path``)."""
    got: list[str] = []

    async def steps(app, pilot):
        for key in keys:
            await pilot.press(key)
            await screen_settled(pilot, app)
        got.extend(screen_lines(app))

    app_driver(steps, **kw)
    return got
