/* Functional pages: outputs (one eval at a time, files inline, grades, feedback, previous
 * iteration, ←/→), benchmark, comparison. */
"use strict";
(function () {
  const { h } = SE;

  /* markdown as text blocks: headings, lists, code fences, paragraphs; never HTML */
  function markdown(text) {
    const out = h("div", { class: "md", dir: "auto" });
    let code = null;
    let para = [];
    const flush = () => { if (para.length) { out.append(h("p", {}, para.join(" "))); para = []; } };
    for (const line of text.split("\n")) {
      if (line.startsWith("```")) {
        if (code === null) { flush(); code = []; } else { out.append(h("pre", { class: "code" }, code.join("\n"))); code = null; }
        continue;
      }
      if (code !== null) { code.push(line); continue; }
      const m = /^(#{1,6})\s+(.*)$/.exec(line);
      if (m) { flush(); out.append(h("h" + Math.min(6, m[1].length + 2), {}, m[2])); continue; }
      const li = /^\s*([-*+]|\d+\.)\s+(.*)$/.exec(line);
      if (li) { flush(); out.append(h("div", { class: "li" }, "• " + li[2])); continue; }
      if (!line.trim()) { flush(); continue; }
      para.push(line);
    }
    flush();
    if (code !== null) out.append(h("pre", { class: "code" }, code.join("\n")));
    return out;
  }

  /* Where the rest of a cut file is: the live viewer links the file; a static report embeds
   * only binaries, so for a cut text file it names the file in the run's output folder. */
  function rest(f) {
    if (f.url || f.data_uri) return "download the file for all of it";
    return f.full_path ? `the whole file is in the run's output folder: ${f.full_path}` : "the whole file is in the run's output folder";
  }

  /* A cell with a long unbroken token (a path, a hash, a hostile 5,000-character word) may
   * break anywhere; the others break only between words, so numbers stay whole (app.css). */
  const LONG_TOKEN = /\S{30}/;

  function tableOf(rows, more, moreCols, f) {
    const cut = [more ? `the first ${rows.length} rows only` : "", moreCols ? `${moreCols} more column(s) not shown` : ""].filter(Boolean);
    const note = cut.length ? h("p", { class: "muted truncated" }, `(${cut.join("; ")}: ${rest(f)})`) : "";
    if (!rows.length) return h("div", {}, h("p", { class: "muted" }, "(empty table)"), note);
    const t = SE.table(rows[0], "grid data");
    for (const r of rows.slice(1)) t.tbody.append(h("tr", {}, r.map((c) => h("td", { dir: "auto", class: LONG_TOKEN.test(c) ? "long" : null }, c))));
    return h("div", { class: "scroll" }, t, note);
  }

  function download(f) {
    const href = f.url || f.data_uri;
    return href ? h("a", { href, download: f.name.split("/").pop() }, "download") : h("span", { class: "muted" }, "(not embedded)");
  }

  SE.file = function (f) {
    let view;
    if (f.kind === "table") view = tableOf(f.rows, f.more_rows, f.more_cols, f);
    else if (f.kind === "sheets") view = h("div", {}, f.sheets.map((s) => h("div", {}, h("div", { class: "muted" }, "sheet: ", s.name), tableOf(s.rows, s.more_rows, s.more_cols, f))),
      f.more_sheets ? h("p", { class: "muted truncated" }, `(${f.more_sheets} more sheet(s) not shown: ${rest(f)})`) : "");
    else if (f.kind === "markdown") view = markdown(f.text);
    else if (f.kind === "image") view = (f.data_uri || f.url) ? h("img", { src: f.data_uri || f.url, alt: f.name, class: "output" }) : h("p", { class: "muted" }, "(image too large to embed)");
    else if (f.kind === "pdf") view = f.preview_uri ? h("img", { src: f.preview_uri, alt: "first page of " + f.name, class: "output" }) : h("p", { class: "muted" }, f.note || "PDF");
    else if (f.kind === "binary") view = h("p", { class: "muted" }, f.note || `binary file, ${f.size} bytes`);
    else view = h("pre", { class: f.kind === "error" ? "error" : "text", dir: "auto" }, f.text || "");
    if (f.truncated && f.kind !== "table") view = h("div", {}, view, h("p", { class: "muted truncated" }, `(the beginning of the file only: ${rest(f)})`));
    return h("div", { class: "file" }, h("div", { class: "fname" }, h("span", { dir: "auto" }, f.name), " ",
      f.size == null ? "" : h("span", { class: "muted" }, `${f.size} bytes`, f.encoding && f.encoding !== "utf-8" ? ` · ${f.encoding}` : "", f.truncated ? " · truncated" : ""),
      " ", f.size == null ? "" : download(f)), view);
  };

  function grades(g) {
    if (!g) return h("p", { class: "muted" }, "no grading.json");
    const s = g.summary || {};
    const exps = g.expectations || [];
    return h("details", {}, h("summary", {}, `grades: ${s.passed ?? "?"} passed, ${s.failed ?? "?"} failed of ${s.total ?? "?"}`,
      s.judge_errors ? h("span", { class: "errors" }, ` · ${s.judge_errors} judge errors (not counted as failures)`) : ""),
      h("ul", { class: "grades" }, exps.map((e) => h("li", { class: e.passed === true ? "ok" : e.passed === false ? "bad" : "errors" },
        e.passed === true ? "✓ " : e.passed === false ? "✗ " : "⚠ ", h("span", { dir: "auto" }, e.text),
        e.agreement !== undefined ? h("span", { class: "muted" }, ` (judges agree ${SE.pct(e.agreement)} of ${e.samples})`) : "",
        h("div", { class: "evidence", dir: "auto" }, e.evidence || "")))));
  }

  function feedbackBox(run, r) {
    const status = h("span", { class: "muted" });
    const box = h("textarea", { rows: 3, maxlength: 20000, "aria-label": "feedback for " + r.review_id, placeholder: SE.static ? "feedback is given in `skilleval view`" : "feedback (saved as you type)" });
    box.value = r.feedback || "";
    box.setAttribute("data-review", r.review_id);
    if (SE.static) { box.readOnly = true; return h("div", { class: "feedback" }, box); }
    let timer = null;
    /* Saves of one box go one after the other: two in flight could reach the server's threads
     * in either order, and the older text would be the one kept. */
    let chain = Promise.resolve();
    /* The text as last loaded or saved: the server refuses a save typed over another text
     * (another tab saved in between), and this box asks which one to keep. */
    let base = r.feedback || "";
    const conflict = (current) => {
      status.className = "errors";
      status.replaceChildren("changed in another tab or viewer, not overwritten; there it reads: ",
        h("q", { dir: "auto" }, current || "(empty)"), " ",
        h("button", { type: "button", on: { click: () => { base = current; save(); } } }, "keep mine"), " ",
        h("button", { type: "button", on: { click: () => {
          box.value = current; base = current; r.feedback = current;
          status.replaceChildren("took the other text"); status.className = "muted";
        } } }, "take theirs"));
    };
    const save = () => {
      timer = null;
      const text = box.value;
      chain = chain.then(async () => {
        try {
          await SE.post("/api/feedback", { run: run.run_id, review_id: r.review_id, feedback: text, base });
          r.feedback = text; base = text;
          if (box.value === text) { status.textContent = "saved"; status.className = "muted"; }
        } catch (e) {
          if (e.body && e.body.conflict) conflict(String(e.body.current ?? ""));
          else { status.textContent = "not saved: " + e.message; status.className = "errors"; }
        }
      });
      return chain;
    };
    const flush = () => { if (timer) { clearTimeout(timer); return save(); } return chain; };
    pending.add(flush);
    /* A reload or a closed tab right after typing: the debounced save would never run. */
    const onHide = () => {
      if (!timer) return;
      clearTimeout(timer); timer = null;
      fetch("/api/feedback", { method: "POST", keepalive: true, headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ run: run.run_id, review_id: r.review_id, feedback: box.value, base }) });
    };
    window.addEventListener("pagehide", onHide);
    const old = SE.cleanup;
    SE.cleanup = () => { window.removeEventListener("pagehide", onHide); flush(); pending.delete(flush); if (old) old(); };
    box.addEventListener("input", () => { status.textContent = "saving…"; status.className = "muted"; if (timer) clearTimeout(timer); timer = setTimeout(save, 300); });
    box.addEventListener("blur", () => { if (timer) { clearTimeout(timer); save(); } });
    return h("div", { class: "feedback" }, box, status);
  }
  /* every feedback box's flush: "Submit all reviews" waits for them, or it could list a text
   * typed a moment before without it (and a save landing after it reopened the file) */
  const pending = new Set();

  function runBlock(run, r, first) {
    const t = r.timing || {};
    return h("details", { class: "run", open: first }, h("summary", {}, SE.badge(r.config), ` run ${r.run_number}`,
      h("span", { class: "muted" }, ` · ${SE.num(t.total_duration_seconds)} s · ${t.total_tokens ?? "?"} tokens · ${r.review_id}`)),
      h("div", { class: "files" }, r.files.length ? r.files.map(SE.file) : h("p", { class: "muted" }, "no output files")),
      r.execution_error ? h("p", { class: "errors", dir: "auto" }, `execution ${r.execution_error.status || "error"}: ${r.execution_error.error || ""} · not graded, in no number`)
        : grades(r.grading), feedbackBox(run, r),
      r.previous ? h("details", { class: "previous" }, h("summary", {}, "previous iteration: output and feedback"),
        r.previous.feedback ? h("blockquote", { dir: "auto" }, r.previous.feedback) : h("p", { class: "muted" }, "no feedback given"),
        r.previous.files.map(SE.file)) : "");
  }

  function executions(list) {
    const t = SE.table(["eval", "arm", "run", "status", "skill loaded", "s", "tokens"], "grid small");
    SE.keyed(t.tbody, list, (e) => e.key, (e) => h("tr", {}, h("td", { dir: "auto" }, e.eval_name), h("td", {}, e.arm), h("td", {}, String(e.repeat + 1)),
      h("td", {}, SE.badge(e.status), e.error ? h("span", { class: "errors" }, " " + e.error) : ""), h("td", {}, e.skill_fired ? "yes" : "no"),
      h("td", { class: "num" }, SE.num(e.duration_s)), h("td", { class: "num" }, String(e.total_tokens ?? ""))));
    return t;
  }

  SE.pages.outputs = async function (body, run, index) {
    const id = encodeURIComponent(run.run_id);
    const d = await SE.api(`/api/run/${id}/functional`);
    if (!d.evals.length) {
      const box = h("div");
      if (run.status && run.status !== "running") {  /* it ended without one: nothing to wait for */
        body.append(h("p", { class: "muted" }, `this run ended (${run.status}) without writing a workspace; its executions:`),
          executions(d.executions));
        return;
      }
      body.append(h("p", { class: "muted" }, "the workspace is written when the run ends; executions so far:"), box);
      let n = -1;
      const paint = async () => {
        const x = await SE.api(`/api/run/${id}/functional`);
        if (x.evals.length) { SE.route(); return; }
        if (x.executions.length !== n) { n = x.executions.length; SE.clear(box).append(executions(x.executions)); }
      };
      await paint();
      SE.poll(paint, 1500);
      return;
    }
    const i = Math.max(0, Math.min(d.evals.length - 1, Number(index || 0)));
    const ev = d.evals[i];
    const go = (k) => { location.hash = `#/run/${id}/outputs/${k}`; };
    const prev = h("button", { type: "button", "aria-label": "previous eval" }, "← prev");
    const next = h("button", { type: "button", "aria-label": "next eval" }, "next →");
    prev.disabled = i === 0; next.disabled = i === d.evals.length - 1;
    prev.addEventListener("click", () => go(i - 1));
    next.addEventListener("click", () => go(i + 1));
    const onKey = (e) => {
      if (/^(TEXTAREA|INPUT|SELECT)$/.test(document.activeElement && document.activeElement.tagName)) return;
      if (e.key === "ArrowLeft" && i > 0) go(i - 1);
      if (e.key === "ArrowRight" && i < d.evals.length - 1) go(i + 1);
    };
    document.addEventListener("keydown", onKey);
    const old = SE.cleanup;
    SE.cleanup = () => { document.removeEventListener("keydown", onKey); if (old) old(); };
    const configs = [...new Set(ev.runs.map((r) => r.config))];
    body.append(h("div", { class: "evalnav" }, prev, h("span", { class: "counter" }, `eval ${i + 1} of ${d.evals.length}`), next,
      h("span", { class: "muted" }, ` · ${d.iteration}${d.previous_iteration ? " (previous: " + d.previous_iteration + ")" : ""} · feedback: ${d.feedback_status || "none yet"}`)),
      h("h2", { dir: "auto", class: "evalname" }, ev.name), h("h3", {}, "Prompt"), h("pre", { class: "prompt", dir: "auto" }, ev.prompt),
      h("div", { class: "arms" }, configs.map((c) => h("div", { class: "arm" }, h("h3", {}, c),
        ev.runs.filter((r) => r.config === c).map((r, k) => runBlock(run, r, k === 0))))));
    if (!SE.static) {
      const submit = h("button", { type: "button" }, "Submit all reviews (status: complete)");
      const st = h("span", { class: "muted" });
      submit.addEventListener("click", async () => {
        try {
          await Promise.all([...pending].map((f) => f()));
          await SE.post("/api/feedback/submit", { run: run.run_id }); st.textContent = " submitted";
        } catch (e) { st.textContent = " " + e.message; }
      });
      body.append(h("p", {}, submit, st));
    }
  };

  /* per eval and arm, the mean of its runs' pass rates (a file without per_eval: skill-creator's) */
  function perEvalOf(runs, arms, ds) {
    const by = new Map();
    for (const r of runs) {
      const ev = String(r.eval_name ?? r.eval_id), rate = (r.result || {}).pass_rate;
      if (!by.has(ev)) by.set(ev, {});
      const c = (by.get(ev)[r.configuration] ||= { vals: [] });
      if (rate !== null && rate !== undefined) c.vals.push(rate);
    }
    return [...by].map(([ev, cs]) => {
      const row = { eval_name: ev };
      for (const a of arms) {
        const v = (cs[a] || { vals: [] }).vals;
        row[a] = v.length ? { pass_rate: { mean: v.reduce((x, y) => x + y, 0) / v.length }, valid: v.length, errors: 0 } : undefined;
      }
      const p = row[ds.primary], q = row[ds.baseline];
      row.delta_pass_rate = p && q ? p.pass_rate.mean - q.pass_rate.mean : null;
      return row;
    });
  }

  SE.pages.benchmark = async function (body, run) {
    const d = await SE.api(`/api/run/${encodeURIComponent(run.run_id)}/functional`);
    const b = d.benchmark;
    if (!b) { body.append(h("p", { class: "muted" }, "no benchmark.json yet (written when the run ends)"), executions(d.executions)); return; }
    const arms = Object.keys(b.run_summary || {}).filter((k) => k !== "delta");
    /* skill-creator's benchmark.json (imported) has no delta_stats, and its delta subtracts
     * its configs in folder order (old_skill before with_skill: the sign flips). The pair is
     * taken by role, as the import stored it (with_skill / new_skill primary, without_skill /
     * old_skill baseline), first two configs only when no role is known; its delta is then
     * the difference of the file's pooled means, primary minus baseline (no interval). */
    const theirs = !b.delta_stats;
    const byRole = {};
    for (const e of d.executions || []) if (arms.includes(e.arm) && !byRole[e.role]) byRole[e.role] = e.arm;
    const ds = b.delta_stats || (byRole.primary && byRole.baseline ? { primary: byRole.primary, baseline: byRole.baseline }
      : { primary: arms[0], baseline: arms[1] });
    const theirDelta = (m) => {
      const rs = b.run_summary || {}, p = (rs[ds.primary] || {})[m], q = (rs[ds.baseline] || {})[m];
      const file = (rs.delta || {})[m];
      if (!p || !q || typeof p.mean !== "number" || typeof q.mean !== "number") return `${file ?? "n/a"} (from the file; no interval)`;
      const dv = p.mean - q.mean, flipped = file !== undefined && Number(file) * dv < 0;
      return `${dv >= 0 ? "+" : ""}${SE.num(dv, 2)} (pooled means; no interval)` + (flipped ? ` · the file says ${file}: skill-creator subtracts in folder order` : "");
    };
    const ms = (s, d2) => (s ? `${SE.num(s.mean, d2)} ± ${SE.num(s.stddev, d2)}` : "n/a");
    /* The delta and its interval are about means that weigh every paired eval the same (what
     * the console and benchmark.md show); run_summary pools all valid runs, which differs when
     * errors leave evals with unequal runs. So the cell shows the former, the pool beside it. */
    const role = (a) => (theirs ? null : a === ds.primary ? "primary" : a === ds.baseline ? "baseline" : null);
    const cell = (a, m, d2) => {
      const x = ds[m] || {}, r = role(a), mean = r ? x[`${r}_mean`] : undefined;
      const pooled = h("span", { class: "muted" }, (r ? " · pooled " : "pooled ") + ms(b.run_summary[a][m], d2));
      return h("td", { class: "num" }, r ? SE.num(mean, d2) : "", pooled);
    };
    const t = SE.table(["metric", ...arms.map((a) => a + (a === ds.primary ? " (primary)" : a === ds.baseline ? " (baseline)" : "")), `Δ ${ds.primary || ""} − ${ds.baseline || ""} [${Math.round(100 * (ds.confidence || 0.95))}% CI]`, "p"], "grid");
    for (const [m, label, dig] of [["pass_rate", "pass rate", 2], ["time_seconds", "time (s)", 1], ["tokens", "tokens", 0]]) {
      const x = ds[m] || {};
      t.tbody.append(h("tr", {}, h("th", {}, label), arms.map((a) => cell(a, m, dig)),
        h("td", { class: "num" }, theirs ? theirDelta(m)
          : x.delta === null || x.delta === undefined ? "n/a" : `${x.delta >= 0 ? "+" : ""}${SE.num(x.delta, dig)} [${SE.num(x.low, dig)}, ${SE.num(x.high, dig)}]`),
        h("td", { class: "num" }, SE.pval(x.p_value))));
    }
    /* what is in no number above, said beside them (as on the console and in summary.md) */
    const ee = b.execution_errors || {};
    if (Object.keys(ee).length) {
      t.tbody.append(h("tr", {}, h("th", {}, "valid executions"), arms.map((a) => h("td", { class: "num" }, String((ee[a] || {}).valid ?? "n/a"))), h("td"), h("td")),
        h("tr", {}, h("th", {}, "errored / timed out (in no number)"), arms.map((a) => {
          const e = ee[a] || {}, n = (e.error || 0) + (e.timeout || 0);
          return h("td", { class: "num" + (n ? " errors" : "") }, `${e.error || 0} / ${e.timeout || 0}`);
        }), h("td"), h("td")));
    }
    const je = (b.judge || {}).judge_errors;
    if (je) t.tbody.append(h("tr", {}, h("th", {}, "judge errors (not graded)"), h("td", { class: "num errors", colspan: String(arms.length) }, String(je)), h("td"), h("td")));
    /* per eval: an arm with too few valid executions is "insufficient" (left out of the delta),
     * never a mean that reads as measured */
    const armCell = (c) => {
      if (!c) return h("td", { class: "muted" }, "—");
      const err = c.errors ? ` (${c.errors} errored or timed out)` : "";
      if (c.insufficient) return h("td", { class: "num errors" }, `insufficient: ${c.valid || 0} valid${err}`);
      const m = (c.pass_rate || {}).mean;
      return h("td", { class: "num" + (c.errors ? " errors" : "") }, (m === null || m === undefined ? "n/a" : SE.pct(m)) + err);
    };
    const pv = SE.table(["eval", ...arms, `Δ ${ds.primary || ""} − ${ds.baseline || ""}`], "grid small");
    const perEval = b.per_eval || perEvalOf(b.runs || [], arms, ds);
    for (const e of perEval) {
      const dd = e.delta_pass_rate;
      pv.tbody.append(h("tr", {}, h("td", { dir: "auto" }, e.eval_name), arms.map((a) => armCell(e[a])),
        h("td", { class: "num" }, dd === null || dd === undefined ? "n/a" : `${dd >= 0 ? "+" : ""}${SE.num(dd, 2)}`)));
    }
    const perExp = new Map();
    for (const r of b.runs || []) for (const e of r.expectations || []) {
      const k = `${r.eval_name || r.eval_id}\u0000${e.text}`;
      if (!perExp.has(k)) perExp.set(k, {});
      const c = (perExp.get(k)[r.configuration] ||= { p: 0, n: 0, err: 0 });
      if (e.passed === true) { c.p++; c.n++; } else if (e.passed === false) c.n++; else c.err++;
    }
    const pe = SE.table(["eval", "expectation", ...arms], "grid small");
    for (const [k, v] of perExp) {
      const [ev, text] = k.split("\u0000");
      pe.tbody.append(h("tr", {}, h("td", { dir: "auto" }, ev), h("td", { dir: "auto" }, text), arms.map((a) => {
        const c = v[a];
        return h("td", { class: "num " + (c && c.n && c.p === c.n ? "ok" : c && c.p === 0 ? "bad" : "") }, c ? `${c.p}/${c.n}` + (c.err ? ` (+${c.err} err)` : "") : "—");
      })));
    }
    const box = h("div", { class: "chart" }), canvas = h("canvas");
    box.append(canvas);
    const evals = perEval.map((e) => e.eval_name);
    body.append(SE.partialNote(run, b.partial ? `${b.partial.executions_not_run} of ${b.partial.executions_planned} executions not run` : ""),
      h("p", { class: "muted" }, ds.method || ""), t, h("h2", {}, "Pass rate per eval (mean of runs)"), pv,
      h("p", { class: "muted" }, "the chart leaves out an arm that is insufficient for an eval"), box,
      h("h2", {}, "Per expectation, passes per arm"), pe,
      h("h2", {}, "Notes (flaky, non-discriminating, analyzer)"), h("ul", {}, (b.notes || []).map((n) => h("li", { dir: "auto" }, n))),
      /* what the reviewer wrote about the previous iteration's outputs, beside the new numbers */
      ...(b.previous_feedback ? [h("h2", {}, `Feedback on ${b.previous_feedback.iteration} (${b.previous_feedback.status || "no status"})`),
        h("ul", { class: "feedback-previous" }, Object.entries(b.previous_feedback.reviews || {}).map(([rid, text]) =>
          h("li", { dir: "auto" }, h("span", { class: "muted" }, rid + ": "), text)))] : []));
    const chart = SE.chart(canvas, { type: "bar", data: { labels: evals, datasets: arms.map((a, k) => ({ label: a, data: perEval.map((e) => (e[a] && !e[a].insufficient ? e[a].pass_rate.mean : null)),
      backgroundColor: k === 0 ? "rgba(40,110,200,0.6)" : "rgba(200,90,40,0.6)" })) }, options: { scales: { y: { min: 0, max: 1 } } } });
    SE.cleanup = () => chart.destroy();
  };

  SE.pages.comparison = async function (body, run) {
    const d = await SE.api(`/api/run/${encodeURIComponent(run.run_id)}/comparison`);
    const t = SE.table(["eval", "run", "order 1 winner", "order 2 winner", "verdict", "scores (primary / baseline)", "why"], "grid");
    for (const c of d.comparisons) {
      const failed = Boolean(c.status && c.status !== "ok");
      const verdict = failed ? c.status : !c.winner_arm || c.winner_arm === "TIE" || c.winner_arm === "tie" ? "tie" : c.winner_arm;
      /* a comparison that errored has no winner in either order: never a "tie" */
      const order = (w) => (failed ? "— (no verdict)" : !w || w === "TIE" || w === "tie" ? "tie" : w);
      t.tbody.append(h("tr", {}, h("td", { dir: "auto" }, c.eval_name), h("td", {}, String((c.repeat ?? 0) + 1)),
        h("td", {}, order(c.order1_winner_arm)), h("td", {}, order(c.order2_winner_arm)),
        h("td", {}, SE.badge(verdict), c.consistent === false ? h("span", { class: "muted" }, " (orders disagree)") : ""),
        h("td", { class: "num" }, `${SE.num(c.score_primary)} / ${SE.num(c.score_baseline)}`),
        h("td", { dir: "auto" }, h("details", {}, h("summary", {}, "reasoning and analysis"),
          h("pre", { class: "text" }, JSON.stringify(c.comparison, null, 2)), c.analysis ? h("pre", { class: "text" }, JSON.stringify(c.analysis, null, 2)) : ""),
          c.error ? h("span", { class: "errors" }, c.error) : "")));
    }
    body.append(comparisonCards(run.summary || {}), d.comparisons.length ? t : h("p", { class: "muted" }, "no comparisons in this run"));
  };

  /* the run's own tally (what the terminal printed): wins per arm, how often the two orders
   * agreed, the sign test over evals, and the judge's errors (in no count) */
  function comparisonCards(s) {
    if (!s.wins || !s.primary) return "";
    const w = s.wins;
    const card = (label, big, note, cls) => h("div", { class: "card" }, h("div", { class: "label" }, label),
      h("div", { class: "big" + (cls ? " " + cls : "") }, big), h("div", { class: "muted" }, note));
    return h("div", { class: "cards" },
      card("wins (primary / baseline / tie)", `${w[s.primary] || 0} / ${w[s.baseline] || 0} / ${w.TIE || 0}`,
        `${s.primary} vs ${s.baseline} · ${s.judged} of ${s.pairs} pairs judged` +
        (s.orders_disagree ? ` · ${s.orders_disagree} of the ties: the two orders named different winners` : "") +
        (s.pairs_planned > s.pairs ? ` · ${s.pairs_planned - s.pairs} of ${s.pairs_planned} pairs not compared (an execution errored or timed out)` : "")),
      card("sign test", SE.pval(s.sign_test_p), `over ${s.sign_test_unit || "evals"}`),
      card("position consistency", SE.pct(s.position_consistency), "both orders named the same winner"),
      card("judge errors", String(s.judge_errors || 0), "no verdict: in no count, never a tie", s.judge_errors ? "errors" : ""));
  }
})();
