"""Arrow schemas of the store's tables, validated at write time.

DuckDB reads the parts with ``union_by_name``, which widens mismatched types silently
(``VARCHAR`` + ``INT64`` -> ``VARCHAR``); writing through an explicit schema keeps every part
of a table typed the same, and ``schema_version`` marks deliberate changes.
"""
from __future__ import annotations

import pyarrow as pa

SCHEMA_VERSION = 1

# Columns every row of every table carries: where it came from.
IDENTITY = [
    ("run_id", pa.string()),
    ("sweep_id", pa.string()),
    ("job_num", pa.int32()),
    ("experiment", pa.string()),
    ("schema_version", pa.int16()),
    ("ts", pa.timestamp("us", tz="UTC")),
]

TRIALS = pa.schema(IDENTITY + [
    ("key", pa.string()),
    ("backend", pa.string()),
    ("model", pa.string()),
    ("skill", pa.string()),
    ("description", pa.string()),
    ("listing", pa.list_(pa.string())),
    ("case_id", pa.string()),
    ("query", pa.string()),
    ("should_trigger", pa.bool_()),
    ("repeat", pa.int32()),
    ("outcome", pa.string()),
    ("triggered", pa.bool_()),
    ("fired", pa.string()),
    ("position", pa.int32()),
    ("latency_ms", pa.float64()),
    ("input_tokens", pa.int64()),
    ("output_tokens", pa.int64()),
    ("cache_read_tokens", pa.int64()),
    ("cache_write_tokens", pa.int64()),
    ("cost_usd", pa.float64()),
    ("retries", pa.int32()),
    ("error", pa.string()),
    ("backend_version", pa.string()),
    ("shown", pa.list_(pa.string())),
    ("excerpt", pa.string()),  # <= 200 chars of what the model did, secrets redacted
])

QUERIES = pa.schema(IDENTITY + [
    ("skill", pa.string()),
    ("description", pa.string()),
    ("split", pa.string()),
    ("case_id", pa.string()),
    ("query", pa.string()),
    ("should_trigger", pa.bool_()),
    ("runs", pa.int32()),
    ("valid_runs", pa.int32()),
    ("triggers", pa.int32()),
    ("errors", pa.int32()),
    ("timeouts", pa.int32()),
    ("trigger_rate", pa.float64()),
    ("verdict", pa.string()),
    ("passed", pa.bool_()),
    ("fired_other", pa.int32()),
    ("threshold", pa.float64()),
    ("cached_runs", pa.int32()),
    # run-level numbers from different policies must not be pooled: `decided`/`sequential`
    # rows hold early-stopped rates (filter on policy = 'fixed' for unbiased ones)
    ("policy", pa.string()),
    ("planned_runs", pa.int32()),
])

RUNS = pa.schema(IDENTITY + [
    ("status", pa.string()),
    ("backend", pa.string()),
    ("model", pa.string()),
    ("skill", pa.string()),
    ("output_dir", pa.string()),
    ("overrides", pa.list_(pa.string())),
    ("config_yaml", pa.string()),
    ("plugin_versions", pa.string()),
    ("calls_made", pa.int64()),
    ("calls_cached", pa.int64()),
    ("cost_usd", pa.float64()),
    ("summary_json", pa.string()),
    ("variant", pa.string()),  # the description variant measured ("" = SKILL.md's own)
    ("description_hash", pa.string()),  # sha256[:16] of the description measured
])
