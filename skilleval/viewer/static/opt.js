/* Optimisation page: accuracy per iteration (chart with interval bands), candidates with word
 * diffs against the incumbent they were compared with, decisions and p-values, flips, test. */
"use strict";
(function () {
  const { h } = SE;

  SE.diff = function (ops) {
    return h("div", { class: "diff", dir: "auto" }, ops.map(([op, text]) =>
      [h("span", { class: op === "+" ? "add" : op === "-" ? "del" : "same" }, text), " "]));
  };

  function candidate(c) {
    const accepted = String(c.decision).startsWith("accepted");
    return h("div", { class: "candidate " + (accepted ? "accepted" : c.iteration === 0 ? "original" : "rejected") },
      h("div", { class: "head" }, c.iteration === 0 ? "original" : `iteration ${c.iteration} · candidate ${c.candidate} (${c.proposer})`, " ",
        SE.badge(accepted ? "accepted" : c.iteration === 0 ? "original" : "rejected"), " ",
        h("span", { class: "muted" }, `train ${SE.ci(c.train)} · validation ${SE.ci(c.validation)} · ${SE.pval(c.p_value)}`)),
      h("div", { class: "muted" }, c.decision),
      c.diff.length ? SE.diff(c.diff) : h("p", { dir: "auto" }, c.description),
      c.flips.length ? h("details", {}, h("summary", {}, `${c.flips.length} queries flipped against the incumbent`),
        h("ul", {}, c.flips.map((f) => h("li", { dir: "auto" }, `${f.now === "pass" ? "now passes" : "now fails"} (${f.split || "?"}): `, f.query)))) : "");
  }

  const lvl = (d) => `${Math.round(100 * ((d && d.confidence) || 0.95))}%`;

  function testBlock(test, level) {
    if (!test || (!test.original && !test.best)) return h("p", { class: "muted" }, "test split: evaluated once, at the end of the run");
    const t = SE.table(["", "score", `accuracy [${level} CI]`], "grid");
    for (const side of ["original", "best"]) {
      const b = test[side];
      if (b) t.tbody.append(h("tr", {}, h("th", {}, side), h("td", {}, b.score || "n/a"), h("td", {}, SE.ci(b.accuracy))));
    }
    const p = test.paired, rec = test.recommended;
    return h("div", {}, t, p ? h("p", { class: "muted" }, `paired on test: +${p.wins}/−${p.losses}, ${SE.pval(p.p_value)} (${p.test})`) : "",
      test.partial ? h("p", { class: "errors" }, "partial: the budget stopped the test evaluation") : "",
      rec ? h("p", { class: "recommended" }, h("strong", {}, `recommended: the ${rec.which} description`), ` (${rec.reason})`) : "");
  }

  SE.pages.opt = async function (body, run) {
    const id = encodeURIComponent(run.run_id);
    let d = await SE.api(`/api/run/${id}/opt`);
    const status = h("p", { class: "muted" });
    const box = h("div", { class: "chart" }), canvas = h("canvas");
    box.append(canvas);
    const list = h("div", { class: "candidates" });
    const best = h("div"), test = h("div");
    body.append(status, h("h2", {}, `Accuracy per iteration (best candidate of each; band = ${lvl(d)} CI)`), box,
      h("h2", {}, "Original vs best"), best, test, h("h2", {}, `Candidates (intervals: ${lvl(d)} CI)`), list);
    let chart = null;
    const paint = () => {
      status.textContent = d.chart.length ? `${d.chart.length - 1} iteration(s) finished${d.exit_reason ? " · stopped: " + d.exit_reason : " · running"}` : "no iteration finished yet";
      const labels = d.chart.map((c) => String(c.iteration));
      const series = (split, color) => [
        { label: split, data: d.chart.map((c) => c[split].value), borderColor: color, backgroundColor: color, tension: 0 },
        { label: split + " low", data: d.chart.map((c) => c[split].low), borderWidth: 0, pointRadius: 0, fill: false },
        { label: split + " high", data: d.chart.map((c) => c[split].high), borderWidth: 0, pointRadius: 0, fill: "-1", backgroundColor: color.replace("rgb", "rgba").replace(")", ",0.15)") },
      ];
      const data = { labels, datasets: [...series("train", "rgb(40,110,200)"), ...series("validation", "rgb(200,90,40)")] };
      if (!chart) {
        chart = SE.chart(canvas, { type: "line", data, options: { scales: { y: { min: 0, max: 1, title: { display: true, text: "queries passed" } }, x: { title: { display: true, text: "iteration" } } },
          plugins: { legend: { labels: { filter: (item) => !/ (low|high)$/.test(item.text) } } } } });
      } else { chart.data = data; chart.update("none"); }
      SE.clear(best);
      if (d.best) best.append(d.best_diff.length ? SE.diff(d.best_diff) : h("p", { dir: "auto" }, d.best));
      SE.clear(test).append(testBlock(d.test, lvl(d)));
      SE.keyed(list, d.candidates, (c) => `${c.iteration}.${c.candidate}`, candidate);
    };
    paint();
    SE.poll(async () => { d = await SE.api(`/api/run/${id}/opt`); paint(); }, 1500, run);
    SE.cleanup = () => { if (chart) chart.destroy(); };
  };
})();
