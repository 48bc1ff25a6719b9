"""Built-in trial executors, registered through the same hook a third-party plugin uses."""
from __future__ import annotations

from skilleval.executors.base import LocalExecutor, LocalParams
from skilleval.executors.ray_params import RayParams
from skilleval.hookspecs import hookimpl
from skilleval.hookspecs import Register


@hookimpl
def register_executors(register: Register) -> None:
    register("local", LocalExecutor, params=LocalParams,
             help="trials on this process's event loop, trigger.concurrency in flight (default)")
    # A string factory: `ray` is imported only when executor=ray is chosen (the ray extra).
    register("ray", "skilleval.executors.ray_executor:RayExecutor", params=RayParams,
             help="trials as Ray tasks on a cluster, one per CPU per node (pip install 'skilleval[ray]')")
