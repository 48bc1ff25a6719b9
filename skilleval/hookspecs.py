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
  Hydra (OmegaConf) must be able to type it: **every field needs a default** (or a
  ``default_factory``), and a field's type must be one of ``int``, ``float``, ``bool``,
  ``str``, ``bytes``, ``pathlib.Path``, an ``enum.Enum`` subclass, ``Any``, ``Optional[...]``
  of one of those, ``list[...]``, ``tuple[..., ...]`` or ``dict[str, ...]`` of them, or a
  nested dataclass following the same rules. ``Literal[...]``, ``set[...]``, ``Callable``
  and a class that is not a dataclass are not. A registration that breaks these rules does not
  stop skilleval: it is warned about at start (one line naming the plugin and the field),
  listed as UNUSABLE by ``skilleval plugins``, and a run that selects it exits 2; everything
  else works (``skilleval.registry.params_problem``).
* ``factory(params)`` builds the component from a params instance (or ``{}`` when no
  dataclass was given). It is called once per job. To refuse a bad parameter value, raise
  ``skilleval.errors.UserError`` with one line naming the key (exit 2); to say the component
  cannot work here (a missing binary, no credentials), ``HarnessError`` (exit 3). Any other
  exception from a third-party factory ends the job with one line naming the plugin, its
  version and the exception (exit 3), not a traceback.
* ``factory`` may also be given as a ``"module:attribute"`` string, imported the first time
  the component is built. Registration hooks run at every start, ``--version`` and
  ``--help`` included, so keep them cheap: register heavy components by string and keep
  ``params`` dataclasses in a light module (skilleval's built-ins do both; their factories
  import pyarrow, DuckDB, the anthropic SDK or numpy only when a job builds them)::

      register("mine", "my_pkg.backend:MyBackend", params=MyParams, help="...")

A registration hook that raises is treated like a plugin that fails to import: one warning,
"failed to load" in ``--version``, and none of that plugin's registrations (nor its lifecycle
hooks) are used; the rest of skilleval works.

What each factory must return is a small protocol documented in
``skilleval.backends.base`` (backends), ``skilleval.optimize.splitters`` (splitters),
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

    A backend subclassing ``skilleval.backends.base.BaseBackend`` must extend ``identity()``
    with every parameter and version of its own that changes answers (``{**super().identity(),
    "temperature": ..., "revision": ...}``): the identity is part of every trial's and
    execution's cache key, and the base class's holds only name, model and harness version, so
    a change the identity does not show would be answered from the cache. skilleval adds the
    plugin's distribution and version, the registered name and a digest of the params the
    component was built with to a plugin's identity (a judge's too), so a new release or other
    settings are never answered from another's cache; ``identity()`` must still name anything
    else that changes answers (a model file, an environment variable). ``execute()`` must
    collect what the task wrote: take ``skilleval.execution.snapshot(request.sandbox)`` before
    running and return ``outputs=collect_outputs(request.sandbox, before)`` in the
    ``ExecutionResult``; outputs not listed there are neither stored nor restored on a cached
    run, and judges of a resumed run would not see them.

    Optional attribute: ``executor_version: str | None = None``: part of every functional
    execution's cache key (not a trigger trial's); change it when ``execute()`` changes what
    the model is shown, so executions made the old way are not reused.
    """


@hookspec
def register_splitters(register: Register) -> None:
    """Register eval-set splitters (config group ``splitter``): cases -> train/validation/test.

    The factory returns an object with ``split(cases) -> Split``
    (``skilleval.optimize.splitters.Split``). ``trigger_opt`` checks the answer before any call
    (``skilleval.optimize.split_checks``) and refuses it (exit 2, one line naming the splitter)
    unless:

    * it is a ``Split`` (not a dict or a tuple of lists);
    * the splits are disjoint: no case in two splits (a test query that is also trained on
      makes the held-out number a training number), nor twice in one;
    * together they hold every case of the eval set, and nothing else;
    * train has both ``should_trigger`` classes (``check_two_classes``).

    Validation and test may be empty. A splitter should be deterministic (same cases and
    params, same split): a resumed run relies on it. Raise ``UserError`` for bad input; any
    other exception is reported the same way, as the splitter failing.
    """


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

    A proposer only ever receives train-split failures and train scores. The factory returns
    an object with ``async propose(request, *, backend, budget) -> list[Proposal]``
    (``skilleval.optimize.proposers``) returning at most ``request.count`` proposals. The loop
    drops proposals that fail ``validate_description`` or repeat earlier ones (and says how
    many), ignores any beyond ``request.count`` (the call plan budgets that many), and treats
    an exception, or an answer that is not a list of ``Proposal``, as the proposer failing
    (``proposer_failed``; exit 3 if no candidate was evaluated).

    Optional attributes: ``makes_calls: bool = True``: set it to False for a proposer that
    never calls the backend (the built-in ``stub``), so the plan and the budget check count 0
    proposer calls; a proposer that does call should leave it True and may say how many calls
    a candidate can take in ``params.max_attempts`` (default 1). ``calls_made`` and
    ``cost_usd`` are added to the run's spend; ``reads_attribution = True`` is required by
    ``optimize.attribution=true``.
    """


@hookspec
def register_judges(register: Register) -> None:
    """Register judges (config group ``judge``) that grade functional executions.

    The factory returns an object with ``name``, ``samples``, ``identity()`` and ``async
    grade(item: JudgeInput) -> JudgeOutput`` (``skilleval.functional.judges``). ``grade`` must
    return a ``JudgeOutput`` holding one ``Verdict`` per expectation, in order, each with
    ``passed`` True, False or None (None with ``error`` set: a judge error, never a pass or a
    fail). The runner checks it: a missing verdict, a wrong type or a non-bool ``passed`` is a
    judge error with a message; extra verdicts are ignored, and said once.

    Optional attribute: ``deterministic: bool = False``: set it to True for a judge that never
    calls a model (the built-in typed checks do), so it still grades after a budget stop.
    """


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
