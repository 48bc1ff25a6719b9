"""Trial executors: where a trigger trial's backend call runs (this process, a Ray cluster)."""
