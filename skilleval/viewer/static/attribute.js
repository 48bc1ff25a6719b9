/* Sentence attribution run page: each description sentence with its effect on recall and on
 * the false-trigger rate (Shapley value, and what dropping it does), with the run's paired
 * intervals, ranked as the terminal ranks them. The data is the run row's summary (the same
 * numbers as the run's results.json). Sentences are hostile text: text nodes only. */
"use strict";
(function () {
  const { h } = SE;

  /* "+0.00", not "-0.00", for a value that rounds to zero (as the terminal prints it) */
  function signed(x) {
    if (x === null || x === undefined) return "n/a";
    const r = Math.round(100 * x) / 100 + 0;
    return (r >= 0 ? "+" : "") + SE.fixed(r, 2);
  }

  /* "drop it" columns show what removing the sentence does: the negated leave-one-out effect */
  function effect(e, negate) {
    if (!e || e.value === null || e.value === undefined) return h("td", { class: "muted" }, "n/a (no query measured)");
    const s = negate ? -1 : 1;
    const text = signed(s * e.value);
    if (e.low === null || e.low === undefined) return h("td", { class: "num" }, text, h("span", { class: "muted" }, ` (CI n/a: ${e.queries} query)`));
    const [lo, hi] = [s * e.low, s * e.high].sort((a, b) => a - b);
    const clear = lo > 0 || hi < 0;  /* the interval excludes 0 */
    return h("td", { class: "num" + (clear ? "" : " muted"), title: `${e.queries} queries` }, `${text} [${signed(lo)}, ${signed(hi)}]`);
  }

  SE.pages.attribute = async function (body, run) {
    const a = (run.summary || {}).attribution;
    if (!a) { body.append(h("p", { class: "muted" }, "this run recorded no attribution table")); return; }
    const lvl = Math.round(100 * (a.confidence || 0.95));
    const base = a.full_description_mean_trigger_rate || {};
    const t = SE.table(["rank", "#", "sentence", `Shapley Δrecall [${lvl}% CI]`, "Shapley ΔFTR", "drop it: Δrecall", "drop it: ΔFTR"], "grid attribution");
    a.ranking.forEach((i, rank) => {
      const r = a.attribution[i];
      t.tbody.append(h("tr", { "data-key": String(i) }, h("td", { class: "num" }, String(rank + 1)), h("td", { class: "num" }, String(i + 1)),
        h("td", { dir: "auto" }, r.sentence),
        effect(r.shapley_recall), effect(r.shapley_false_trigger_rate), effect(r.loo_recall, true), effect(r.loo_false_trigger_rate, true)));
    });
    const errors = (a.errors || 0) + (a.timeouts || 0);
    body.append(
      h("div", { class: "cards" },
        h("div", { class: "card" }, h("div", { class: "label" }, "sentences"), h("div", { class: "big" }, String(a.attribution.length)),
          h("div", { class: "muted" }, a.method === "exact" ? `exact Shapley over ${a.coalitions} descriptions`
            : `Shapley sampled from ${a.permutations} permutations (${a.coalitions} descriptions)`)),
        h("div", { class: "card" }, h("div", { class: "label" }, "full description: mean trigger rate"),
          h("div", { class: "big" }, SE.pct(base.should_trigger)),
          h("div", { class: "muted" }, `should-trigger queries; ${SE.pct(base.should_not_trigger)} on should-not-trigger ones · ${a.runs} runs per query`
            + (base.queries ? ` · over the ${base.queries.should_trigger} + ${base.queries.should_not_trigger} queries measured under every description` : ""))),
        h("div", { class: "card" }, h("div", { class: "label" }, "errors / timeouts"), h("div", { class: "big" + (errors ? " errors" : "") }, String(errors)),
          h("div", { class: "muted" }, "left out of every rate, never a “no”"))),
      h("h2", {}, "What each sentence does"),
      h("p", { class: "muted" }, `Ranked by Shapley Δrecall. Recall: the mean trigger rate over should-trigger queries; FTR: over should-not-trigger queries (each query's rate over its valid trials). ${lvl}% paired intervals over ${a.unit || "queries"}; greyed where the interval covers 0.`),
      t);
  };
})();
