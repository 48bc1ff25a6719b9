/* Routing run page: expected x fired heatmap (counts visible, colour by row share), per-skill
 * precision and recall with intervals, and the listed skills' descriptions (hostile text:
 * text nodes only, like every page). Colours are set through the CSSOM (el.style), which the
 * Content-Security-Policy allows; no style attribute is ever built from data. */
"use strict";
(function () {
  const { h } = SE;

  function colour(expected, fired, share) {
    const a = (0.08 + 0.77 * share).toFixed(3);
    if (!share) return "";
    if (fired === "error") return `rgba(120,120,120,${a})`;
    return expected === fired ? `rgba(40,110,200,${a})` : `rgba(210,80,40,${a})`;
  }

  function heatmap(r) {
    const t = SE.table(["expected \\ fired", ...r.columns, "trials"], "grid matrix heatmap");
    for (const row of r.rows) {
      const tr = h("tr", { "data-key": row.expected }, h("th", { dir: "auto" }, row.expected));
      for (const c of r.columns) {
        const n = row.counts[c] || 0;
        const share = row.share[c] || 0;
        const td = h("td", { class: "num" + (n ? "" : " muted"), "data-key": c,
          title: `expected ${row.expected}, fired ${c}: ${n} of ${row.total} trials (${SE.pct(share)})` }, String(n));
        const bg = colour(row.expected, c, share);
        if (bg) td.style.backgroundColor = bg;
        tr.append(td);
      }
      tr.append(h("td", { class: "num muted" }, String(row.total)));
      t.tbody.append(tr);
    }
    return t;
  }

  function perSkill(r) {
    const lvl = Math.round(100 * (r.confidence || 0.95));
    const t = SE.table(["skill", `precision [${lvl}% CI]`, `recall [${lvl}% CI]`, "description (as listed)"], "grid routing-skills");
    for (const s of r.skills) {
      const v = r.per_skill[s] || {};
      const f = (e) => (e ? `${SE.ci(e)} (${e.k}/${e.n})` : "n/a");
      t.tbody.append(h("tr", {}, h("td", { dir: "auto" }, s), h("td", {}, f(v.precision)), h("td", {}, f(v.recall)),
        h("td", { dir: "auto", class: "excerpt" }, r.descriptions[s] || "")));
    }
    return t;
  }

  SE.pages.routing = async function (body, run) {
    const data = await SE.api(`/api/run/${encodeURIComponent(run.run_id)}/routing`);
    const r = data.routing;
    if (!r) { body.append(h("p", { class: "muted" }, "this run recorded no routing matrix")); return; }
    const acc = r.accuracy || {};
    body.append(
      h("div", { class: "cards" },
        h("div", { class: "card" }, h("div", { class: "label" }, "routing accuracy (trials; CI over queries)"), h("div", { class: "big" }, SE.pct(acc.value)),
          h("div", { class: "muted" }, `${Math.round(100 * (r.confidence || 0.95))}% CI ${SE.pct(acc.low)}–${SE.pct(acc.high)} · ${acc.k}/${acc.n} valid trials`)),
        h("div", { class: "card" }, h("div", { class: "label" }, "errors / timeouts"), h("div", { class: "big" }, String(r.errors || 0)),
          h("div", { class: "muted" }, "their own column; never counted as “none”")),
        h("div", { class: "card" }, h("div", { class: "label" }, "listing"), h("div", { class: "big" }, String(r.skills.length)),
          h("div", { class: "muted" }, `skills + ${r.catalog || 0} catalog fillers · ${r.runs} runs per query`))),
      h("h2", {}, "Who fired, per expected skill"),
      h("p", { class: "muted" }, "Rows: the skill that should fire (none: no skill should). Colour: the share of the row's trials; blue on the diagonal, orange where another skill (or none) fired, grey for errors. “other”: a catalog filler fired."),
      heatmap(r),
      h("h2", {}, "Per skill"), perSkill(r));
  };
})();
