"""Cost of a call from a price table kept in config (``conf/pricing/default.yaml``), not in code.

``cost = (in*p_in + cw5m*1.25*p_in + cw1h*2*p_in + cr*p_cr + out*p_out) / 1e6``, halved for
Message Batches (``claude-interfaces.md`` §4.3, §4.9). ``p_cr`` is the model's listed cache-read
price, or 0.1*p_in. A model missing from the table costs None (unknown), never a guess.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from skilleval.errors import UserError
from skilleval.skills import yaml_problem

DEFAULT_TABLE = Path(__file__).resolve().parents[2] / "conf" / "pricing" / "default.yaml"


@dataclass(frozen=True)
class TokenCounts:
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_5m_tokens: int = 0
    cache_write_1h_tokens: int = 0

    @property
    def total_input(self) -> int:
        return (self.input_tokens + self.cache_read_tokens + self.cache_write_5m_tokens
                + self.cache_write_1h_tokens)


def _table_path() -> Path:
    if DEFAULT_TABLE.exists():
        return DEFAULT_TABLE
    from importlib import resources

    return Path(str(resources.files("skilleval.conf") / "pricing" / "default.yaml"))


@lru_cache(maxsize=8)
def load_table(path: str | None = None) -> dict[str, Any]:
    """The default table, with the models of ``path`` (if given) added or replaced."""
    table = yaml.safe_load(_table_path().read_text())
    if path:
        try:
            extra = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
        except (OSError, UnicodeDecodeError) as exc:
            raise UserError(f"backend.pricing_file: cannot read {path}: {exc}") from None
        except yaml.YAMLError as exc:
            raise UserError(f"backend.pricing_file: {path}: not valid YAML: {yaml_problem(exc)}") from None
        shapes = [extra] + [extra.get(k) or {} for k in ("models", "multipliers") if isinstance(extra, dict)]
        if not all(isinstance(x, dict) for x in shapes):
            raise UserError(f"backend.pricing_file: {path}: expected a mapping with 'models' "
                            "(and 'multipliers'), each a mapping by model name, as in "
                            "skilleval/conf/pricing/default.yaml")
        table.setdefault("models", {}).update(extra.get("models") or {})
        table.setdefault("multipliers", {}).update(extra.get("multipliers") or {})
    return table


def price_entry(model: str, table: dict[str, Any]) -> dict[str, Any] | None:
    models = table.get("models") or {}
    if model in models:
        return models[model]
    for entry in models.values():
        if model in (entry.get("aliases") or []):
            return entry
    return None


def cost_usd(model: str, tokens: TokenCounts, *, batch: bool = False,
             pricing_file: str | None = None) -> float | None:
    table = load_table(pricing_file)
    entry = price_entry(model, table)
    if entry is None:
        return None
    mult = table.get("multipliers") or {}
    p_in, p_out = float(entry["input"]), float(entry["output"])
    long_ctx = entry.get("long_context")
    if long_ctx and tokens.total_input > int(long_ctx["threshold"]):
        p_in, p_out = float(long_ctx["input"]), float(long_ctx["output"])
    p_read = float(entry.get("cache_read", p_in * float(mult.get("cache_read", 0.1))))
    usd = (tokens.input_tokens * p_in
           + tokens.cache_write_5m_tokens * p_in * float(mult.get("cache_write_5m", 1.25))
           + tokens.cache_write_1h_tokens * p_in * float(mult.get("cache_write_1h", 2.0))
           + tokens.cache_read_tokens * p_read
           + tokens.output_tokens * p_out) / 1e6
    return usd * float(mult.get("batch", 0.5)) if batch else usd


def tokens_from_usage(usage: Any) -> TokenCounts:
    """TokenCounts from an SDK ``Usage`` object or a plain usage dict (API or CLI result)."""
    def get(obj: Any, name: str) -> Any:
        return obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)

    if usage is None:
        return TokenCounts()
    write = int(get(usage, "cache_creation_input_tokens") or 0)
    detail = get(usage, "cache_creation")
    write_1h = int(get(detail, "ephemeral_1h_input_tokens") or 0) if detail else 0
    return TokenCounts(int(get(usage, "input_tokens") or 0), int(get(usage, "output_tokens") or 0),
                       int(get(usage, "cache_read_input_tokens") or 0), write - write_1h, write_1h)


def worst_case_usd(model: str, input_tokens: int, output_tokens: int, *, batch: bool = False,
                   pricing_file: str | None = None) -> float | None:
    """What a call of this size could cost at most: every input token written to the 1-hour
    cache (the dearest input rate) and the output as given. Why the budget needs it: one
    request costs up to 20 times another of the same size, depending on what the cache held
    (seen through the CLI: a trial stopped at its decision $0.0048, one that answered $0.0174,
    both 15,050 tokens), so the dearest call so far is no bound for the next one."""
    return cost_usd(model, TokenCounts(output_tokens=output_tokens, cache_write_1h_tokens=input_tokens),
                    batch=batch, pricing_file=pricing_file)

