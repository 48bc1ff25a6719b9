/* Trigger run page: per-query rates with drawn intervals, metrics, confusion, trials. */
"use strict";
(function () {
  const { h } = SE;
  const CHART_MAX = 200;

  const lvl = (page) => `${Math.round(100 * ((page && page.confidence) || 0.95))}%`;

  function metricsBlock(m, level) {
    return h("div", { class: "cards" },
      ["accuracy", "precision", "recall"].map((k) => h("div", { class: "card" }, h("div", { class: "label" }, k + " (queries)"),
        h("div", { class: "big" }, SE.pct(m[k].value)), h("div", { class: "muted" }, `${level} CI ${SE.pct(m[k].low)}–${SE.pct(m[k].high)} · n=${m[k].n}`))),
      h("div", { class: "card" }, h("div", { class: "label" }, "trials"), h("div", { class: "big" }, String(m.trials)),
        h("div", { class: m.errors + m.timeouts ? "errors" : "muted" }, `${m.errors} errors · ${m.timeouts} timeouts · ${m.insufficient} insufficient (not counted as “no”)`)));
  }

  function confusion(trials, listing, target) {
    const counts = new Map();
    const fired = new Set(["(none)", ...listing]);
    const expected = new Set(["(none)"]);
    for (const t of trials) {
      if (t.outcome !== "triggered" && t.outcome !== "not_triggered") continue;
      const e = t.should_trigger ? target : "(none)";
      const f = t.fired || "(none)";
      expected.add(e); fired.add(f);
      counts.set(e + "\u0000" + f, (counts.get(e + "\u0000" + f) || 0) + 1);
    }
    const cols = [...fired].sort();
    const t = SE.table(["expected \\ fired", ...cols], "grid matrix");
    for (const e of [...expected].sort()) {
      t.tbody.append(h("tr", {}, h("th", {}, e), cols.map((f) => {
        const n = counts.get(e + "\u0000" + f) || 0;
        return h("td", { class: n ? (e === f ? "ok num" : "bad num") : "num muted" }, String(n));
      })));
    }
    return t;
  }

  function trialList(list) {
    if (!list.length) return h("p", { class: "muted" }, "no trials recorded for this query yet");
    const t = SE.table(["run", "outcome", "fired", "what the model did (excerpt)", "ms"], "grid small");
    for (const x of list.sort((a, b) => a.repeat - b.repeat)) {
      t.tbody.append(h("tr", {}, h("td", {}, String(x.repeat + 1), x.cached ? h("span", { class: "muted" }, " (from store)") : ""),
        h("td", {}, SE.badge(x.outcome)), h("td", { dir: "auto" }, x.fired || "—"),
        h("td", { dir: "auto", class: "excerpt" }, x.excerpt || x.error || "—"), h("td", { class: "num" }, SE.num(x.latency_ms, 0))));
    }
    return t;
  }

  SE.pages.trigger = async function (body, run) {
    const id = encodeURIComponent(run.run_id);
    let page = await SE.api(`/api/run/${id}/trigger`);
    const trials = new Map();
    let cursor = null;
    const pull = async () => {
      const got = await SE.api(`/api/run/${id}/trials` + (cursor && !SE.static ? "?since=" + encodeURIComponent(cursor) : ""));
      for (const r of got.rows) trials.set(r.key, r);
      cursor = got.cursor || cursor;
    };
    await pull();
    const should = new Map(page.queries.map((q) => [q.case_id, q.should_trigger]));
    const byCase = () => {
      const m = new Map();
      for (const t of trials.values()) {
        t.should_trigger = should.get(t.case_id);
        if (!m.has(t.case_id)) m.set(t.case_id, []);
        m.get(t.case_id).push(t);
      }
      return m;
    };
    const metrics = h("div"), conf = h("div"), chartBox = h("div", { class: "chart tall" }), canvas = h("canvas");
    chartBox.append(canvas);
    const live = h("p", { class: "muted" });
    const chartNote = h("p", { class: "muted" });
    const t = SE.table(["query", "expected", "triggers / valid runs", `rate [${lvl(page)} CI]`, "verdict", "other skill fired", "errors / timeouts"], "grid queries");
    body.append(SE.partialNote(run, "and queries short of their runs have no verdict"), live, metrics, h("h2", {}, "Per query"), chartNote, chartBox, t, h("h2", {}, "Confusion over listed skills (valid trials)"), conf);
    let chart = null;
    const open = new Set();
    const paint = () => {
      live.textContent = page.live ? "live: rates so far from the trials recorded up to now (verdicts come when the run ends)"
        : page.ended_early ? `This run ended before it wrote its verdicts: the rates below count the ${page.metrics.trials} trials stored for it` +
          (page.reused_not_counted ? `; the ${page.reused_not_counted} trials it reused from the store are in none of them.` : ".") : "";
      SE.clear(metrics).append(metricsBlock(page.metrics, lvl(page)));
      const groups = byCase();
      SE.keyed(t.tbody, page.queries.map((q) => Object.assign({ n: (groups.get(q.case_id) || []).length }, q)), (q) => q.case_id, (q) => {
        const det = h("details", { open: open.has(q.case_id) }, h("summary", { dir: "auto" }, q.query));
        det.addEventListener("toggle", () => {
          if (det.open) { open.add(q.case_id); if (det.children.length < 2) det.append(trialList(groups.get(q.case_id) || [])); }
          else open.delete(q.case_id);
        });
        if (det.open) det.append(trialList(groups.get(q.case_id) || []));
        const others = [...new Set((groups.get(q.case_id) || []).map((x) => x.fired).filter((f) => f && f !== q.skill))];
        return h("tr", {}, h("td", {}, det), h("td", {}, q.should_trigger ? "trigger" : "no trigger"),
          h("td", { class: "num" }, `${q.triggers} / ${q.valid_runs}`),
          h("td", {}, SE.ci(q.rate), q.early_stopped ? h("span", { class: "muted", title: "the policy stopped this query once its verdict was settled: the verdict is exact, the rate is biased" }, " (early-stopped)") : ""),
          h("td", {}, SE.badge(q.verdict)), h("td", { dir: "auto" }, q.fired_other ? `${q.fired_other}× ${others.join(", ")}` : "—"),
          h("td", { class: q.errors + q.timeouts ? "errors num" : "num" }, `${q.errors} / ${q.timeouts}`));
      });
      SE.clear(conf).append(confusion([...trials.values()], page.listing || [], (page.queries[0] || {}).skill));
      /* a canvas cannot grow without bound: the chart draws the first CHART_MAX queries */
      const shown = page.queries.slice(0, CHART_MAX);
      chartNote.textContent = page.queries.length > CHART_MAX ? `chart: the first ${CHART_MAX} of ${page.queries.length} queries (the table lists all)` : "";
      const labels = shown.map((q) => q.case_id);
      const data = {
        labels,
        datasets: [
          { type: "bar", label: `${lvl(page)} interval`, data: shown.map((q) => (q.rate.n ? [q.rate.low, q.rate.high] : null)),
            backgroundColor: shown.map((q) => (q.should_trigger ? "rgba(40,110,200,0.35)" : "rgba(200,90,40,0.35)")), barPercentage: 0.6 },
          { type: "scatter", label: "trigger rate", data: shown.map((q, i) => ({ x: q.rate.value, y: labels[i] })), backgroundColor: "#222", pointRadius: 3 },
        ],
      };
      chartBox.style.height = Math.max(160, 22 * labels.length + 60) + "px";
      if (!chart) {
        chart = SE.chart(canvas, { type: "bar", data, options: { indexAxis: "y", scales: { x: { min: 0, max: 1, title: { display: true, text: "trigger rate (blue: should trigger, orange: should not)" } } },
          plugins: { tooltip: { callbacks: { label: (c) => { const q = page.queries[c.dataIndex]; return `${q.triggers}/${q.valid_runs} ${SE.ci(q.rate)}`; } } } } } });
      } else { chart.data = data; chart.update("none"); }
    };
    paint();
    SE.poll(async () => {
      await pull();
      page = await SE.api(`/api/run/${id}/trigger`);
      for (const q of page.queries) should.set(q.case_id, q.should_trigger);
      paint();
    }, 1000, run);
    SE.cleanup = () => { if (chart) chart.destroy(); };
  };
})();
