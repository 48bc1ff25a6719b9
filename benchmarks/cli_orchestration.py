"""Benchmark: trigger trials through the real `claude` CLI against serve-sim, at default settings.

    python benchmarks/cli_orchestration.py [--trials 60] [--probe 6] [--repeats 3] [--compare 8]
                                           [--compare-hold] [--compare-inline-removal]
                                           [--latency-ms 1500]

The CLI is CPU-bound (a trial costs about 0.45 s of CPU), so the floor for N trials on C
usable CPUs is N x (CPU seconds per trial) / C. This script measures, in one run:

1. CPU seconds per trial, from serial passes of ``--probe`` trials (the children's rusage),
   one before each timed pass and one after the last, after one untimed warm-up trial (the
   first CLI start reads node's caches from disk and costs more);
2. the wall time of ``--trials`` trials at the default settings (trigger.concurrency's
   default of 8 trials in flight, the backend's default process cap), and prints
   wall / floor (target <= 1.05);
3. API requests per trial, counted by serve-sim (target exactly 1.00: the CLI stops at
   the decision);
4. with ``--compare K``, the same at a fixed cap of K CLI processes at once (the old default
   was 8), and the paired ratio of wall times against the default with a 95 % interval over
   passes; with ``--compare-hold``, the default cap with each process slot held until the
   killed CLI has been reaped, as before slots were freed at the kill (``cli_gate``); with
   ``--compare-inline-removal``, the default with each trial folder removed on the event
   loop, as before that moved to a worker thread (``removal_off_loop``);
5. the most CLI processes at once in each pass ("peak procs"): the default cap starts at the
   usable CPUs and grows only when the API keeps processes waiting (``cli_gate``). With
   ``--latency-ms L`` serve-sim waits L ms before every answer, as the real API does
   (seconds); ``--latency-ms 1500 --compare 2`` shows what a cap fixed at the CPUs would cost
   there. The wall/floor figure then compares with a CPU-only floor and is not the target.

6. where the excess over the floor comes from, as geometric means over the passes with 95 %
   intervals: wall/floor is the product of (a) the CLIs' CPU per trial in the timed pass over
   that in the serial probes (contention between CLIs, and drift of the VM's speed between
   probe and pass) and (b) the usable CPUs over the CPUs the CLIs kept busy (what our
   orchestrator, serve-sim, the tail of the batch and idle time took); the tail alone, the
   last trials of a batch running on fewer CPUs than there are, is about (C - 1) / (2 N) of
   it for N trials on C CPUs.

Other work on the machine inflates the wall time and so the ratio; the CPU figure is taken
in the same run, so the ratio stays comparable between runs on a quiet machine. With
``--repeats R`` the timed pass is made R times, each against the mean of the probes around it,
and the median ratio is printed beside each one.
"""
from __future__ import annotations

import argparse
import asyncio
import resource
import statistics
import sys
import time
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _ci import ratio_ci  # noqa: E402

from skilleval.backends.claude_cli import ClaudeCliBackend, ClaudeCliParams  # noqa: E402
from skilleval.backends.cli_process import usable_cpus  # noqa: E402
from skilleval.domain import ListedSkill, Trial, TrialResult  # noqa: E402
from skilleval.sim.process import SimProcess, locate_claude_cli  # noqa: E402

LISTING = (ListedSkill("pdf-form-filler", "Fill in PDF forms (AcroForm fields) from user-provided "
                       "data. Use when the user asks to fill, complete or populate a PDF form."),
           ListedSkill("csv-summarizer", "Summarize CSV files with pandas. Use when the user asks "
                       "for statistics about a CSV file."))
QUERIES = ["fill in the PDF form tax.pdf", "summary statistics of sales.csv",
           "what is the capital of France?", "populate this pdf form"]
TRIGGER_CONCURRENCY = 8  # conf/trigger/default.yaml


def make_trials(n: int, tag: str) -> list[Trial]:
    return [Trial(f"{tag}{i}", f"c{i % 4}", QUERIES[i % 4], LISTING[0].name, LISTING, i // 4, "sim-1")
            for i in range(n)]


def children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def own_cpu() -> float:
    """CPU seconds of this process: the orchestrator (the backend's asyncio loop, stream
    parsing, trial folders)."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def process_cpu(pid: int) -> float | None:
    """CPU seconds of a running process (serve-sim), or None when it cannot be read."""
    try:
        t = psutil.Process(pid).cpu_times()
    except psutil.Error:
        return None
    return t.user + t.system


async def run(backend: ClaudeCliBackend, trials: list[Trial], in_flight: int) -> tuple[float, list[TrialResult]]:
    gate = asyncio.Semaphore(in_flight)

    async def one(t: Trial) -> TrialResult:
        async with gate:
            return await backend.run_trial(t)
    start = time.perf_counter()
    results = list(await asyncio.gather(*(one(t) for t in trials)))
    return time.perf_counter() - start, results


def requests(sim: SimProcess) -> int:
    return int(sim.stats().get("POST /v1/messages", 0))


def measure(sim: SimProcess, backend: ClaudeCliBackend, trials: list[Trial], in_flight: int
            ) -> tuple[float, float, float, int, int, float, float | None]:
    """(wall s, CPU s of the CLI processes, API requests per trial, errors, most CLI
    processes at once: the default's cap adapts to the API's waiting, see cli_gate; CPU s
    of this orchestrator and of serve-sim, which the CLI-only floor leaves out)."""
    before_req, before_cpu, before_own = requests(sim), children_cpu(), own_cpu()
    before_sim = process_cpu(sim.pid)
    backend.gate.peak = 0
    wall, results = asyncio.run(run(backend, trials, in_flight))
    cpu, own = children_cpu() - before_cpu, own_cpu() - before_own
    after_sim = process_cpu(sim.pid)
    sim_cpu = None if before_sim is None or after_sim is None else after_sim - before_sim
    per_trial = (requests(sim) - before_req) / len(trials)
    return (wall, cpu, per_trial, sum(not r.outcome.valid for r in results), backend.gate.peak,
            own, sim_cpu)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=60)
    parser.add_argument("--probe", type=int, default=6, help="serial trials that measure CPU per trial")
    parser.add_argument("--repeats", type=int, default=3, help="timed passes (median reported)")
    parser.add_argument("--compare", type=int, nargs="*", default=[],
                        help="also run at these fixed CLI process caps (e.g. 8, the old default; 2)")
    parser.add_argument("--compare-hold", action="store_true",
                        help="also run the default cap with each slot held until the killed CLI "
                             "is reaped (the behaviour before slots were freed at the kill)")
    parser.add_argument("--compare-inline-removal", action="store_true",
                        help="also run the default with each trial folder removed on the event "
                             "loop (the behaviour before that moved to a worker thread)")
    parser.add_argument("--latency-ms", type=float, default=0.0,
                        help="serve-sim waits this long before each answer (the real API takes "
                             "seconds): the default cap then grows past the CPUs (cli_gate)")
    args = parser.parse_args()
    claude, reason = locate_claude_cli()
    if claude is None:
        print(f"cannot run: {reason}", file=sys.stderr)
        return 3
    cpus = usable_cpus()
    with SimProcess() as sim:
        sim.configure(latency_ms=args.latency_ms)
        def backend(**params: int) -> ClaudeCliBackend:
            return ClaudeCliBackend(ClaudeCliParams(executable=claude, model="sim-1",
                                                    base_url=sim.url, **params))
        default = backend()
        print(f"claude {default.cli_version}, {cpus} usable CPUs, default CLI processes at once: "
              f"{default.max_processes}, {args.trials} trials ({TRIGGER_CONCURRENCY} in flight)")
        measure(sim, default, make_trials(1, "warm-"), 1)

        def probe(tag: str) -> float:
            cpu = measure(sim, default, make_trials(args.probe, tag), 1)[1]
            return cpu / args.probe
        # the default (its cap adapts to the waiting) and one timed run per fixed cap
        runs: list[tuple[str, ClaudeCliBackend]] = [("default", default)] + [
            (f"fixed {k}", backend(concurrency=k)) for k in dict.fromkeys(args.compare)]
        if args.compare_hold:
            hold = backend()
            hold.gate.early_release = False
            runs.append(("hold reap", hold))
        if args.compare_inline_removal:
            inline = backend()
            inline.removal_off_loop = False
            runs.append(("inline rm", inline))
        print(f"{'pass':>4} {'processes':>9} {'CPU/trial':>10} {'floor s':>8} {'wall s':>8} "
              f"{'wall/floor':>11} {'busy CPUs':>10} {'API calls/trial':>16} {'peak procs':>11} "
              f"{'own CPU/trial':>14} {'sim CPU/trial':>14}")
        ratios: dict[str, list[float]] = {label: [] for label, _ in runs}
        # wall/floor = (CLI CPU per trial in the pass / in the probes) x (CPUs / CPUs busy with
        # CLIs): the first factor is contention and drift of the machine's speed, the second
        # the capacity no CLI used (the orchestrator, serve-sim, the last trial's tail, idle)
        contention: dict[str, list[float]] = {label: [] for label, _ in runs}
        unused: dict[str, list[float]] = {label: [] for label, _ in runs}
        before = probe("probe-0-")
        for rep in range(args.repeats):
            timed = []
            # the arms alternate order between passes, so neither always runs first
            for label, arm in (runs if rep % 2 == 0 else runs[::-1]):
                timed.append((label, *measure(sim, arm, make_trials(args.trials, f"r{rep}p{label}-"),
                                               TRIGGER_CONCURRENCY)))
            after = probe(f"probe-{rep + 1}-")
            per_trial_cpu = (before + after) / 2
            floor = args.trials * per_trial_cpu / cpus
            for label, wall, cpu, calls, errors, peak, own, sim_cpu in timed:
                ratios[label].append(wall / floor)
                contention[label].append(cpu / args.trials / per_trial_cpu)
                unused[label].append(cpus * wall / cpu)
                sim_col = "n/a" if sim_cpu is None else f"{sim_cpu / args.trials:.3f}"
                print(f"{rep + 1:>4} {label:>9} {per_trial_cpu:>10.3f} {floor:>8.2f} {wall:>8.2f} "
                      f"{wall / floor:>11.3f} {cpu / wall:>10.2f} {calls:>16.2f} {peak:>11} "
                      f"{own / args.trials:>14.3f} {sim_col:>14}"
                      + (f"  ({errors} errors)" if errors else ""))
            before = after
        for label, values in ratios.items():
            # the interval says whether a pass-to-pass spread as wide as the distance to 1.05
            # leaves the miss (or the hit) distinguishable from noise
            gmean, low, high = ratio_ci(values, [1.0] * len(values))
            print(f"processes {label}: median wall/floor {statistics.median(values):.3f} "
                  f"over {len(values)} passes; geometric mean {gmean:.3f} (95 % CI {low:.3f}-"
                  f"{high:.3f}) (target <= 1.05 at the default"
                  + (f"; latency {args.latency_ms:g} ms: the floor counts CPU only)" if args.latency_ms
                     else ")"))
            ones = [1.0] * len(values)
            c_mean, c_low, c_high = ratio_ci(contention[label], ones)
            u_mean, u_low, u_high = ratio_ci(unused[label], ones)
            print(f"  = CLI CPU per trial, pass / probes {c_mean:.3f} ({c_low:.3f}-{c_high:.3f}) "
                  f"x CPUs / CPUs busy with CLIs {u_mean:.3f} ({u_low:.3f}-{u_high:.3f}); the "
                  f"tail (the last trials running on fewer CPUs than there are) accounts for about "
                  f"{1 + (cpus - 1) / (2 * args.trials):.3f} of the second")
        base = ratios["default"]
        for label, values in list(ratios.items())[1:]:
            ratio, low, high = ratio_ci(values, base)
            print(f"wall at {label} / wall at the default: {ratio:.3f} "
                  f"(paired 95 % CI {low:.3f}-{high:.3f} over {len(values)} passes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
