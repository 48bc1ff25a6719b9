"""The `stub` backend: the offline simulated model (see `skilleval.sim.model` for how it decides).

It is the default backend, so that every command runs on a fresh machine with no key. It
can also inject latency and faults (errors, timeouts, rate limits) to exercise the engine's
concurrency and error paths. Fault draws are deterministic per trial key *and attempt*: a
trial that errored in one run is drawn again when it is retried in the next.
"""
from __future__ import annotations

import asyncio
import hashlib
import time
from collections import Counter
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from skilleval.backends.api_listing import shown_listing
from skilleval.backends.base import BaseBackend
from skilleval.backends.params import StubParams, check_bounds
from skilleval.errors import UserError
from skilleval.domain import Completion, ListedSkill, Outcome, Trial, TrialResult
from skilleval.excerpt import make_excerpt
from skilleval.sim import model as sim
from skilleval.sim.completion import respond

if TYPE_CHECKING:
    from skilleval.execution import ExecutionRequest, ExecutionResult


_SYSTEM_TOKENS = 300  # a simulated fixed prompt overhead per trial


class StubBackend(BaseBackend):
    name = "stub"
    needs_self_check = False
    harness_version = "sim-1"
    writes_prose = False  # draft_evals uses its offline drafter here (see evalsets.draft)

    def __init__(self, params: StubParams) -> None:
        self.params = params
        self.model = params.model
        self.sim_params = sim.Params(
            slope=params.slope, midpoint=params.midpoint,
            exclusion_penalty=params.exclusion_penalty,
            competitor_temperature=params.competitor_temperature,
        )
        for key in ("error_rate", "timeout_rate", "rate_limit_rate"):
            rate = getattr(params, key)
            if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not 0 <= rate <= 1:
                raise UserError(f"backend.{key} must be a share in [0, 1], got {rate!r}")
        check_bounds("backend", params, {"latency_ms": 0, "latency_jitter_ms": 0, "max_retries": 0,
                                         "retry_backoff_ms": 0})
        if params.error_rate + params.timeout_rate > 1:
            raise UserError(f"backend.error_rate + backend.timeout_rate must be at most 1, got "
                            f"{params.error_rate} + {params.timeout_rate}")
        self._attempts: Counter[str] = Counter()
        self._faulty = params.error_rate > 0 or params.timeout_rate > 0
        self._completions: Counter[str] = Counter()
        self.calls = 0

    def identity(self) -> dict[str, Any]:
        ident = super().identity()
        ident["sim"] = [self.params.slope, self.params.midpoint, self.params.exclusion_penalty,
                        self.params.competitor_temperature]
        return ident

    # -- trials -------------------------------------------------------------------------

    def _fault_draw(self, key: str, salt: str) -> float:
        attempt = self._attempts[key]
        digest = hashlib.blake2b(f"{self.params.fault_seed}|{key}|{attempt}|{salt}".encode(),
                                 digest_size=8).digest()
        return int.from_bytes(digest, "big") / 2**64

    async def _latency(self, key: str) -> float:
        p = self.params
        if p.latency_ms <= 0 and p.latency_jitter_ms <= 0:
            return 0.0
        jitter = (self._fault_draw(key, "latency") * 2 - 1) * p.latency_jitter_ms
        delay = max(0.0, p.latency_ms + jitter) / 1000
        await asyncio.sleep(delay)
        return delay

    async def run_trial(self, trial: Trial) -> TrialResult:
        p = self.params
        start = time.perf_counter()
        retries = 0
        tokens_in = _tokens_in(trial.listing, trial.query)
        while True:
            self.calls += 1
            await self._latency(trial.key)
            if p.rate_limit_rate and self._fault_draw(trial.key, "429") < p.rate_limit_rate:
                self._attempts[trial.key] += 1
                if retries >= p.max_retries:
                    return self._result(trial, Outcome.ERROR, start, retries, 0,
                                        error="rate_limited: retries exhausted (simulated 429)")
                retries += 1
                if p.retry_backoff_ms:
                    await asyncio.sleep(p.retry_backoff_ms * 2 ** (retries - 1) / 1000)
                continue
            break
        fault = self._fault_draw(trial.key, "fault") if self._faulty else 1.0
        if self._faulty:
            self._attempts[trial.key] += 1
        if fault < p.error_rate:
            return self._result(trial, Outcome.ERROR, start, retries, tokens_in,
                                error="simulated backend error")
        if fault < p.error_rate + p.timeout_rate:
            return self._result(trial, Outcome.TIMEOUT, start, retries, 0, error="simulated timeout")
        # The model sees the listing as the API backend renders it (one line per skill), and
        # decides on that: the same text serve-sim parses out of a real request.
        listing = _shown(trial.listing)
        seed = sim.draw_seed(self.model, listing, trial.query, trial.repeat)
        decision = sim.decide(listing, trial.query, self.model, seed, self.sim_params).fired
        outcome = Outcome.TRIGGERED if decision == trial.target else Outcome.NOT_TRIGGERED
        return self._result(trial, outcome, start, retries, tokens_in, fired=decision,
                            output_tokens=20 if decision else 60,
                            excerpt=(f"[simulated] → Skill({decision})" if decision
                                     else "[simulated] answered without calling a skill"))

    def _result(self, trial: Trial, outcome: Outcome, start: float, retries: int, tokens_in: int,
                *, fired: str | None = None, error: str | None = None,
                output_tokens: int = 0, excerpt: str | None = None) -> TrialResult:
        return TrialResult(
            key=trial.key, outcome=outcome, fired=fired, position=0 if fired else None,
            latency_ms=(time.perf_counter() - start) * 1000, input_tokens=tokens_in,
            output_tokens=output_tokens,
            cost_usd=self.estimate_cost_usd(tokens_in, output_tokens) or 0.0,
            retries=retries, error=error, backend_version=self.harness_version,
            shown=_names(trial.listing), excerpt=make_excerpt([excerpt or ""]),
        )

    def estimate_cost_usd(self, input_tokens: int, output_tokens: int) -> float | None:
        p = self.params
        return (input_tokens * p.input_usd_per_mtok + output_tokens * p.output_usd_per_mtok) / 1e6

    # -- text and tasks -----------------------------------------------------------------

    async def complete(self, prompt: str, *, system: str | None = None,
                       max_tokens: int = 2048) -> Completion:
        start = time.perf_counter()
        self.calls += 1
        await self._latency(prompt[:64])
        digest = hashlib.sha256(f"{self.model}|{system}|{prompt}".encode()).hexdigest()
        sample = self._completions[digest]
        self._completions[digest] += 1
        seed = hashlib.sha256(f"{digest}|{sample}".encode()).digest()
        text = respond(prompt, seed)
        tin, tout = (len(prompt) + len(system or "")) // 4, len(text) // 4
        return Completion(text, tin, tout, self.estimate_cost_usd(tin, tout) or 0.0,
                          (time.perf_counter() - start) * 1000)

    def check_task(self, name: str, prompt: str, input_files: tuple[str, ...]) -> None:
        """The simulated agent only does delimited-text (CSV/TSV) work: for any other task it
        would have to invent output, so the stub refuses before the run starts."""
        from skilleval.sim.agent.tidy import unsupported

        why = unsupported(prompt, input_files)
        if why is not None:
            raise UserError(f"backend=stub cannot simulate eval {name!r}: its simulated agent only "
                            f"does CSV/TSV work and {why}; a real backend is needed "
                            "(backend=claude_cli or backend=anthropic_api)")

    async def execute(self, request: "ExecutionRequest") -> "ExecutionResult":
        from skilleval.sim.agent.stub_executor import simulate_execution

        self.calls += 1
        await self._latency(request.key)
        if self._faulty:  # the same fault knobs as trials, drawn per execution key and attempt
            from skilleval.execution import ExecutionResult

            fault = self._fault_draw(request.key, "fault")
            self._attempts[request.key] += 1
            if fault < self.params.error_rate:
                return ExecutionResult(request.key, status="error", error="simulated backend error")
            if fault < self.params.error_rate + self.params.timeout_rate:
                return ExecutionResult(request.key, status="timeout", error="simulated timeout")
        return simulate_execution(request, self)


@lru_cache(maxsize=4096)
def _shown(listing: tuple[ListedSkill, ...]) -> tuple[ListedSkill, ...]:
    return shown_listing(listing)


@lru_cache(maxsize=4096)
def _names(listing: tuple[ListedSkill, ...]) -> tuple[str, ...]:
    return tuple(s.name for s in listing)


@lru_cache(maxsize=65536)
def _tokens_in(listing: tuple[ListedSkill, ...], query: str) -> int:
    chars = sum(len(s.name) + len(s.description) + 4 for s in listing) + len(query)
    return _SYSTEM_TOKENS + chars // 4
