// share.js: the one script of a page piweb exports (views/export.templ
// inlines it; the page's CSP allows it by its hash and nothing else, and it
// loads nothing). It gives the tree beside the entries pi's filters
// (default, no-tools, user, labeled, all) and a search of the entries'
// words, with a count, and opens or closes every thinking block (T) and
// every long tool output (O) at once. Without it the page reads the same,
// under the default filter.
(() => {
  "use strict";
  const rows = document.getElementById("share-rows");
  const tools = document.getElementById("share-tools");
  const toggles = document.getElementById("share-toggles");
  if (!rows || !tools) return;
  const search = document.getElementById("share-q");
  const status = document.getElementById("share-status");
  const all = Array.from(rows.querySelectorAll(".trow"));
  const shown = new Map(); // row -> the prefix the page drew (the default filter's)
  const texts = new Map(); // row -> its words and its entry's, lower case, read on the first search
  let filter = "d";
  let timer = 0;

  tools.hidden = false;
  if (toggles) toggles.hidden = false;
  if (window.matchMedia("(max-width: 860px)").matches) document.getElementById("share-tree").open = false;

  const inFilter = (r, f) => (" " + r.dataset.f + " ").includes(" " + f + " ");

  function words(r) {
    let t = texts.get(r);
    if (t === undefined) {
      const entry = document.getElementById(r.getAttribute("href").slice(1));
      t = (r.textContent + " " + (entry ? entry.textContent : "")).toLowerCase();
      texts.set(r, t);
    }
    return t;
  }

  // apply shows the rows the filter and the search let through, each
  // with the filter's prefix, and marks the leaf's row.
  function apply() {
    const tokens = search.value.toLowerCase().split(/\s+/).filter(Boolean);
    let n = 0;
    let here = null;
    for (const r of all) {
      const pre = r.querySelector(".pre");
      if (!shown.has(r)) shown.set(r, pre.textContent);
      const on = inFilter(r, filter) && tokens.every((t) => words(r).includes(t));
      r.classList.toggle("miss", !on);
      if (!inFilter(r, filter)) continue;
      pre.textContent = r.dataset["p" + filter] ?? shown.get(r);
      if (r.dataset.leaf && (" " + r.dataset.leaf + " ").includes(" " + filter + " ")) here = r;
      if (on) n++;
    }
    rows.dataset.filter = filter;
    let mark = rows.querySelector(".here");
    if (!mark) {
      mark = document.createElement("span");
      mark.className = "here";
      mark.textContent = " ← active";
    }
    all.forEach((r) => r.classList.remove("leaf"));
    if (here) {
      here.classList.add("leaf");
      here.appendChild(mark);
    } else mark.remove();
    const total = rows.dataset.entries;
    status.textContent = n + " of " + total + " entries" + (tokens.length ? " match “" + search.value.trim() + "”" : "");
  }

  function setFilter(f) {
    filter = f;
    tools.querySelectorAll("[data-filter]").forEach((b) => b.setAttribute("aria-pressed", String(b.dataset.filter === f)));
    apply();
  }

  // toggle opens or closes every thinking block or long tool output.
  function toggle(what) {
    const b = toggles && toggles.querySelector('[data-toggle="' + what + '"]');
    const open = !(b && b.getAttribute("aria-pressed") === "true");
    if (b) b.setAttribute("aria-pressed", String(open));
    const sel = what === "thinking" ? "details.thinking" : "details.expand";
    document.querySelectorAll("main " + sel).forEach((d) => (d.open = open));
  }

  tools.addEventListener("click", (e) => {
    const b = e.target.closest("[data-filter]");
    if (b) setFilter(b.dataset.filter);
  });
  toggles?.addEventListener("click", (e) => {
    const b = e.target.closest("[data-toggle]");
    if (b) toggle(b.dataset.toggle);
  });
  search.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(apply, all.length > 2000 ? 200 : 0);
  });
  search.addEventListener("keydown", (e) => {
    if (e.key !== "Escape") return;
    search.value = "";
    apply();
  });
  document.addEventListener("keydown", (e) => {
    if (e.ctrlKey || e.metaKey || e.altKey || e.target.closest("input, textarea, select, [contenteditable]")) return;
    const k = e.key.toLowerCase();
    if (k === "t") toggle("thinking");
    else if (k === "o") toggle("tools");
    else if (k === "/") {
      document.getElementById("share-tree").open = true;
      search.focus();
    } else return;
    e.preventDefault();
  });
  apply();
})();
