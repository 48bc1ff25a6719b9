"""A learned per-dimension metric for the `embed` backend's similarities.

**Fifth pre-registered attempt at issue 14's first acceptance line (written, and committed,
before the variants below were implemented or scored by any model).**

*Hypothesis* (general metric-learning knowledge, not drawn from any acceptance query):
all-MiniLM-L6-v2 was trained for general sentence similarity, in which every one of its 384
dimensions weighs the same. "Does this request ask for this skill's job?" is a narrower
question: directions that carry the task and its objects should weigh more, directions that
carry register, question form or length less. A diagonal metric, ``sim_a(q, t) = sum_k a_k
q_k t_k`` with ``a_k = exp(v_k) > 0`` (a weighted inner product of the centred unit vectors
the backend already uses), learned on the labelled calibration set, is the smallest model of
that; the four earlier attempts (positive features, exclusion evidence, lexical evidence, a
larger calibration set) all kept the encoder's own geometry.

*The variants* (added to ``embed_features.VARIANTS`` after (a)-(h)): each is the shipped
(f) ``blend-item-margin`` (same features, same exclusion hinge against the best item, same
softmax with a "none" option) with every similarity taken under ``sim_a`` instead of the
plain dot product (in practice the query vector is multiplied by ``a`` once). ``v`` (384
numbers) is fitted by maximum likelihood together with the intercept, slope, item weight and
margin, with an L2 penalty ``lam * mean(v ** 2)`` added to the mean row log loss, from
``v = 0`` (the shipped geometry); refitted inside every leave-one-skill-out fold like every
other parameter. The penalty strength is not fitted: one variant per value,

- (i) ``diag-0.01``, (j) ``diag-0.1``, (k) ``diag-1``: ``lam`` = 0.01, 0.1, 1.

Five fitted parameters plus the 384 dimension weights (389), so under the rule's tie-break a
diagonal variant ships only when its held-out loss is at least 0.001 below every smaller one.

*Decision rule, unchanged and fixed in advance*: over the whole table ((a)-(k)), ship the
variant with the lowest leave-one-skill-out log loss on the unchanged 540-row calibration set
(``python -m skilleval.backends.embed_calibration`` prints the table and applies the rule); a
difference under 0.001 goes to the variant with fewer fitted parameters, then to the earlier
variant. If (f) stays lowest it ships unchanged. The acceptance sets (changelog-writer,
csv-tidy, bank-reconciliation, dog-trainer, meeting-minutes, every ``experiments/*/evals``)
play no part in the design, the fit or the choice; the acceptance benchmark
(``benchmarks/embed_accuracy.py --runs 9``) is run once, after the choice is committed, and
nothing is changed after seeing it.
"""
