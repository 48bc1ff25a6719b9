/* Runs page, sweep page, and the run shell (tabs to the run's pages). */
"use strict";
(function () {
  const { h } = SE;
  const PAGE = 50;

  function headline(hd) {
    if (!hd || !hd.label) return "";
    if (hd.text) return `${hd.label}: ${hd.text}`;
    let s = `${hd.label} ${hd.value === null || hd.value === undefined ? "n/a" : hd.label.startsWith("Δ")
      ? (hd.value >= 0 ? "+" : "") + SE.fixed(hd.value, 2) : SE.pct(hd.value)}`;
    if (hd.low !== null && hd.low !== undefined) {
      s += hd.label.startsWith("Δ") ? ` [${SE.fixed(hd.low, 2)}, ${SE.fixed(hd.high, 2)}]`
        : ` [${SE.pct(hd.low)}–${SE.pct(hd.high)}]`;
    }
    if (hd.low !== null && hd.low !== undefined && hd.level && Math.abs(hd.level - 0.95) > 1e-9) s += ` (${Math.round(100 * hd.level)}% CI)`;
    if (hd.p_value !== undefined) s += " " + SE.pval(hd.p_value);
    if (hd.n) s += ` (n=${hd.n})`;
    return s;
  }
  SE.headline = headline;

  /* A run killed with SIGKILL never writes its final status: after 10 quiet minutes say so. */
  function statusOf(r) {
    if (r.status !== "running") return SE.badge(r.status);
    if (r.alive === true) return SE.badge("running");  /* its process holds the run's lease */
    const last = String(r.last_trial || r.ts || r.started || "").replace(" ", "T").replace(/(\.\d{3})\d+/, "$1");
    const quiet = (Date.now() - Date.parse(last)) / 60000;
    return quiet > 10 ? h("span", { title: `no new trials for ${Math.round(quiet)} min` }, SE.badge("interrupted?", "interrupted")) : SE.badge("running");
  }

  function skillName(p) { return String(p || "").split(/[\\/]/).filter(Boolean).pop() || ""; }

  function runRow(r) {
    const tr = h("tr", {},
      h("td", {}, h("a", { href: "#/run/" + encodeURIComponent(r.run_id) }, r.run_id)),
      h("td", {}, r.experiment),
      h("td", { dir: "auto" }, skillName(r.skill)),
      h("td", {}, `${r.backend || ""}/${r.model || ""}`),
      h("td", {}, statusOf(r)),
      h("td", {}, SE.time(r.started)),
      r.work && !r.trials ? h("td", { class: "num" }, r.work)
      : r.executions !== undefined && !r.trials
        ? h("td", { class: "num" }, `${r.executions} exec`, r.execution_errors ? h("span", { class: "errors" }, ` (${r.execution_errors} err)`) : "")
        : h("td", { class: "num" }, String(r.trials || 0), r.errors ? h("span", { class: "errors" }, ` (${r.errors} err)`) : "",
          r.calls_cached ? h("span", { class: "muted" }, ` · ${r.calls_cached} from cache`) : ""),
      h("td", {}, headline(r.headline)),
      h("td", { class: "num" }, r.cost_usd ? "$" + SE.fixed(r.cost_usd, 4) : "$0"),
      h("td", {}, r.sweep_size > 1 ? h("a", { href: "#/sweep/" + encodeURIComponent(r.sweep_id) }, `sweep (${r.sweep_size})`) : ""));
    return tr;
  }

  function filterStatic(data, params) {
    const q = (params.q || "").toLowerCase();
    // each field on its own, as the live viewer's query does (a JSON text of them all matched
    // its own punctuation: a typed '"' or ',' listed every run)
    const fields = (r) => [r.run_id, r.skill, r.experiment, r.model, r.backend, (r.overrides || []).join(" ")];
    const rows = data.rows.filter((r) => (!q || fields(r).some((f) => String(f ?? "").toLowerCase().includes(q)))
      && (!params.experiment || r.experiment === params.experiment) && (!params.status || r.status === params.status));
    return Object.assign({}, data, { rows, total: rows.length, offset: 0 });
  }

  SE.pages.runs = async function (main, params) {
    const offset = Number(params.offset || 0);
    const qs = new URLSearchParams({ q: params.q || "", experiment: params.experiment || "", status: params.status || "", offset, limit: PAGE });
    const load = async () => {
      const d = await SE.api(SE.static ? "/api/runs" : "/api/runs?" + qs);
      return SE.static ? filterStatic(d, params) : d;
    };
    let data = await load();
    const go = (changes) => { location.hash = "#/runs?" + new URLSearchParams(Object.assign({}, params, changes, { offset: changes.offset || 0 })); };
    const search = h("input", { type: "search", placeholder: "filter: run, skill, model, override…", value: params.q || "", "aria-label": "filter runs" });
    search.addEventListener("change", () => go({ q: search.value }));
    const exp = h("select", { "aria-label": "experiment" }, h("option", { value: "" }, "any experiment"),
      (data.experiments || []).map((e) => h("option", { value: e }, e)));
    exp.value = params.experiment || "";
    exp.addEventListener("change", () => go({ experiment: exp.value }));
    const st = h("select", { "aria-label": "status" }, ["", "running", "stale", "done", "gate_failed", "gate_unchecked", "budget_stopped", "failed", "interrupted", "harness_error"].map((s) => h("option", { value: s }, s || "any status")));
    st.value = params.status || "";
    st.addEventListener("change", () => go({ status: st.value }));
    const t = SE.table(["run", "experiment", "skill", "backend/model", "status", "started", "trials / executions", "headline (95% CI unless stated)", "cost", "sweep"]);
    const info = h("span", { class: "muted" });
    const prev = h("button", { type: "button" }, "← newer");
    const next = h("button", { type: "button" }, "older →");
    prev.addEventListener("click", () => go({ offset: Math.max(0, offset - PAGE) }));
    next.addEventListener("click", () => go({ offset: offset + PAGE }));
    const paint = () => {
      SE.keyed(t.tbody, data.rows, (r) => r.run_id, runRow);
      info.textContent = data.total ? `runs ${data.offset + 1}–${data.offset + data.rows.length} of ${data.total}` : "no runs yet";
      prev.disabled = offset <= 0;
      next.disabled = offset + data.rows.length >= data.total;
    };
    main.append(h("h1", {}, "Runs"), h("div", { class: "filters" }, search, exp, st, prev, next, info), t);
    paint();
    SE.poll(async () => { data = await load(); paint(); }, 2000);
  };

  function overridesOf(r) {
    const o = {};
    for (const s of r.overrides || []) {
      const i = s.indexOf("=");
      if (i > 0 && !s.startsWith("+experiment")) o[s.slice(0, i)] = s.slice(i + 1);
    }
    return o;
  }

  SE.pages.sweep = async function (main, sweepId) {
    const load = () => SE.api(SE.static ? "/api/runs" : "/api/runs?" + new URLSearchParams({ sweep: sweepId, limit: 200 }));
    const box = h("div");
    main.append(h("h1", {}, "Sweep ", sweepId), box);
    const paint = (data) => {
      const cells = data.rows.filter((r) => r.sweep_id === sweepId).sort((a, b) => a.job_num - b.job_num);
      const ov = cells.map(overridesOf);
      const keys = [...new Set(ov.flatMap(Object.keys))].filter((k) => new Set(ov.map((o) => o[k])).size > 1);
      SE.clear(box);
      const cell = (r) => h("div", { class: "cell" }, h("a", { href: "#/run/" + encodeURIComponent(r.run_id) }, "job " + r.job_num),
        " ", SE.badge(r.status), h("div", {}, headline(r.headline)), h("div", { class: r.execution_errors || r.errors ? "errors" : "muted" }, r.work && !r.trials ? r.work
        : r.executions !== undefined && !r.trials
          ? `${r.executions} executions` + (r.execution_errors ? ` (${r.execution_errors} errored)` : "")
          : `${r.trials} trials` + (r.errors ? ` (${r.errors} errored)` : "") + (r.calls_cached ? ` · ${r.calls_cached} from cache` : "")));
      if (keys.length === 2) {
        const [a, b] = keys;
        const av = [...new Set(ov.map((o) => o[a]))], bv = [...new Set(ov.map((o) => o[b]))];
        const t = SE.table([`${a} \\ ${b}`, ...bv], "grid matrix");
        for (const x of av) {
          t.tbody.append(h("tr", {}, h("th", {}, x), bv.map((y) => {
            const i = ov.findIndex((o) => o[a] === x && o[b] === y);
            return h("td", {}, i >= 0 ? cell(cells[i]) : "—");
          })));
        }
        box.append(t);
      } else {
        const t = SE.table(["cell", ...keys.map((k) => k), "result"], "grid");
        cells.forEach((r, i) => t.tbody.append(h("tr", {}, h("td", {}, h("a", { href: "#/run/" + encodeURIComponent(r.run_id) }, "job " + r.job_num)),
          keys.map((k) => h("td", {}, ov[i][k] ?? "")), h("td", {}, cell(r)))));
        box.append(h("div", { class: "side" }, cells.map(cell)), t);
      }
    };
    paint(await load());
    SE.poll(async () => paint(await load()), 2000);
  };

  const TITLES = { trigger: "Trigger run", opt: "Optimisation", outputs: "Functional: outputs", benchmark: "Functional: benchmark", comparison: "Comparison", routing: "Routing", attribute: "Sentence attribution" };

  SE.pages.run = async function (main, runId, page, index, params) {
    const run = await SE.api("/api/run/" + encodeURIComponent(runId));
    page = page || run.pages[0];
    const status = SE.badge(run.status);
    main.append(h("h1", {}, TITLES[page] || "Run", " ", h("span", { class: "muted" }, runId), " ", status),
      h("p", { class: "meta" }, `${run.experiment} · skill ${skillName(run.skill)} · ${run.backend || ""}/${run.model || "n/a"} · started ${SE.time(run.started)} · `,
        `calls ${run.calls_made} new, ${run.calls_cached} cached · $${SE.fixed(run.cost_usd || 0, 4)}`,
        (run.overrides || []).length ? " · " + run.overrides.join(" ") : ""),
      h("nav", { class: "tabs" }, run.pages.map((p) => h("a", { href: `#/run/${encodeURIComponent(runId)}/${p}`, class: p === page ? "active" : "" }, TITLES[p]))));
    const body = h("section", { class: "page" });
    main.append(body);
    if (!SE.pages[page]) {
      body.append(h("p", {}, run.status === "running" ? "nothing to show for this run yet"
        : `this run has no page in the viewer; its files are in ${run.output_dir || "its output folder"}`));
      return;
    }
    await SE.pages[page](body, run, index, params);
    if (!SE.static && run.status === "running") {
      const watch = setInterval(async () => {
        try {
          const r = await SE.api("/api/run/" + encodeURIComponent(runId));
          status.textContent = r.status;
          status.className = "badge " + r.status;
          run.status = r.status;  // the page's own poll stops after its next refresh (SE.poll)
          if (r.status !== "running") clearInterval(watch);
        } catch (e) { /* next time */ }
      }, 2000);
      const old = SE.cleanup;
      SE.cleanup = () => { clearInterval(watch); if (old) old(); };
    }
  };
})();
