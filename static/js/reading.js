// Reading the conversation (views/entry.templ): thinking and tool-output
// toggles remembered per browser (keys t and o while the conversation has
// the focus), a copy-link button on each message, images in a larger view
// on click, and on a narrow screen the switch between the tree and the
// conversation panes.
"use strict";

(function () {
  const conv = () => document.getElementById("conv");
  const store = {
    get(k, d) {
      try {
        return localStorage.getItem("piweb." + k) || d;
      } catch (e) {
        return d;
      }
    },
    set(k, v) {
      try {
        localStorage.setItem("piweb." + k, v);
      } catch (e) {}
    },
  };
  const modes = {
    thinking: ["collapsed", "expanded", "hidden"],
    tools: ["previews", "full"],
  };
  const words = { thinking: "thinking", tools: "tool output" };
  const state = {
    thinking: store.get("thinking", "collapsed"),
    tools: store.get("tools", "previews"),
  };

  // apply shows the conversation (or a page of it just loaded) as the toggles say.
  function apply(root) {
    root = root || conv();
    document.body.dataset.thinking = state.thinking;
    document.body.dataset.tools = state.tools;
    if (!root) return;
    if (state.thinking !== "hidden") root.querySelectorAll("details.thinking:not(.extra)").forEach((d) => (d.open = state.thinking === "expanded"));
    root.querySelectorAll("details.expand").forEach((d) => (d.open = state.tools === "full"));
    document.querySelectorAll("[data-reading]").forEach((b) => {
      const k = b.dataset.reading;
      b.textContent = words[k] + ": " + state[k];
      b.setAttribute("aria-pressed", String(state[k] !== modes[k][0]));
    });
  }

  function cycle(k) {
    const m = modes[k];
    state[k] = m[(m.indexOf(state[k]) + 1) % m.length];
    store.set(k, state[k]);
    apply();
  }

  document.addEventListener("click", (e) => {
    const t = e.target.closest ? e.target : e.target.parentElement;
    if (!t) return;
    const r = t.closest("[data-reading]");
    if (r) return cycle(r.dataset.reading);

    const c = t.closest("[data-copy-link]");
    if (c) {
      const url = new URL(c.dataset.copyLink, location.href).href;
      const done = () => {
        c.textContent = "copied";
        setTimeout(() => (c.textContent = "link"), 1500);
      };
      if (navigator.clipboard) navigator.clipboard.writeText(url).then(done, () => {});
      return;
    }

    const img = t.closest(".img img");
    if (img) return zoom(img);

    const p = t.closest(".pane-switch [data-pane]");
    if (p) return show(p.dataset.pane);

    // A tap on a tree row on a narrow screen reads it.
    const row = t.closest("#tree .row");
    if (row && narrow() && !t.closest(".fold")) show("conv");
  });

  // Keys t and o while the conversation pane has the focus (in the tree,
  // letters search it, as in pi's /tree).
  document.addEventListener("keydown", (e) => {
    if (e.ctrlKey || e.altKey || e.metaKey || !e.target.closest || !e.target.closest(".conv-pane")) return;
    if (e.target.closest("input,textarea,select,[contenteditable]")) return;
    if (e.key === "t") cycle("thinking");
    else if (e.key === "o") cycle("tools");
    else return;
    e.preventDefault();
  });

  // zoom shows an image at its own size in a dialog; a click or Esc closes it.
  function zoom(img) {
    const d = document.createElement("dialog");
    d.className = "lightbox";
    const big = document.createElement("img");
    big.src = img.src;
    big.alt = img.alt;
    d.append(big);
    d.addEventListener("click", () => d.close());
    d.addEventListener("close", () => d.remove());
    document.body.append(d);
    d.showModal();
  }

  const narrow = () => matchMedia("(max-width: 860px)").matches;

  // show switches the narrow screen's pane.
  function show(pane) {
    const split = document.getElementById("split");
    if (!split) return;
    split.dataset.pane = pane;
    document.querySelectorAll(".pane-switch [data-pane]").forEach((b) => b.setAttribute("aria-pressed", String(b.dataset.pane === pane)));
    if (pane === "conv") {
      const t = document.querySelector("#conv .item.target, #conv .tool-result.target");
      if (t) t.scrollIntoView({ block: "start" });
    } else {
      const r = document.querySelector("#tree .row.sel");
      if (r) r.scrollIntoView({ block: "center" });
    }
  }

  document.addEventListener("htmx:afterSwap", (e) => {
    const c = conv();
    if (c && (e.target === c || c.contains(e.target))) apply(e.target);
  });
  document.addEventListener("DOMContentLoaded", () => apply());
})();
