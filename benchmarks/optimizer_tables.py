"""Tables of benchmarks/optimizer_efficiency.py: the paired interval, the supplementary
``--unseen`` table and the ``--diagnose`` breakdown (see that script's docstring)."""
from __future__ import annotations

import statistics


def paired_ci(diffs: list[float], confidence: float = 0.95) -> tuple[float, float, float]:
    """Mean of the paired differences and its t-interval over the (example, seed) units."""
    from scipy import stats

    n = len(diffs)
    mean = statistics.mean(diffs)
    if n < 2:
        return mean, float("-inf"), float("inf")
    half = stats.t.ppf(0.5 + confidence / 2, n - 1) * statistics.stdev(diffs) / n ** 0.5
    return mean, mean - half, mean + half


def print_diagnosis(rows: list[dict], configs: list[str]) -> None:
    """``--diagnose``: where ours loses to skill-creator, per unit and in sum. Each unit's
    difference d (fresh test accuracy, ours recommended - skill-creator) falls in one class:
    ours kept the original (no candidate won its paired test), the test check overruled the
    loop's best, or ours handed over another description; and whether any description ours
    evaluated scored at least skill-creator's (so the loss is in choosing, not proposing).
    The sums are each class's share of the mean d."""
    for k, conf in enumerate(configs):
        print(f"\nDIAGNOSIS ours {conf or '(defaults)'}: per unit (fresh test accuracy)")
        print(f"{'example':<18}{'seed':>5}{'orig':>6}{'ours':>6}{'val-best':>9}{'sc':>6}{'max cand':>9}"
              f"{'acc.':>5}{'iters':>6}  exit; candidates (iteration: decision accuracy)")
        share: dict[str, float] = {}
        for r in rows:
            g = r[f"ours{k}_diag"]
            top = max(a for *_, a in g["candidates"])
            print(f"{r['example']:<18}{r['seed']:>5}{r['orig']:>6.2f}{r[f'ours{k}_acc']:>6.2f}"
                  f"{r[f'ours{k}_best_acc']:>9.2f}{r['sc_acc']:>6.2f}{top:>9.2f}{g['accepted']:>5}"
                  f"{g['iterations']:>6}  {g['exit']}; "
                  + " | ".join(f"{it}: {d} {a:.1f}" for it, d, a in g["candidates"]))
            d = r[f"ours{k}_acc"] - r["sc_acc"]
            how = ("kept the original" if not g["accepted"] else
                   "test check overruled" if g["overruled"] else "handed over a candidate")
            had = "had one as good" if top >= r["sc_acc"] else "had none as good"
            key = f"{how}, {'ours lower' if d < 0 else 'ours higher' if d > 0 else 'tie'}" + \
                (f" ({had})" if d < 0 else "")
            share[key] = share.get(key, 0.0) + d / len(rows)
        print("share of the mean paired difference by class:")
        for key, v in sorted(share.items()):
            print(f"  {key:<58}{v:+.3f}")


def significance(low: float, high: float) -> str:
    return "not significant" if low <= 0 <= high else ("better" if low > 0 else "worse")


def print_unseen(rows: list[dict], examples: list[str], configs: list[str], k: int,
                 fresh: int) -> None:
    """The supplementary figures (see the module docstring): accuracy on the K queries
    neither protocol saw, and the paired difference ours - skill-creator."""
    print(f"\nSUPPLEMENTARY (not the issue's target): accuracy on {k} held-out queries per unit "
          f"that neither protocol saw ({fresh} fresh runs each); both protocols ran without them")
    print(f"{'example':<18}{'original':>10}{'skill-creator':>15}  " + "  ".join(
        f"ours[{c or 'defaults'}] (paired vs skill-creator)" for c in configs))
    for example in [*examples, None]:
        rs = [r for r in rows if example is None or r["example"] == example]

        def m(key: str, rs: list[dict] = rs) -> float:
            return statistics.mean(r[key] for r in rs)
        cells = []
        for j in range(len(configs)):
            for key, tag in ((f"ours{j}", "recommended"), (f"ours{j}_best", "validation-best")):
                mean, low, high = paired_ci([r[f"{key}_unseen"] - r["sc_unseen"] for r in rs])
                cells.append(f"{tag} {m(f'{key}_unseen'):.3f} ({mean:+.3f} [95% CI {low:+.3f}, "
                             f"{high:+.3f}] {significance(low, high)})")
        name = example or f"all {len(rs)} units"
        print(f"{name:<18}{m('orig_unseen'):>10.3f}{m('sc_unseen'):>15.3f}  " + "  ".join(cells))
