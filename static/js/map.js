// map.js: the session map in place of the text tree (?view=map, or the
// "map" button). It fetches the server's SVG
// (/s/KEY/map), keeps the selected entry and pi's leaf marked, pans by
// scrolling or dragging, zooms with + / − / 0 (fit) and l (the leaf), and
// asks the page to select a segment's entry on click (shift+click compares
// it with the selected entry). app.js tells it when the tree changed.
(() => {
  "use strict";
  const pane = document.getElementById("map-pane");
  const tree = document.getElementById("tree");
  if (!pane || !tree) return;
  const view = document.getElementById("map-view");
  const toggle = document.querySelector("[data-map-toggle]");
  let zoom = 1;
  let loaded = "";
  let timer = 0;
  let focus = ""; // the entry whose folded subtree the map draws in detail

  const selected = () => document.querySelector("#conv-inner")?.dataset.ref || tree.dataset.target || "";

  function url() {
    const p = new URLSearchParams();
    if (tree.dataset.leaf) p.set("leaf", tree.dataset.leaf);
    const sel = selected();
    if (sel && !sel.startsWith("~")) p.set("select", sel);
    if (focus) p.set("focus", focus);
    if (tree.dataset.q) {
      p.set("q", tree.dataset.q); // the tree's search: its hits are marked
      if (tree.dataset.filter && tree.dataset.filter !== "default") p.set("filter", tree.dataset.filter);
    }
    return pane.dataset.mapSrc + "?" + p;
  }

  async function load() {
    if (pane.hidden) return;
    const u = url();
    if (u === loaded) return;
    loaded = u;
    const res = await fetch(u, { headers: { Accept: "image/svg+xml" } });
    if (!res.ok || u !== loaded) return;
    const text = await res.text();
    const doc = new DOMParser().parseFromString(text, "image/svg+xml");
    const svg = doc.documentElement;
    if (svg.nodeName !== "svg") return;
    view.replaceChildren(document.importNode(svg, true));
    apply();
  }
  const soon = () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      loaded = "";
      load();
    }, 50);
  };

  function apply() {
    const svg = view.querySelector("svg");
    if (!svg) return;
    const w = Number(svg.getAttribute("width")), h = Number(svg.getAttribute("height"));
    svg.style.width = Math.round(w * zoom) + "px";
    svg.style.height = Math.round(h * zoom) + "px";
  }

  // setZoom zooms to z, keeping the point at (cx, cy) on the screen where
  // it is (the middle of the view when not given).
  function setZoom(z, cx, cy) {
    const before = zoom;
    zoom = Math.max(0.1, Math.min(4, z));
    const v = view.getBoundingClientRect();
    const ax = (cx ?? v.left + v.width / 2) - v.left, ay = (cy ?? v.top + v.height / 2) - v.top;
    const px = (view.scrollLeft + ax) / before, py = (view.scrollTop + ay) / before;
    apply();
    view.scrollLeft = px * zoom - ax;
    view.scrollTop = py * zoom - ay;
    // Zooming in past 1.5 asks for the detail folded nearest the middle.
    if (before < 1.5 && zoom >= 1.5) {
      const v = view.getBoundingClientRect();
      const cx = v.left + v.width / 2, cy = v.top + v.height / 2;
      let best = null, dist = Infinity;
      view.querySelectorAll("[data-focus]").forEach((m) => {
        const r = m.getBoundingClientRect();
        const d = Math.hypot(r.left - cx, r.top - cy);
        if (d < dist) (best = m), (dist = d);
      });
      if (best) detail(best.dataset.focus);
    }
  }

  function detail(ref) {
    focus = ref;
    loaded = "";
    load();
  }

  function fit() {
    const svg = view.querySelector("svg");
    if (!svg) return;
    const w = Number(svg.getAttribute("width")), h = Number(svg.getAttribute("height"));
    setZoom(Math.min(view.clientWidth / w, view.clientHeight / h, 1.5));
  }

  function toLeaf() {
    const leaf = view.querySelector(".mk.leaf") || view.querySelector(".seg.sel");
    if (leaf) leaf.scrollIntoView({ block: "center", inline: "nearest" });
  }

  function show(on) {
    pane.hidden = !on;
    tree.classList.toggle("under-map", on);
    if (toggle) toggle.setAttribute("aria-pressed", String(on));
    const u = new URL(location.href);
    if (on) u.searchParams.set("view", "map");
    else if (u.searchParams.get("view") === "map") u.searchParams.delete("view");
    history.replaceState(history.state, "", u);
    if (on) {
      loaded = "";
      load();
      pane.focus({ preventScroll: true });
    } else {
      tree.focus({ preventScroll: true });
    }
  }

  toggle?.addEventListener("click", () => show(pane.hidden));
  pane.addEventListener("click", (e) => {
    const z = e.target.closest("[data-map-zoom]");
    if (z) {
      const how = z.dataset.mapZoom;
      if (how === "in") setZoom(zoom * 1.25);
      else if (how === "out") setZoom(zoom / 1.25);
      else if (how === "fit") fit();
      else toLeaf();
      return;
    }
    const more = e.target.closest("[data-focus]");
    if (more) return detail(more.dataset.focus); // "+k": draw that subtree in detail
    // A segment reads its last entry; a mark inside a run (a label,
    // compaction, summary, search hit) names its own entry.
    const el = e.target.closest("[data-entry]");
    if (!el) return;
    const ref = el.dataset.entry;
    if (e.shiftKey && selected()) {
      location.href = pane.dataset.mapSrc.replace(/\/map$/, "/compare") + "?a=" + encodeURIComponent(selected()) + "&b=" + encodeURIComponent(ref);
      return;
    }
    view.querySelectorAll(".seg.sel").forEach((s) => s.classList.remove("sel"));
    el.closest(".seg")?.classList.add("sel");
    document.dispatchEvent(new CustomEvent("piweb:select", { detail: { ref } }));
  });
  pane.addEventListener("keydown", (e) => {
    if (e.target.closest("input,button")) return;
    const k = e.key;
    if (k === "+" || k === "=") setZoom(zoom * 1.25);
    else if (k === "-" || k === "−") setZoom(zoom / 1.25);
    else if (k === "0") fit();
    else if (k === "l") toLeaf();
    else if (k === "Enter" && e.target.closest(".seg")) e.target.closest(".seg").click();
    else if (k === "Escape") show(false);
    else return;
    e.preventDefault();
    e.stopPropagation();
  });
  // Drag (a mouse, a pen or one finger) pans; two fingers pinch to zoom. A
  // drag that starts on a run does not click it.
  let drag = null, pinch = null, dragged = false;
  const fingers = new Map();
  const spread = () => {
    const [a, b] = Array.from(fingers.values());
    return { d: Math.hypot(a.x - b.x, a.y - b.y) || 1, x: (a.x + b.x) / 2, y: (a.y + b.y) / 2 };
  };
  view.addEventListener("pointerdown", (e) => {
    if (e.button !== 0) return;
    if (e.pointerType === "touch") fingers.set(e.pointerId, { x: e.clientX, y: e.clientY });
    if (fingers.size === 2) {
      drag = null;
      pinch = { d: spread().d, z: zoom };
      return;
    }
    drag = { id: e.pointerId, x: e.clientX, y: e.clientY, l: view.scrollLeft, t: view.scrollTop, moved: false };
    dragged = false;
  });
  view.addEventListener("pointermove", (e) => {
    if (fingers.has(e.pointerId)) fingers.set(e.pointerId, { x: e.clientX, y: e.clientY });
    if (pinch && fingers.size === 2) {
      const s = spread();
      setZoom(pinch.z * (s.d / pinch.d), s.x, s.y);
      return;
    }
    if (!drag || drag.id !== e.pointerId) return;
    const dx = e.clientX - drag.x, dy = e.clientY - drag.y;
    if (!drag.moved && Math.hypot(dx, dy) < 5) return;
    if (!drag.moved) {
      drag.moved = true;
      view.setPointerCapture(e.pointerId);
    }
    view.scrollLeft = drag.l - dx;
    view.scrollTop = drag.t - dy;
  });
  const lift = (e) => {
    fingers.delete(e.pointerId);
    if (fingers.size < 2) pinch = null;
    if (drag && drag.id === e.pointerId) {
      dragged = drag.moved;
      drag = null;
    }
  };
  view.addEventListener("pointerup", lift);
  view.addEventListener("pointercancel", lift);
  view.addEventListener("click", (e) => {
    if (!dragged) return;
    dragged = false; // the end of a drag is not a click on what it ended on
    e.stopPropagation();
  }, true);
  view.addEventListener("wheel", (e) => {
    if (!e.ctrlKey) return; // a trackpad pinch (or ctrl+wheel) zooms; a plain wheel scrolls
    e.preventDefault();
    setZoom(zoom * (e.deltaY < 0 ? 1.1 : 1 / 1.1), e.clientX, e.clientY);
  }, { passive: false });

  document.addEventListener("piweb:changed", soon); // app.js: the tree changed (live) or another entry was selected
  document.addEventListener("piweb:map-toggle", () => show(pane.hidden));
  if (!pane.hidden) load();
})();

// The minimap: a strip beside a long text tree with ticks where its branch
// points, labels, compactions and summaries, and pi's leaf are (the tree is
// paged on the server; the strip covers all of it). A click asks app.js for
// the rows there ("piweb:row").
(() => {
  "use strict";
  const mm = document.getElementById("minimap");
  const tree = document.getElementById("tree");
  if (!mm || !tree) return;
  const view = mm.querySelector(".mm-view");
  const here = mm.querySelector(".mm-here");
  let total = 0;
  let timer = 0;

  function place() {
    mm.style.top = tree.offsetTop + "px";
    mm.style.height = tree.clientHeight + "px";
    const sel = tree.querySelector(".row.sel");
    const first = Number(tree.dataset.first || 0);
    const all = Array.from(tree.querySelectorAll(".row"));
    if (sel && total > 0) {
      const k = first + all.indexOf(sel);
      here.style.top = Math.round((k / total) * tree.clientHeight) + "px";
    }
  }

  async function load() {
    const q = new URLSearchParams(location.search);
    const p = new URLSearchParams();
    for (const k of ["filter", "q", "fold", "leaf"]) for (const v of q.getAll(k)) p.append(k, v);
    const res = await fetch(mm.dataset.src + "?" + p);
    if (!res.ok) return;
    const doc = new DOMParser().parseFromString(await res.text(), "image/svg+xml");
    const svg = doc.documentElement;
    if (svg.nodeName !== "svg") return;
    total = Number(svg.getAttribute("data-rows") || 0);
    mm.hidden = total < 150 || tree.classList.contains("under-map"); // short trees need no strip
    view.replaceChildren(document.importNode(svg, true));
    place();
  }
  const soon = () => {
    clearTimeout(timer);
    timer = setTimeout(load, 100);
  };

  mm.addEventListener("click", (e) => {
    if (!total) return;
    const r = mm.getBoundingClientRect();
    const row = Math.max(0, Math.min(total - 1, Math.floor(((e.clientY - r.top) / r.height) * total)));
    document.dispatchEvent(new CustomEvent("piweb:row", { detail: { row } }));
  });
  document.addEventListener("piweb:changed", soon);
  tree.addEventListener("click", () => setTimeout(place, 0));
  tree.addEventListener("keyup", () => setTimeout(place, 0));
  addEventListener("resize", place);
  load();
})();
