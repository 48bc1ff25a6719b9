// The review page's behaviour. Every string from the eval set or the skill is put in the page
// with textContent / value, never as HTML, and the page's CSP allows only this file as script.
(function () {
  "use strict";
  const data = JSON.parse(document.getElementById("review-data").textContent);
  let rows = data.rows.map((r) => Object.assign({}, r));
  const tbody = document.querySelector("#queries tbody");
  const status = document.getElementById("status");

  function el(tag, attrs, text) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function meta(label, value) {
    const div = el("div");
    div.appendChild(el("span", { class: "k" }, label + ": "));
    div.appendChild(el("span", {}, value || "—"));
    return div;
  }

  function renderCounts() {
    const pos = rows.filter((r) => r.should_trigger).length;
    document.getElementById("counts").textContent =
      rows.length + " queries · " + pos + " should trigger · " + (rows.length - pos) + " should not";
  }

  function render(focusIndex) {
    tbody.replaceChildren();
    rows.forEach((row, i) => {
      const tr = el("tr", { class: row.should_trigger ? "pos" : "neg", "data-index": String(i) });
      tr.appendChild(el("td", {}, String(i + 1)));
      const q = el("textarea", { class: "query", "aria-label": "query " + (i + 1) });
      q.value = row.query;
      q.addEventListener("input", () => { row.query = q.value; });
      const tdq = el("td"); tdq.appendChild(q); tr.appendChild(tdq);
      const box = el("input", { type: "checkbox", class: "should-trigger", "aria-label": "should trigger " + (i + 1) });
      box.checked = !!row.should_trigger;
      box.addEventListener("change", () => {
        row.should_trigger = box.checked;
        tr.className = row.should_trigger ? "pos" : "neg";
        renderCounts();
      });
      const tdb = el("td"); tdb.appendChild(box); tr.appendChild(tdb);
      const m = el("td", { class: "meta" });
      m.appendChild(meta("rationale", row.rationale));
      m.appendChild(meta("span", row.span));
      const cov = (data.query_clauses[row.id] || []).join(" · ");
      m.appendChild(meta("covers", cov));
      tr.appendChild(m);
      const del = el("button", { type: "button", class: "delete" }, "Delete");
      del.addEventListener("click", () => { rows.splice(i, 1); render(); });
      const tdd = el("td"); tdd.appendChild(del); tr.appendChild(tdd);
      tbody.appendChild(tr);
      if (focusIndex === i) q.focus();
    });
    renderCounts();
  }

  function renderUncovered(list) {
    const ul = document.getElementById("uncovered");
    ul.replaceChildren();
    if (!list.length) ul.appendChild(el("li", {}, "none"));
    for (const c of list) ul.appendChild(el("li", {}, "(" + c.polarity + ") " + c.clause));
  }

  document.getElementById("add").addEventListener("click", () => {
    rows.push({ query: "", should_trigger: true });
    render(rows.length - 1);  // focus the new row itself
  });

  document.getElementById("save").addEventListener("click", async () => {
    status.className = ""; status.textContent = "saving…";
    // every row, blank ones too: the server leaves blank rows out, and its messages then
    // name rows by the numbers shown here (filtering first shifted them)
    const payload = rows;
    try {
      const resp = await fetch("/api/save", {
        method: "POST",
        headers: { "Content-Type": "application/json", "X-Review-Token": data.token },
        // the version this page has: a save over a file changed since (another tab, a
        // redraft on disk) is refused (409), not written over it
        body: JSON.stringify({ rows: payload, base: data.version }),
      });
      const body = await resp.json();
      if (!resp.ok) throw new Error(body.error || ("HTTP " + resp.status));
      rows = body.rows; data.query_clauses = body.query_clauses; data.version = body.version;
      render(); renderUncovered(body.uncovered);
      status.className = "ok";
      status.textContent = "Saved " + body.rows.length + " queries" + (body.backup ? " (backup: " + body.backup + ")" : "");
    } catch (err) {
      status.className = "err"; status.textContent = "Not saved: " + err.message;
    }
  });

  render(); renderUncovered(data.uncovered);
})();
