"""Lexical evidence for the `embed` backend: does the query use the rare words a description uses?

**Third pre-registered comparison: lexical evidence (written, and committed, before the
variant below was implemented or scored by any model).**

*Hypothesis* (general retrieval knowledge, not drawn from any acceptance query): a dense
sentence embedding blurs exact, rare terms (file formats, tool names, domain nouns) that a
user types and a description names; a query and a description sharing such a term is strong
evidence that the skill fits, which the cosine under-weights. Mixing dense similarity with a
sparse, term-matching signal ("hybrid" retrieval) is the standard remedy.

*The lexical feature* ``lex(query, skill | listing)``, in [0, 1], computed here and nowhere
else (nothing from ``skilleval/sim/`` is imported, copied or mirrored; no word list of any
kind, no stopword list):

- *terms* of a text: lowercase runs of letters and digits of at least two characters, each
  reduced by the Snowball English stemmer (``snowballstemmer``, already a dependency); a
  text's terms are a set (a word repeated counts once);
- *weights*, from the listing the query is scored against (so nothing is learned from any
  data set): with ``N`` listed skills and ``df(t)`` the number of them whose name plus whole
  description (exclusion clauses included) contains term ``t``,
  ``idf(t) = ln((N + 1) / (df(t) + 1))``. A term every listed description uses weighs 0 (it
  cannot tell the listed skills apart, and common function words fall out this way rather
  than by a list); a term no listed description uses weighs the most, ``ln(N + 1)``;
- ``lex = sum of idf(t) over query terms found in the skill's positive text / sum of idf(t)
  over all query terms`` (0 when the denominator is 0). The positive text is the one the
  ``blend`` feature already uses (``embed_features.parse``: the name as words plus the
  description without its exclusion clauses), so a term the description only excludes
  earns nothing. A query whose heavy terms no description names gets little lexical evidence
  for every skill.

*The variant* (added to ``embed_features.VARIANTS`` after (a)-(g)):

- (h) ``blend-lexical``: ``score = blend score (with the exclusion hinge exactly as shipped,
  on the dense similarities) + lam * lex``; ``lam`` is fitted by maximum likelihood together
  with the intercept, the slope and the item weight ``w`` (4 fitted parameters), refitted
  inside every leave-one-skill-out fold like the others. ``lam`` is not constrained in sign.

One variant only (no second, exclusion-side lexical variant).

*Decision rule, unchanged and fixed in advance*: over the whole table ((a)-(h)), ship the
variant with the lowest leave-one-skill-out log loss on the unchanged 380-row calibration
set (``python -m skilleval.backends.embed_calibration`` prints the table and applies the
rule); a difference under 0.001 goes to the variant with fewer fitted parameters, then to the
earlier variant. If ``blend`` stays lowest, it ships unchanged. The acceptance sets
(changelog-writer, csv-tidy, bank-reconciliation, dog-trainer, meeting-minutes, every
``experiments/*/evals``) play no part in the design, the fit or the choice; the acceptance
benchmark (``benchmarks/embed_accuracy.py --runs 9``) is run once, after the choice is
committed, and nothing is changed after seeing it.
"""
