"""``inductor-step report``: a bug-report bundle from a recorded session (standard library only).

``build_report`` writes a directory (optionally also a ``.tar.gz``) holding:

- ``REPORT.md``: a paste-ready GitHub issue body: versions, device, command line, the graphs
  compiled and the stages each reached, where the user stood, the error (one line, traceback in a
  collapsible block), run timings, and the list of files in the bundle;
- ``repro_<cid>_<kind>.py``: Inductor's own ``fx_graph_runnable`` for each graph (``cid`` written
  ``0-0``); for a graph without one, ``graph_<cid>_<kind>.txt``: its post-grad graph, labelled
  as not runnable;
- a copy of the session file, and ``screenshots/`` with copies of the given screenshots.

Privacy: REPORT.md never holds environment variables, and absolute paths outside the current
working directory become ``<path>/basename`` (``torch/...``, from the package down, for installed
packages) unless ``include_paths=True``.  The copied session file and the repro files are
included as recorded; REPORT.md says that they contain paths.
"""

from inductor_step.session.report.common import (  # noqa: F401
    PathScrubber, REPORT_NAME, cid_slug, shorten_traceback,
)
from inductor_step.session.report.bundle import (  # noqa: F401
    DEFAULT_SHOTS, build_report,
)
from inductor_step.session.report.job import (  # noqa: F401
    build_job_report,
)
