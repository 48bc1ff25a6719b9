"""Eval sets worth trusting: drafting, coverage, quality checks, power, and a review page.

* `draft`: ``+experiment=draft_evals`` — an LLM drafter (real backends) and an offline
  baseline drafter (the stub), both writing skill-creator's trigger eval format plus extra
  keys (``id``, ``rationale``, ``span``, ``source``) that skill-creator ignores.
* `coverage`: the description's and body's "use when…" / "not for…" clauses, mapped to the
  queries that exercise them.
* `checks` and `power`: ``skilleval check-evals`` (duplicates, balance, leaks, cross-split
  duplicates, never-discriminating queries, and an exact power statement).
* `review`: ``skilleval review-evals``, a loopback page to edit a set and save it validated.

Self-contained on purpose: the viewer (``skilleval view``) can mount the review page later.
"""
