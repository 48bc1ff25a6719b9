"""The plugin contract of skilleval.

A plugin is a module (or object) exposed under the ``skilleval`` entry-point group::

    [project.entry-points.skilleval]
    my_judges = "my_pkg.skilleval_plugin"

and implementing any of the hooks below with ``@skilleval.hookimpl``. skilleval's own
backends, splitters, reporters, proposers, judges and experiments register through these
very hooks, from the modules listed in its own ``pyproject.toml``; the core never switches on
a name.

Registration hooks are called once per process, before Hydra composes the configuration.
Each receives a ``register`` callback::

    register(name, factory, params=ParamsDataclass, help="one line")

* ``name`` is what users type (``backend=stub``); it must be unique within its kind, across
  all plugins, or startup fails naming both plugins.
* ``params`` is an optional dataclass. Its fields become the config node's keys
  (``backend.latency_ms=200``), typed: a typo or a wrong type fails at composition.
* ``factory(params)`` builds the component from a params instance (or ``{}`` when no
  dataclass was given). It is called once per job.
* ``factory`` may also be given as a ``"module:attribute"`` string, imported the first time
  the component is built. Registration hooks run at every start, ``--version`` and
  ``--help`` included, so keep them cheap: register heavy components by string and keep
  ``params`` dataclasses in a light module (skilleval's built-ins do both; their factories
  import pyarrow, DuckDB, the anthropic SDK or numpy only when a job builds them)::

      register("mine", "my_pkg.backend:MyBackend", params=MyParams, help="...")

What each factory must return is a small protocol documented in
``skilleval.backends.base`` (backends), ``skilleval.trigger.splitters`` (splitters),
``skilleval.reporting.base`` (reporters), ``skilleval.optimize.proposers`` (proposers),
``skilleval.functional.judges`` (judges), ``skilleval.executors.base`` (executors) and
``skilleval.app`` (experiments).

Lifecycle hooks take one event object each (fields may be added later, so implement only
what you need).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Protocol

import pluggy

if TYPE_CHECKING:
    from skilleval.events import JobEnd, JobStart

PROJECT = "skilleval"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


class Register(Protocol):
    """The ``register`` callback every registration hook receives (see the module docstring)."""

    def __call__(
        self, name: str, factory: Callable[..., Any] | str, params: type | None = None,
        help: str = ""
    ) -> None: ...


# -- Registration hooks -----------------------------------------------------------------


@hookspec
def register_backends(register: Register) -> None:
    """Register model backends (config group ``backend``).

    A backend answers trigger trials (``run_trial``), completes text (``complete``, used by
    proposers and judges) and may execute functional tasks (``execute``).
    """


@hookspec
def register_splitters(register: Register) -> None:
    """Register eval-set splitters (config group ``splitter``): cases -> train/validation/test."""


@hookspec
def register_reporters(register: Register) -> None:
    """Register reporters (config group ``reporter``, several may be selected at once).

    Reporters receive whole result objects at the end of a job, never one row at a time.
    A reporter class may declare ``kinds``, the report kinds it writes (e.g. ``("trigger_eval",
    "gates")``); selecting it for an experiment whose ``reports`` share none of them is refused
    before any call (exit 2), instead of a run that silently writes nothing
    (``skilleval.reporting.applies``).
    """


@hookspec
def register_proposers(register: Register) -> None:
    """Register description proposers (config group ``proposer``) for ``trigger_opt``.

    A proposer only ever receives train-split failures and train scores.
    """


@hookspec
def register_judges(register: Register) -> None:
    """Register judges (config group ``judge``) that grade functional executions."""


@hookspec
def register_executors(register: Register) -> None:
    """Register trial executors (config group ``executor``): where trigger trials run.

    ``local`` (the default) calls the backend on the job's own event loop; ``ray`` sends
    each trial to a Ray cluster. An executor only runs trials: the runner keeps computing
    keys, reading the cache and writing rows on the driver, so every executor gives the
    same keys, reuses the same cache and records each trial once. The factory returns an
    object with ``start(backend, backend_config)``, ``slots(concurrency) -> int``,
    ``async run_trial(trial) -> TrialResult`` and ``async aclose()``; see
    ``skilleval.executors.base.Executor``.

    Example::

        @hookimpl
        def register_executors(register):
            register("dask", "my_pkg.dask_executor:DaskExecutor", params=DaskParams,
                     help="trials as Dask futures")
    """


@hookspec
def register_experiments(register: Register) -> None:
    """Register experiment kinds.

    An experiment YAML (``conf/experiment/*.yaml``) sets ``experiment.kind`` to one of these
    names; the factory returns a callable ``run(job: JobContext) -> int`` (exit code).
    Experiment kinds are not published as a Hydra group: users pick the YAML with
    ``+experiment=NAME``.

    Gates (``gate.*``, see ``skilleval.gates``): the callable may carry ``gate_metrics``, a
    tuple of the metrics it can be gated on (``"precision"``, ``"recall"``, ``"accuracy"``,
    ``"delta"``), and ``gate_baseline = True`` if ``gate.baseline`` applies; a gate on
    anything else is refused before the run. The run then leaves its estimates in
    ``job.summary["gate_metrics"]`` as ``{metric: {"value", "low", "high"}}``, optionally
    with ``k``/``n`` (the counts behind a proportion), ``unit`` (what ``n`` counts, default
    ``"queries"``), and ``label`` and ``means`` when the metric's word alone would mislead
    (``routing`` publishes ``accuracy`` labelled ``"routing accuracy"``, meaning the share of
    valid trials that fired the expected skill, interval over queries). These published figures
    are what the gates check and print, what a sweep's table shows, and, when labelled, the
    headline of the viewer's Runs page. The callable may also
    carry ``gate_confidence``, the config key of the level its intervals use (default
    ``"trigger.confidence"``), which the baseline gate's test and interval then use too.

    Reports: the callable may carry ``reports``, the kinds it hands to ``job.report`` (e.g.
    ``("trigger_eval",)``; ``()`` for an experiment that writes its own results); reporters
    that declare ``kinds`` none of which it reports are then refused before the run.

    Inputs: the callable may carry ``check_inputs(job)``, which reads what the run will read
    (its eval set, say) and raises ``UserError`` on bad input. It is called before the run's
    row is stored, so a typo is refused (exit 2) without leaving a failed run behind; what it
    returns is kept as ``job.prepared`` for the run to reuse. The skill (``skill=``) and the
    distractors are checked this way for every experiment.
    """


# -- Lifecycle hooks --------------------------------------------------------------------


@hookspec
def on_job_start(event: JobStart) -> None:
    """A Hydra job is about to run: config resolved, components built, nothing called yet."""


@hookspec
def on_job_end(event: JobEnd) -> None:
    """A job finished; its store parts are final and ``event.summary`` holds its figures."""
