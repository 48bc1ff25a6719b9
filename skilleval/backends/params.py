"""Parameters of the backends, in a module of their own.

Why separate: plugin registration needs the params classes (they become Hydra config
nodes) at every CLI start, while the backends themselves import the anthropic SDK (about a
second), numpy and the embedding model (embed), or asyncio and the simulator's completion
code (stub). Registration imports only this module; the backend module is imported when the
backend is built.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from skilleval.sim import model as sim


@dataclass
class ClaudeCliParams:
    executable: str = "claude"
    model: str = "claude-sonnet-5-5"
    max_turns: int = 3
    timeout_s: float = 120.0
    base_url: Optional[str] = None
    max_retries: int = 3             # whole-run retries after an API error result
    retry_base_s: float = 2.0
    cli_max_retries: int = 2         # CLAUDE_CODE_MAX_RETRIES inside the CLI
    work_root: Optional[str] = None  # where per-trial projects are made (default: system temp)
    extra_args: list[str] = field(default_factory=list)
    keep_workdirs: bool = False
    sim_hints: bool = True           # send x-skilleval-sim to loopback simulators only
    pricing_file: Optional[str] = None
    concurrency: Optional[int] = None  # CLI processes at once, fixed (default: adaptive, see cli_gate)


@dataclass
class AnthropicApiParams:
    model: str = "claude-sonnet-5-5"
    base_url: Optional[str] = None
    api_key_env: str = "ANTHROPIC_API_KEY"
    cli_version: str = "2.1.332"
    layout: str = "auto"            # auto | reminder | system_message | tool_lines | tool_xml
    system_prompt: str = ""
    system_prompt_file: Optional[str] = None
    skill_tool_description_file: Optional[str] = None
    extra_tools: list[str] = field(default_factory=list)  # e.g. [Read, Glob, Bash]
    sort_listing: bool = True
    max_turns: int = 3              # a Skill call after orientation tool calls still counts
    stop_on_text: bool = False     # True: a text block first decides "not triggered" (cheaper, misses text-then-Skill)
    max_tokens: int = 1024
    prompt_cache: bool = True
    timeout_s: float = 120.0
    max_retries: int = 6
    retry_base_s: float = 0.5
    retry_max_s: float = 30.0
    concurrency: int = 16
    min_concurrency: int = 1
    batch: bool = False
    batch_max_requests: int = 10000
    batch_window_s: float = 2.0
    batch_poll_s: float = 30.0
    batch_state_dir: Optional[str] = None
    pricing_file: Optional[str] = None
    sim_hints: bool = True          # send x-skilleval-sim to loopback simulators only


@dataclass
class StubParams:
    model: str = "sim-1"
    latency_ms: float = 0.0
    latency_jitter_ms: float = 0.0
    error_rate: float = 0.0
    timeout_rate: float = 0.0
    rate_limit_rate: float = 0.0
    max_retries: int = 3
    retry_backoff_ms: float = 0.0
    fault_seed: int = 0
    input_usd_per_mtok: float = 0.0
    output_usd_per_mtok: float = 0.0
    slope: float = sim.Params.slope
    midpoint: float = sim.Params.midpoint
    exclusion_penalty: float = sim.Params.exclusion_penalty
    competitor_temperature: float = sim.Params.competitor_temperature


@dataclass
class EmbedParams:
    model: str = "all-MiniLM-L6-v2"
    #: Override the shipped calibration (null: use embed_calibration.json).
    intercept: float | None = None
    slope: float | None = None


def check_bounds(prefix: str, params: Any, minimums: dict[str, float], positive: tuple[str, ...] = ()) -> None:
    """UserError (exit 2) naming ``prefix.field`` for a setting below its least value, or not
    above 0 for those in `positive`. Found by a run, a timeout of -5 s was every trial a
    timeout (exit 3, "check the API key"), a concurrency of 0 no trial at all."""
    from skilleval.checks import checked_number
    from skilleval.errors import UserError

    for name, least in minimums.items():
        value = getattr(params, name)
        if value is not None and checked_number(f"{prefix}.{name}", value, float) < least:
            raise UserError(f"{prefix}.{name} must be at least {least:g}, got {value!r}")
    for name in positive:
        value = getattr(params, name)
        if value is not None and checked_number(f"{prefix}.{name}", value, float) <= 0:
            raise UserError(f"{prefix}.{name} must be above 0, got {value!r}")


def check_base_url(prefix: str, url: str | None) -> None:
    """UserError (exit 2) for a ``base_url`` that is not an http(s) URL with a host: an
    ``ftp://`` one failed every self-check call (exit 3 after 20 s of retries), and
    ``notaurl`` was looked up as a host name."""
    if url is None:
        return
    from urllib.parse import urlsplit

    from skilleval.errors import UserError

    try:
        parts = urlsplit(str(url))
        port_ok = parts.port is None or parts.port > 0
    except ValueError as exc:
        raise UserError(f"{prefix}.base_url={url!r}: not a URL ({exc})") from None
    if parts.scheme not in ("http", "https") or not parts.hostname or not port_ok:
        raise UserError(f"{prefix}.base_url={url!r}: give an http:// or https:// URL with a host, "
                        "as in http://127.0.0.1:8765")
