// The command palette (views/search.templ: Palette), on every page:
// ctrl+k or cmd+k opens it, typing finds sessions, labels and entries
// (GET /palette), ↑/↓ choose, enter opens, esc closes. Also: the sessions
// page reloads its list once background indexing is done.
"use strict";

(function () {
  const dlg = () => document.getElementById("palette");
  const input = () => document.getElementById("palette-q");
  const items = () => Array.from(document.querySelectorAll("#palette-results .palette-item"));
  let active = -1;

  function open() {
    const d = dlg();
    if (!d || d.open) return;
    d.showModal();
    const q = input();
    q.focus();
    q.select();
  }
  function mark(k) {
    const list = items();
    if (!list.length) return;
    active = (k + list.length) % list.length;
    list.forEach((el, i) => el.setAttribute("aria-selected", i === active ? "true" : "false"));
    list[active].scrollIntoView({ block: "nearest" });
  }

  document.addEventListener("keydown", (e) => {
    if ((e.ctrlKey || e.metaKey) && !e.altKey && !e.shiftKey && e.key.toLowerCase() === "k") {
      e.preventDefault();
      e.stopPropagation();
      open();
      return;
    }
    const d = dlg();
    if (!d || !d.open) return;
    if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      e.preventDefault();
      mark(active + (e.key === "ArrowDown" ? 1 : -1));
    }
  }, true);

  // Enter submits the palette's form: it opens the chosen line (without
  // one, the search page for what was typed).
  document.addEventListener("submit", (e) => {
    if (!e.target.classList || !e.target.classList.contains("palette-form")) return;
    const pick = items()[active];
    if (pick) {
      e.preventDefault();
      pick.click(); // as a click on the link: same-tab navigation, history entry
    }
  });

  document.addEventListener("click", (e) => {
    const a = e.target.closest && e.target.closest(".find-link");
    if (a && dlg()) {
      e.preventDefault();
      open();
    }
    const d = dlg();
    if (d && e.target === d) d.close(); // a click on the backdrop
  });

  document.addEventListener("htmx:afterSwap", (e) => {
    if (e.target && e.target.id === "palette-results") {
      active = -1;
      if (items().length) mark(0);
    }
  });

  // Indexing finished: the sessions page fetches its whole list once
  // (rows that arrived before its live stream connected included).
  document.addEventListener("piweb-indexed", () => {
    const list = document.getElementById("sessions");
    if (!list || !window.htmx) return;
    const p = new URLSearchParams({ q: list.dataset.q || "", sort: list.dataset.sort || "", machine: list.dataset.machine || "" });
    htmx.ajax("GET", "/?" + p, { target: "#sessions", swap: "outerHTML" });
  });
})();
