/* skilleval viewer: DOM helpers, data access, router, live polling.
 *
 * Safety rule of every script here: data is never markup. Elements are built with
 * createElement, text goes in as text nodes, no innerHTML, no handlers built from data, and
 * the only URLs put into href/src are the server's own /api/file links or data: URIs of
 * images the server produced (checked again here). */
"use strict";
const SE = (window.SE = {});

SE.data = JSON.parse(document.getElementById("skilleval-data").textContent);
SE.static = SE.data.mode === "static";

/* h("div", {class: "x"}, "text", child, [more]) */
SE.h = function h(tag, attrs, ...kids) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") el.className = v;
    else if (k === "href" || k === "src") {
      if (SE.safeUrl(v, k)) el.setAttribute(k, v);
    } else if (k === "on") {
      for (const [ev, fn] of Object.entries(v)) el.addEventListener(ev, fn);
    } else if (/^(title|id|dir|colspan|download|type|placeholder|value|open|rows|alt|lang|role|tabindex|aria-label|data-key|width|height|style-width)$/.test(k)) {
      if (k === "style-width") el.style.width = v;
      else if (k === "open") el.open = !!v;
      else el.setAttribute(k, String(v));
    }
  }
  SE.append(el, kids);
  return el;
};
SE.append = function (el, kids) {
  for (const k of kids.flat(Infinity)) {
    if (k === null || k === undefined || k === false) continue;
    el.appendChild(k instanceof Node ? k : document.createTextNode(String(k)));
  }
  return el;
};
SE.safeUrl = function (v, attr) {
  v = String(v);
  if (v.startsWith("#/")) return attr === "href";
  if (v.startsWith("/api/file?")) return !SE.static;
  if (/^data:image\/(png|jpeg|gif|webp);base64,[A-Za-z0-9+/=]*$/.test(v)) return true;
  if (attr === "href" && /^data:application\/(octet-stream|pdf);base64,[A-Za-z0-9+/=]*$/.test(v)) return true;
  return false;
};
SE.clear = (el) => { while (el.firstChild) el.removeChild(el.firstChild); return el; };

/* numbers, rounded as Python's format() rounds them in the console, summary.md and diff: the
 * float's exact value, ties to even (a percentage: the float 100 * x first, as Python's "%"
 * does). toFixed rounds ties up: 5/8 showed as 63% here and 62% there. Past 1e21 toFixed
 * gives no digits: plain toFixed. */
SE.fixed = function (x, d) {
  x = Number(x);
  if (!Number.isFinite(x) || Math.abs(x) >= 1e21) return x.toFixed(d);
  const [whole, frac] = Math.abs(x).toFixed(100).split(".");  // exact for a double this size
  const digits = whole + frac.slice(0, d);                       // the kept digits, as an integer
  const rest = frac.slice(d);
  const odd = Number(digits[digits.length - 1]) % 2 === 1;
  const up = rest[0] > "5" || (rest[0] === "5" && (/[1-9]/.test(rest.slice(1)) || odd));
  let n = (BigInt(digits) + (up ? 1n : 0n)).toString().padStart(d + 1, "0");
  if (d > 0) n = n.slice(0, -d) + "." + n.slice(-d);
  return (x < 0 && /[1-9]/.test(n) ? "-" : "") + n;
};
SE.pct = (x) => (x === null || x === undefined ? "n/a" : SE.fixed(100 * x, 0) + "%");
SE.ci = (e) => (!e || e.value === null || e.value === undefined ? "n/a"
  : SE.pct(e.value) + (e.low !== null && e.low !== undefined ? ` [${SE.pct(e.low)}–${SE.pct(e.high)}]` : ""));
SE.num = (x, d = 1) => (x === null || x === undefined ? "n/a" : SE.fixed(x, d));
SE.pval = (p) => (p === null || p === undefined ? "n/a" : p < 0.001 ? "p<0.001" : "p=" + Number(p).toPrecision(2));
SE.time = (t) => (t ? String(t).replace("T", " ").slice(0, 19) : "");

/* data: live fetches /api/..., a static report reads the answers it embeds */
SE.api = async function (path) {
  if (SE.static) {
    const got = SE.data.responses[path] ?? SE.data.responses[path.split("?")[0]];
    if (got === undefined) throw new Error("not included in this report: " + path);
    return got;
  }
  const r = await fetch(path, { headers: { Accept: "application/json" } });
  if (!r.ok) throw new Error(`${r.status} ${await r.text()}`);
  return r.json();
};
SE.post = async function (path, body) {
  const r = await fetch(path, { method: "POST", headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body) });
  if (!r.ok) {
    const text = await r.text();
    const e = new Error(`${r.status} ${text}`);
    e.status = r.status;  /* and the server's JSON answer, for a caller that acts on it */
    try { e.body = JSON.parse(text); } catch (_) { e.body = null; }
    throw e;
  }
  return r.json();
};

/* keep rows that did not change, so the page keeps its place while new data arrives */
SE.keyed = function (parent, items, keyOf, render) {
  const old = new Map();
  for (const el of Array.from(parent.children)) old.set(el.getAttribute("data-key"), el);
  let prev = null;
  for (const item of items) {
    const key = String(keyOf(item));
    const sig = JSON.stringify(item);
    let el = old.get(key);
    if (!el || el._sig !== sig) {
      const fresh = render(item);
      fresh.setAttribute("data-key", key);
      fresh._sig = sig;
      if (el) parent.replaceChild(fresh, el);
      el = fresh;
    }
    old.delete(key);
    const want = prev ? prev.nextSibling : parent.firstChild;
    if (want !== el) parent.insertBefore(el, want);
    prev = el;
  }
  for (const el of old.values()) el.remove();
};

SE.table = function (head, cls) {
  const tbody = SE.h("tbody");
  const t = SE.h("table", { class: cls || "grid" }, SE.h("thead", {}, SE.h("tr", {}, head.map((x) => SE.h("th", {}, x)))), tbody);
  t.tbody = tbody;
  return t;
};
SE.badge = (text, kind) => SE.h("span", { class: "badge " + (kind || String(text).replace(/[^a-z_]/gi, "")) }, text);
/* A run that did not finish (budget stop, Ctrl-C, killed, crashed): its numbers cover only
 * what ran, and the page says so above them, as the console and summary.md do. */
SE.PARTIAL = { budget_stopped: "stopped by the budget", interrupted: "interrupted", stale: "killed (no final status)",
  failed: "failed before it finished", harness_error: "stopped by a measurement error" };
SE.partialNote = function (run, extra) {
  const cnm = (run.summary || {}).could_not_measure;
  if (cnm) return SE.h("p", { class: "errors partial" }, `Could not measure (exit 3): ${cnm}. The numbers below are not a measurement of the skill.`);
  const why = SE.PARTIAL[run.status] || ((run.summary || {}).partial ? "stopped by the budget" : "");
  if (!why) return "";
  return SE.h("p", { class: "errors partial" }, `Partial: this run was ${why}; the numbers below cover only what ran` +
    (extra ? `, ${extra}` : "") + ", not the whole eval set.");
};
SE.error = (where, e) => SE.h("p", { class: "error" }, `${where}: ${e && e.message ? e.message : e}`);

/* charts: Chart.js, vendored (static/vendor), animations off so pages settle at once */
SE.chart = function (canvas, config) {
  config.options = Object.assign({ animation: false, responsive: true, maintainAspectRatio: false }, config.options || {});
  return new window.Chart(canvas, config);
};

/* router: #/runs, #/sweep/ID, #/run/ID[/page[/index]] */
SE.pages = {};
SE.timer = null;
SE.route = async function () {
  if (SE.timer) { clearInterval(SE.timer); SE.timer = null; }
  if (SE.cleanup) { SE.cleanup(); SE.cleanup = null; }
  const hash = location.hash || (SE.data.start || "#/runs");
  const [path, query] = hash.slice(1).split("?");
  const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
  const params = Object.fromEntries(new URLSearchParams(query || ""));
  const main = SE.clear(document.getElementById("app"));
  document.querySelectorAll("nav a").forEach((a) => a.classList.toggle("active", hash.startsWith(a.getAttribute("href"))));
  try {
    if (parts[0] === "run" && parts[1]) await SE.pages.run(main, parts[1], parts[2], parts[3], params);
    else if (parts[0] === "sweep" && parts[1]) await SE.pages.sweep(main, parts[1]);
    else await SE.pages.runs(main, params);
  } catch (e) {
    main.appendChild(SE.error("could not show this page", e));
  }
};
/* poll(fn, ms, run): call fn every interval while the page stays open (live server only).
   With `run` (the run the page shows), only while it is running: a finished run's page
   polled forever, several requests a second of server CPU per open tab. The run page's
   status watch updates run.status; the refresh after the change is the last one. */
SE.poll = function (fn, ms = 1500, run = null) {
  if (SE.static || (run && run.status !== "running")) return;
  let busy = false;
  const timer = setInterval(async () => {
    if (busy || document.hidden) return;
    busy = true;
    try { await fn(); } catch (e) { console.warn("refresh failed", e); } finally { busy = false; }
    if (run && run.status !== "running") clearInterval(timer);
  }, ms);
  SE.timer = timer;
};
window.addEventListener("hashchange", SE.route);
window.addEventListener("DOMContentLoaded", SE.route);
