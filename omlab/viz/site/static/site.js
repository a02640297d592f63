// The static run browser's script (omlab report --format html over a results folder): the pages'
// forms submit to the page itself, and this reads their ?query and filters and sorts the rows in
// the page, as omlab view's server does, so the site works from file:// with no server.
(function () {
  "use strict";
  const params = new URLSearchParams(location.search);
  const get = (name) => params.get(name) || "";

  function choose(id, value) {
    const select = document.getElementById(id);
    if (!select || !value) return;
    if (![...select.options].some((o) => o.value === value)) select.add(new Option(value, value));
    select.value = value;
  }

  function byText(a, b) {
    return a < b ? -1 : a > b ? 1 : 0;
  }

  function runList(table) {
    const names = ["suite", "config", "status", "tag", "sweep"];
    names.forEach((name) => choose("filter-" + name, get(name)));
    const text = get("text").toLowerCase();
    const box = document.getElementById("filter-text");
    if (box) box.value = get("text");
    const headers = [...table.querySelectorAll("thead a[data-sort]")];
    const keys = headers.map((a) => a.dataset.sort);
    const sort = keys.includes(get("sort")) ? get("sort") : "started_at";
    const desc = (params.get("desc") || "1") !== "0";
    const index = keys.indexOf(sort);
    const column = index + 1; // after the compare checkbox
    const numeric = headers[index].parentElement.classList.contains("num");
    const field = { suite: "suite", config: "config", status: "status", sweep: "sweep" };
    const match = (tr) =>
      Object.entries(field).every(([name, key]) => !get(name) || tr.dataset[key] === get(name)) &&
      (!get("tag") || tr.dataset.tags.split(",").includes(get("tag"))) &&
      (!text ||
        [tr.dataset.run, tr.dataset.suite, tr.dataset.config, tr.dataset.tags].join(" ").toLowerCase().includes(text));
    const value = (tr) => tr.cells[column].dataset.v;
    const order = (a, b) => {
      const va = value(a), vb = value(b);
      if (va === "" || vb === "") {
        if (va !== vb) return va === "" ? 1 : -1; // missing last, either way
      } else {
        const c = numeric ? Number(va) - Number(vb) : byText(va, vb);
        if (c) return desc ? -c : c;
      }
      const r = byText(a.dataset.run, b.dataset.run);
      return desc ? -r : r;
    };
    const rows = [...table.querySelectorAll("tr[data-run]")];
    const shown = rows.filter(match).sort(order);
    rows.forEach((tr) => (tr.hidden = true));
    // a sweep's cells stay together, at the place its first cell sorts to
    const groups = new Map();
    shown.forEach((tr) => {
      tr.hidden = false;
      const body = tr.parentElement;
      if (!groups.has(body)) groups.set(body, []);
      groups.get(body).push(tr);
    });
    groups.forEach((cells, body) => {
      cells.forEach((tr) => body.appendChild(tr));
      body.hidden = false;
      const count = body.querySelector(".cell-count");
      if (count) count.textContent = cells.length + (cells.length === 1 ? " cell" : " cells");
      table.appendChild(body);
    });
    table.querySelectorAll("tbody").forEach((body) => {
      if (!groups.has(body)) body.hidden = true;
    });
    headers.forEach((a) => {
      const same = a.dataset.sort === sort;
      a.textContent = a.dataset.label + (same ? (desc ? " ▼" : " ▲") : "");
      const next = new URLSearchParams(params);
      next.set("sort", a.dataset.sort);
      next.set("desc", same && desc ? "0" : "1");
      a.href = "?" + next.toString();
    });
    const set = (id, value) => {
      const node = document.getElementById(id);
      if (node) node[node.tagName === "INPUT" ? "value" : "textContent"] = value;
    };
    set("sort-key", sort);
    set("sort-desc", desc ? "1" : "0");
    const filtered = shown.length < rows.length ? " (filtered)" : "";
    set("shown-count", shown.length + " of " + rows.length + " runs" + filtered);
    set("sort-label", headers[index].dataset.label);
    set("sort-direction", desc ? "descending" : "ascending");
    const none = document.getElementById("no-match");
    if (none) none.hidden = shown.length > 0;
  }

  function questions(table) {
    const chosen = { type: get("type"), verdict: get("verdict"), cause: get("cause") };
    Object.entries(chosen).forEach(([name, value]) => choose("filter-" + name, value));
    table.querySelectorAll("tr[data-question]").forEach((tr) => {
      tr.hidden = !Object.entries(chosen).every(([name, value]) => !value || tr.dataset[name] === value);
    });
  }

  function comparisons(list) {
    const runs = params.getAll("run");
    if (!runs.length) return;
    if (runs.length === 2) {
      const key = [...runs].sort(byText).join(" ");
      const link = [...list.querySelectorAll("a[data-pair]")].find((a) => a.dataset.pair === key);
      if (link) {
        location.replace(link.href);
        return;
      }
    }
    const note = document.getElementById("compare-missing");
    if (runs.length !== 2) {
      note.textContent = "compare needs exactly two runs (got " + runs.length + "): tick two in the run list";
    }
    note.hidden = false;
  }

  document.addEventListener("DOMContentLoaded", () => {
    const runs = document.getElementById("runs");
    if (runs) runList(runs);
    const table = document.getElementById("question-table");
    if (table) questions(table);
    const pairs = document.getElementById("pairs");
    if (pairs) comparisons(pairs);
  });
})();
