"""The session format: every message of the stream, typed, and how a line is written and read back.

Standard library only; imported by both processes (the agent in ``tracer/``, the UI in ``tui/``).

The agent writes one JSON object per line on its message pipe; the UI appends every line, as it
arrives, to the session file, so a session file is the stream (format :data:`FORMAT`).  The UI
writes :class:`Command` lines to the agent's control pipe in the same framing.

Every message is a ``TypedDict`` below, dispatched on ``type`` (and a stop's ``stage``) by
:data:`MESSAGES` and :data:`STOPS`; :func:`validate` checks a decoded message against them.

Framing (``inductor-step/2``): a line is a JSON object.  The session writer stores a long line as
a *packed* line (:class:`Packed`): the message's head keys in the clear, ``size`` (bytes of the
message's JSON) and ``zlib``: base64 of the zlib-compressed JSON of the whole message.  A stop's
head is :data:`STOP_HEAD_KEYS` in that order, first on its line, so :func:`read_session` can yield
a large stop as its head without decoding the rest (:func:`load_lazy` decodes it when first
shown).  :func:`decode` turns a packed line back into its message, so no reader sees the packing.
``inductor-step/1`` files (no packed lines) are read the same way.
"""

from inductor_step.session.format.types import (  # noqa: F401
    ALL_STAGES, AotStop, AotiCode, AotiRun, Autotune, AutotuneChoice, CodegenStop, CompiledWith, DynamoStop,
    FORMAT, FORMATS_READ, FxGraph, FxNode, GraphInput, GraphKind, IrBuffer, Kernel, KernelSpan, LinkBuffer,
    LinkCall, LinkCallRef, LinkDynamoNode, LinkFusedNode, LinkFxNode, LinkKernel, LinkSchedulerNode, Links,
    LoopBodyEntry, LoopBodyStop, LoweringStop, STAGES, STOPS, SchedulerNode, SchedulingStop, Stage, Stop,
    StopBase, StopHead, Symbol, Unavailable,
)
from inductor_step.session.format.messages import (  # noqa: F401
    AgentExit, Artifact, Blocked, Distributed, Done, Error, FusionQuery, GraphRounds, Guards, Header,
    Interleaved, KernelResources, LadderRoof, MESSAGES, Message, Numerics, Output, OutputError, Peak,
    ProcessGroup, Provenance, Quit, Roof, Roofs, Run, RunKernel, Verdict, WhatIf,
    PairRounds, PairTiming, InputsSaved,
)
from inductor_step.session.format.run_status import (  # noqa: F401
    RUN_STATUS, RunStatus, RunStatusMessage,
)
from inductor_step.session.format.compile_time import (  # noqa: F401
    COMPILE_STAGES, CompileTime, CompileTimeKernel,
)
from inductor_step.session.format.commands import (  # noqa: F401
    CMD_BLAME, CMD_CANCEL_BLAME, CMD_CANCEL_RUN, CMD_CAN_FUSE, CMD_CONTINUE, CMD_NUMERICS, CMD_QUIT, CMD_RUN, CMD_SAVE_INPUTS, CMD_TIME_PAIR,
    CMD_WHAT_IF, Command,
    split_at_script,
)
from inductor_step.session.format.numerics import (  # noqa: F401
    GraphNumerics, NumericsAnswer, NumericsBuffer,
)
from inductor_step.session.format.blame import (  # noqa: F401
    Blame, BlameConstraint, BlameMeasure, BlameSetting, BlameSpecialization, BlameStep, BlameVerdict,
)
from inductor_step.session.format.codec import (  # noqa: F401
    OUTCOME, PACKED_HEAD_KEYS, PACK_OVER, Packed, STOP_HEAD_KEYS, decode, encode, pack, run_outcome, stop_head,
)
from inductor_step.session.format.reader import (  # noqa: F401
    LAZY, lazy_variant, load_lazy, read_session,
)
from inductor_step.session.format.keys import (  # noqa: F401
    GraphKey, PART_SEP, PARTITION_SETTINGS, RESET_SEP, SUBGRAPH_SEP, VARIANT_SEP, graph_key, kind_of,
    parse_settings, repartitioned, settings_label,
    split_part, split_subgraph, split_variant, with_part, with_subgraph,
)
from inductor_step.session.format.values import (  # noqa: F401
    DTYPE_BYTES, dtype_bytes, split_args,
)
from inductor_step.session.format.validate import (  # noqa: F401
    message_type, validate, validate_command,
)
from inductor_step.session.format.job import (  # noqa: F401
    HELLO_FDS, Hello, JOB_FORMAT, Job, JobRank, is_job_file, job_paths, read_job, recv_hello, send_hello,
    write_job,
)
