"""One line per distinct error in a sweep, not one per job.

A setting shared by every job of a multirun (a bad value, a missing file) fails each job with
the same message; printing it once per job buries the one thing to fix under copies. The
first occurrence is printed at once (a long sweep should not hide its first failure until it
ends); later identical ones are only counted, and when the sweep ends one line says in how
many jobs each repeated error happened ("in all 4 jobs"). Exit codes are unaffected: the CLI
still exits with the worst code of all jobs.

Jobs a launcher runs in other processes (joblib, submitit, ray) do not print: they hand
their line to the CLI through ``job_exit``'s files, and the CLI counts it here like any other.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass, field


@dataclass
class SweepErrors:
    #: message -> the Hydra job numbers that failed with it, in order of first occurrence
    jobs: dict[str, list[int]] = field(default_factory=dict)

    def clear(self) -> None:
        self.jobs.clear()

    def first_time(self, message: str, job_num: int) -> bool:
        """Record `message` for job `job_num`; True if no earlier job of the sweep had it."""
        seen = message in self.jobs
        self.jobs.setdefault(message, []).append(job_num)
        return not seen

    def repeated_lines(self, total_jobs: int) -> list[str]:
        """One line per message more than one job failed with (printed once already)."""
        repeated = {m: j for m, j in self.jobs.items() if len(j) > 1}
        lines = []
        for message, nums in repeated.items():
            where = (("both jobs" if total_jobs == 2 else f"all {total_jobs} jobs") if len(nums) == total_jobs
                     else f"{len(nums)} of {total_jobs} jobs: {', '.join(f'#{n}' for n in nums)}")
            which = ("the error above" if len(self.jobs) == 1
                     else f"the error above starting {_start(message)!r}")
            lines.append(f"skilleval: {which} occurred in {where} (printed once)")
        return lines

    def print_repeated(self, total_jobs: int) -> None:
        for line in self.repeated_lines(total_jobs):
            print(line, file=sys.stderr)


def _start(message: str, width: int = 48) -> str:
    return message if len(message) <= width else message[: width - 1] + "…"


#: The sweep being run in this process (the CLI clears it when a Hydra run starts).
SWEEP_ERRORS = SweepErrors()
