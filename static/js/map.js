// map.js: the session map in place of the text tree (?view=map, or the
// "map" button). It fetches the server's SVG (/s/KEY/map), keeps the
// selected entry and pi's leaf marked, fits the drawing in the pane and
// centres it, pans by scrolling or dragging, zooms with + / − / 0 (fit) and
// l (the leaf), and asks the page to select a run's entry on a click
// (shift+click compares it with the selected entry) or on the arrow keys:
// up to the run it hangs from, down to the first run hanging from it (the
// one on the path pi resumes first), left and right to its siblings. The
// pane is the map's one tab stop. app.js tells it when the tree changed.
(() => {
  "use strict";
  const pane = document.getElementById("map-pane");
  const tree = document.getElementById("tree");
  if (!pane || !tree) return;
  const view = document.getElementById("map-view");
  const status = document.getElementById("map-status");
  const toggle = document.querySelector("[data-map-toggle]");
  const minLabel = 10; // labels are never drawn smaller than this, in CSS pixels
  let zoom = 1;
  let fitted = false; // the first drawing of a visit is fitted to the pane
  let loaded = "";
  let timer = 0;
  let focus = ""; // the entry whose folded subtree the map draws in detail

  const selected = () => document.querySelector("#conv-inner")?.dataset.ref || tree.dataset.target || "";
  const svgOf = () => view.querySelector("svg");
  const size = (svg) => [Number(svg.getAttribute("width")), Number(svg.getAttribute("height"))];

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
    const old = svgOf();
    const at = old && old.getBoundingClientRect();
    view.replaceChildren(document.importNode(svg, true));
    if (!fitted) {
      fitted = true;
      fit(0.35); // the whole map, unless that makes it too small to read: then the leaf
      if (zoom > fitZoom() + 1e-9) toLeaf();
    } else {
      apply();
      if (at) {
        // A drawing that grew (a live append) stays where it was on screen.
        const now = svgOf().getBoundingClientRect();
        view.scrollLeft += now.left - at.left;
        view.scrollTop += now.top - at.top;
      }
    }
    pane.dataset.ready = "1";
    say();
  }
  const soon = () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      loaded = "";
      load();
    }, 50);
  };

  // apply sizes the drawing for the zoom; labels that would be smaller
  // than minLabel on screen are drawn larger, and those that then run
  // into a label before them (the path's come first) or a tag are hidden.
  function apply() {
    const svg = svgOf();
    if (!svg) return;
    const [w, h] = size(svg);
    svg.style.width = Math.round(w * zoom) + "px";
    svg.style.height = Math.round(h * zoom) + "px";
    const lbl = Math.max(11, minLabel / zoom);
    svg.style.setProperty("--lbl", lbl.toFixed(2) + "px");
    svg.dataset.zoom = zoom.toFixed(4);
    const texts = Array.from(svg.querySelectorAll("text.label"));
    svg.querySelectorAll(".crowd").forEach((e) => e.classList.remove("crowd"));
    if (lbl <= 11) return;
    const kept = Array.from(svg.querySelectorAll(".mk.tag"), (t) => t.getBoundingClientRect()); // a text may cover no tag
    for (const t of texts) {
      const r = t.getBoundingClientRect();
      if (kept.some((k) => r.left < k.right && k.left < r.right && r.top < k.bottom && k.top < r.bottom)) {
        t.classList.add("crowd");
        t.parentElement.querySelector(".lead")?.classList.add("crowd");
      } else kept.push(r);
    }
  }

  // setZoom zooms to z, keeping the point at (cx, cy) on the screen where
  // it is (the middle of the view when not given).
  function setZoom(z, cx, cy) {
    const svg = svgOf();
    const before = zoom;
    zoom = Math.max(0.02, Math.min(4, z));
    if (!svg) return;
    const v = view.getBoundingClientRect();
    const ax = cx ?? v.left + v.width / 2, ay = cy ?? v.top + v.height / 2;
    const r = svg.getBoundingClientRect();
    const px = (ax - r.left) / before, py = (ay - r.top) / before; // the point under (ax, ay), in the drawing's units
    apply();
    const n = svg.getBoundingClientRect();
    view.scrollLeft += n.left + px * zoom - ax;
    view.scrollTop += n.top + py * zoom - ay;
    // Zooming in past 1.5 asks for the detail folded nearest the middle.
    if (before < 1.5 && zoom >= 1.5) {
      const mx = v.left + v.width / 2, my = v.top + v.height / 2;
      let best = null, dist = Infinity;
      view.querySelectorAll("[data-focus]").forEach((m) => {
        const r = m.getBoundingClientRect();
        const d = Math.hypot(r.left - mx, r.top - my);
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

  // fitZoom is the zoom at which the whole drawing fits the view, both ways.
  function fitZoom() {
    const svg = svgOf();
    if (!svg) return 1;
    const [w, h] = size(svg);
    return Math.min((view.clientWidth - 8) / w, (view.clientHeight - 8) / h, 3);
  }

  // fit zooms so the whole drawing fits the view (no less than floor), centred.
  function fit(floor) {
    const z = Math.max(fitZoom(), floor || 0);
    zoom = Math.max(0.02, Math.min(4, z));
    apply();
    view.scrollLeft = (view.scrollWidth - view.clientWidth) / 2;
    view.scrollTop = 0;
  }

  function toLeaf() {
    const leaf = view.querySelector(".mk.leaf") || view.querySelector(".seg.sel");
    if (leaf) leaf.scrollIntoView({ block: "center", inline: "center" });
  }

  // say names the selected run below the map (for the keyboard, and read
  // out by screen readers).
  function say() {
    const g = view.querySelector(".seg.sel");
    status.textContent = g ? (g.querySelector("title")?.textContent || "").replace(/\n/g, " — ") : "";
  }

  // pick selects run (or mark) el's entry, as a click does.
  function pick(el, shift) {
    const ref = el.dataset.entry;
    if (shift && selected()) {
      location.href = pane.dataset.mapSrc.replace(/\/map$/, "/compare") + "?a=" + encodeURIComponent(selected()) + "&b=" + encodeURIComponent(ref);
      return;
    }
    view.querySelectorAll(".seg.sel").forEach((s) => s.classList.remove("sel"));
    el.closest(".seg")?.classList.add("sel");
    say();
    document.dispatchEvent(new CustomEvent("piweb:select", { detail: { ref } }));
  }

  // step moves the selection to the run up (its parent), down (a child:
  // the one on the path pi resumes first), or to a sibling (left, right).
  function step(dir) {
    const runs = Array.from(view.querySelectorAll("g.seg"));
    if (!runs.length) return;
    const cur = view.querySelector("g.seg.sel") || view.querySelector(".mk.leaf")?.closest("g.seg") || runs[0];
    let next = null;
    if (dir === "up") next = runs.find((g) => g.dataset.entry === cur.dataset.up);
    else if (dir === "down") {
      const kids = runs.filter((g) => g.dataset.up === cur.dataset.entry);
      next = kids.find((g) => g.classList.contains("path")) || kids[0];
    } else {
      const sibs = runs.filter((g) => g.dataset.up === cur.dataset.up);
      next = sibs[sibs.indexOf(cur) + (dir === "left" ? -1 : 1)];
    }
    if (!next && !view.querySelector("g.seg.sel")) next = cur; // the first key press selects where the map stands
    if (!next) return;
    pick(next, false);
    const b = next.getBoundingClientRect(), v = view.getBoundingClientRect();
    if (b.bottom < v.top || b.top > v.bottom || b.right < v.left || b.left > v.right) next.scrollIntoView({ block: "nearest", inline: "nearest" });
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
      fitted = false;
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
    // A run reads its last entry; a mark inside a run (a label,
    // compaction, summary, search hit) names its own entry.
    const el = e.target.closest("[data-entry]");
    if (el) pick(el, e.shiftKey);
  });
  const keys = { ArrowUp: "up", ArrowDown: "down", ArrowLeft: "left", ArrowRight: "right" };
  pane.addEventListener("keydown", (e) => {
    if (e.target.closest("input,textarea,select") || e.ctrlKey || e.altKey || e.metaKey) return;
    const k = e.key;
    if (k === "+" || k === "=") setZoom(zoom * 1.25);
    else if (k === "-" || k === "−" || k === "_") setZoom(zoom / 1.25);
    else if (k === "0") fit();
    else if (k === "l" || k === "L") toLeaf();
    else if (keys[k]) step(keys[k]);
    else if (k === "Escape") show(false);
    else return; // Enter and Space press a focused button
    e.preventDefault();
    e.stopPropagation();
  });
  // A click or a drag on the map gives it the keys.
  view.addEventListener("pointerdown", () => {
    if (document.activeElement !== pane) pane.focus({ preventScroll: true });
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
  if (!pane.hidden) {
    load();
    pane.focus({ preventScroll: true }); // the map opened with the page takes the keys
  }
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
