// piweb's write actions on the session page (views/actions.templ): the
// forms post with htmx and re-render their panel; this file adds pi's
// shift+L key for the label field, copy buttons, and keeps refusals and
// results in the panel.
"use strict";

(function () {
  const panel = () => document.getElementById("entry-actions");
  const selectedRef = () => {
    const row = document.querySelector("#tree .row.sel");
    return row ? row.dataset.ref : null;
  };

  // openLabel opens the label field of the panel, which must be the selected entry's.
  function openLabel() {
    const p = panel();
    const d = p && p.querySelector('details[data-act="label"]');
    if (!d) return false;
    d.open = true;
    const input = d.querySelector('input[name="label"]');
    if (input) {
      input.focus();
      input.select();
    }
    return true;
  }

  let pendingLabel = false; // shift+L before the selected entry's panel arrived

  // shift+L, as in pi's /tree: edit the selected entry's label. It runs
  // before app.js's keys (capture), so "L" does not go to the tree search.
  window.addEventListener(
    "keydown",
    (e) => {
      if (e.key !== "L" || !e.shiftKey || e.ctrlKey || e.altKey || e.metaKey) return;
      const t = e.target;
      if (t && t.closest && t.closest("input, textarea, select, [contenteditable]")) return;
      if (!document.getElementById("tree")) return;
      e.preventDefault();
      e.stopPropagation();
      const p = panel();
      const ref = selectedRef();
      if (p && ref && p.dataset.ref === ref) openLabel();
      else pendingLabel = true;
    },
    true
  );

  // Esc in a form closes it and gives the keys back to the tree.
  document.addEventListener("keydown", (e) => {
    if (e.key !== "Escape") return;
    const d = e.target.closest && e.target.closest("#entry-actions details[open]");
    if (!d) return;
    e.preventDefault();
    e.stopPropagation();
    d.open = false;
    const tree = document.getElementById("tree");
    if (tree) tree.focus({ preventScroll: true });
  });

  // Copy buttons copy the text field before them.
  document.addEventListener("click", (e) => {
    const b = e.target.closest && e.target.closest("#entry-actions [data-copy]");
    if (!b) return;
    const input = b.parentElement.querySelector("input");
    if (!input) return;
    input.select();
    const done = () => {
      b.textContent = "Copied";
      setTimeout(() => (b.textContent = "Copy"), 1500);
    };
    if (navigator.clipboard) navigator.clipboard.writeText(input.value).then(done, () => {});
    else if (document.execCommand("copy")) done();
  });

  // An error page for an action (the server failed) goes into the panel,
  // not over the conversation.
  document.body.addEventListener("htmx:beforeSwap", (e) => {
    const p = panel();
    if (!e.detail.isError || !p || !p.contains(e.detail.elt)) return;
    let out = p.querySelector(".act-error");
    if (!out) {
      out = document.createElement("div");
      out.className = "act-error";
      p.append(out);
    }
    e.detail.target = out;
    e.detail.swapOverride = "innerHTML";
  });

  // The live stream may reload the conversation right after an action (the
  // leaf moved): carry the action's message over to the new panel.
  let last = null;
  document.body.addEventListener("htmx:afterSettle", () => {
    const p = panel();
    if (!p) return;
    const msg = p.querySelector(".act-msg");
    if (msg && !msg.hasAttribute("data-carried")) {
      last = { ref: p.dataset.ref, node: msg.cloneNode(true), at: Date.now() };
      last.node.setAttribute("data-carried", "");
    } else if (!msg && last && last.ref === p.dataset.ref && Date.now() - last.at < 5000) {
      p.append(last.node.cloneNode(true));
    }
    if (pendingLabel && p.dataset.ref === selectedRef()) {
      pendingLabel = false;
      openLabel();
    }
  });
})();
