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

  // shift+L, as in pi's /tree: edit the selected entry's label. The key
  // down is taken before app.js sees it (capture), so "L" does not go to
  // the tree search; the field opens on key up, so no "L" lands in it.
  let armed = false;
  window.addEventListener(
    "keydown",
    (e) => {
      if (e.key !== "L" || !e.shiftKey || e.ctrlKey || e.altKey || e.metaKey) return;
      const t = e.target;
      if (t && t.closest && t.closest("input, textarea, select, [contenteditable]")) return;
      if (!document.getElementById("tree")) return;
      e.preventDefault();
      e.stopPropagation();
      armed = true;
    },
    true
  );
  window.addEventListener(
    "keyup",
    (e) => {
      if (!armed || (e.key !== "L" && e.key !== "l")) return;
      armed = false;
      e.preventDefault();
      e.stopPropagation();
      const p = panel();
      const ref = selectedRef();
      if (p && ref && p.dataset.ref === ref) return openLabel();
      // The conversation shows another entry (still loading, or the hidden
      // leaf the page opened at): load the selected row's, then open.
      pendingLabel = true;
      const row = document.querySelector("#tree .row.sel");
      if (row) row.click();
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

  // Mark a panel once htmx has processed it (its forms post through htmx
  // from then on; htmx does that when a swap settles).
  document.addEventListener("htmx:load", (e) => {
    const p = panel();
    if (p && (e.target === p || e.target.contains(p))) p.dataset.ready = "";
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
