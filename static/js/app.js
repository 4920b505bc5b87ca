// piweb's page behaviour: the sessions list's live rows, and the session
// tree's selection, keyboard (pi's /tree keys), paging and live updates.
// Plain DOM code; htmx does the declarative parts (search, tabs, pages).
"use strict";

(function () {
  const $ = (sel, root) => (root || document).querySelector(sel);
  const $$ = (sel, root) => Array.from((root || document).querySelectorAll(sel));

  // fragment parses server HTML into a DocumentFragment.
  function fragment(html) {
    const t = document.createElement("template");
    t.innerHTML = html;
    return t.content;
  }

  // replaceById swaps the element of the same id as the fragment's root.
  function replaceById(html) {
    const el = fragment(html).firstElementChild;
    const old = el && el.id && document.getElementById(el.id);
    if (!old) return;
    if (old.tagName === "DETAILS" && old.open) el.open = true; // an open popover stays open as counts change
    old.replaceWith(el);
  }

  // liveStream holds a page's EventSource: connect() (re)opens it with
  // open(). Browsers allow six connections per host over HTTP/1.1, so a page
  // hidden for 3 s closes its stream, and calls resume to catch up when shown.
  function liveStream(open, resume) {
    let es = null;
    let timer = 0;
    const close = () => {
      if (es) es.close();
      es = null;
    };
    document.addEventListener("visibilitychange", () => {
      clearTimeout(timer);
      if (document.hidden) timer = setTimeout(close, 3000);
      else if (!es) resume();
    });
    return {
      connect() {
        close();
        es = open();
      },
    };
  }

  document.addEventListener("DOMContentLoaded", () => {
    if ($("#list-main")) listPage();
    if ($("#tree")) sessionPage();
  });

  // ---------------------------------------------------------------------------
  // Sessions list: live rows.

  function listPage() {
    // Shown again after a hidden while, the list refetches its rows (what
    // changed meanwhile), which reconnects.
    const live = liveStream(() => {
      const list = $("#sessions");
      if (!list) return null;
      const p = new URLSearchParams();
      if (list.dataset.q) p.set("q", list.dataset.q);
      if (list.dataset.sort) p.set("sort", list.dataset.sort);
      if (list.dataset.machine) p.set("machine", list.dataset.machine);
      const es = new EventSource("/events?" + p);
      es.addEventListener("row", (e) => liveRow(e.data, list.dataset.sort || "activity"));
      es.addEventListener("gone", (e) => dropRow(e.data));
      es.addEventListener("group", (e) => replaceById(e.data)); // a project's totals, as its rows changed
      return es;
    }, refetch);
    const connect = live.connect;
    function refetch() {
      const list = $("#sessions");
      const p = new URLSearchParams({ q: list.dataset.q || "", sort: list.dataset.sort || "", machine: list.dataset.machine || "" });
      htmx.ajax("GET", "/?" + p, { target: "#sessions", swap: "outerHTML" });
    }
    function liveRow(html, sort) {
      const row = fragment(html).firstElementChild;
      if (!row) return;
      const group = document.getElementById(row.dataset.group);
      if (!group) return refetch();
      const old = document.getElementById(row.id);
      const body = $("tbody", group);
      if (sort === "activity" || !old) {
        if (old) old.remove();
        if (sort === "activity") {
          body.prepend(row);
          const first = $("#sessions .project");
          if (first && first !== group) first.before(group);
        } else {
          body.append(row);
        }
      } else {
        old.replaceWith(row);
      }
      row.classList.add("flash");
    }
    function dropRow(id) {
      const row = document.getElementById(id);
      if (!row) return;
      const group = row.closest(".project");
      row.remove();
      if (group && !$("tbody tr", group)) group.remove();
    }
    document.body.addEventListener("htmx:afterSettle", (e) => {
      if (e.target && e.target.id === "sessions") connect();
    });
    connect();
  }

  // ---------------------------------------------------------------------------
  // Session page: the tree.

  function sessionPage() {
    const tree = $("#tree");
    const search = $("#tree-q");
    const conv = $("#conv");
    const sid = tree.dataset.session;
    const base = "/s/" + encodeURIComponent(sid);
    const S = {
      filter: tree.dataset.filter || "default",
      q: tree.dataset.q || "",
      folds: new Set((tree.dataset.folds || "").split(",").filter(Boolean)),
      open: new Set((tree.dataset.open || "").split(",").filter(Boolean)), // runs of settings rows drawn row by row
      leaf: tree.dataset.leaf || "", // "" follows the session's leaf
      target: tree.dataset.target || "",
      version: tree.dataset.version || "",
    };
    const filters = ["default", "no-tools", "user-only", "labeled-only", "all"];
    let convTimer = 0;
    let searchTimer = 0;
    const loading = { before: false, after: false };

    function params(extra) {
      const p = new URLSearchParams();
      if (S.filter !== "default") p.set("filter", S.filter);
      if (S.q) p.set("q", S.q);
      if (S.folds.size) p.set("fold", Array.from(S.folds).sort().join(","));
      if (S.open.size) p.set("open", Array.from(S.open).sort().join(","));
      if (S.leaf) p.set("leaf", S.leaf);
      for (const [k, v] of Object.entries(extra || {})) if (v !== "" && v != null) p.set(k, v);
      return p;
    }
    // tabView is the conversation pane's tab shown ("context", "files"), "" for the conversation.
    function tabView() {
      const tab = $(".tab.on");
      const m = tab && /[?&]view=(context|files)\b/.exec(tab.getAttribute("href") || "");
      return m ? m[1] : "";
    }
    function syncURL() {
      const map = $("#map-pane");
      const p = params({ target: S.target, view: tabView() || (map && !map.hidden ? "map" : "") }); // one view at a time in the address
      history.replaceState(null, "", base + (p.toString() ? "?" + p : ""));
    }
    const rows = () => $$(".row", tree); // a closed run of settings rows is one row
    const rowOf = (pos) => document.getElementById("n" + pos);
    const selected = () => $(".row.sel", tree);

    // markPath highlights the selected row's path to the root among the loaded rows.
    function markPath() {
      $$(".row.onpath", tree).forEach((r) => r.classList.remove("onpath"));
      let r = selected();
      tree.classList.toggle("has-sel", !!r);
      while (r) {
        r.classList.add("onpath");
        const vp = r.dataset.vp;
        r = vp && vp !== "-1" ? rowOf(vp) : null;
      }
    }

    function select(row, opts) {
      if (!row) return;
      const o = Object.assign({ load: true, scroll: true, delay: 0 }, opts);
      const prev = selected();
      if (prev) {
        prev.classList.remove("sel");
        prev.removeAttribute("aria-selected");
      }
      row.classList.add("sel");
      row.setAttribute("aria-selected", "true");
      S.target = row.dataset.ref;
      markPath();
      if (o.scroll) row.scrollIntoView({ block: "nearest" });
      pan(row);
      syncURL();
      if (o.load) loadConversation(S.target, o.delay);
    }

    // pan shifts the rows sideways, as pi's tree does, when the selected row's
    // text starts too far right to read; otherwise the rows start at the left edge.
    function pan(row) {
      const anchor = $(".mk:not(:empty), .lbl:not(:empty), .lead:not(:empty), .txt", row);
      const pre = $(".pre", row);
      if (!anchor || !pre) return;
      const ch = pre.textContent.length ? pre.getBoundingClientRect().width / pre.textContent.length : 8;
      const x = anchor.getBoundingClientRect().left - pre.getBoundingClientRect().left; // the same at any pan
      const view = tree.clientWidth - 2 * ch - 16; // less the cursor column and padding
      const visible = Math.min(20, Math.max(4, Math.floor(view / ch / 3))) * ch;
      const context = Math.min(12, Math.max(2, Math.floor(view / ch / 4))) * ch;
      tree.style.setProperty("--pan", (x > view - visible ? Math.round(x - context) : 0) + "px");
    }

    function loadConversation(ref, delay) {
      clearTimeout(convTimer);
      convTimer = setTimeout(() => {
        const p = params({ e: ref, view: tabView() });
        htmx.ajax("GET", base + "/entry?" + p, { target: "#conv", swap: "innerHTML" });
      }, delay || 0);
    }

    // markWords marks the tree search's words in the conversation, as a find
    // in the page would: those of the address's q (a search hit opened here)
    // too, or of data-hl when q could not filter the tree.
    function markWords() {
      $$("mark.q-hit", conv).forEach((m) => {
        const p = m.parentNode;
        m.replaceWith(m.textContent);
        p.normalize();
      });
      const words = (S.q || tree.dataset.hl || "").toLowerCase().split(/\s+/).filter(Boolean);
      const root = $("#msgs", conv);
      if (!words.length || !root) return;
      const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT, {
        acceptNode: (n) => (n.parentElement.closest("mark, button, textarea") ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT),
      });
      const nodes = [];
      for (let n = walker.nextNode(); n; n = walker.nextNode()) nodes.push(n);
      let left = 500; // marks at most: a page of long tool output can hold thousands
      for (const n of nodes) {
        const text = n.data;
        const low = text.toLowerCase();
        if (left <= 0) break;
        if (low.length !== text.length) continue; // a letter whose lower case is longer: offsets would not match
        const hits = [];
        for (const w of words) for (let i = low.indexOf(w); i >= 0; i = low.indexOf(w, i + w.length)) hits.push([i, i + w.length]);
        if (!hits.length) continue;
        hits.sort((a, b) => a[0] - b[0]);
        const frag = document.createDocumentFragment();
        let at = 0;
        for (const [a, b] of hits) {
          if (a < at || left <= 0) continue;
          const m = document.createElement("mark");
          m.className = "q-hit";
          m.textContent = text.slice(a, b);
          frag.append(text.slice(at, a), m);
          at = b;
          left--;
        }
        frag.append(text.slice(at));
        n.replaceWith(frag);
      }
    }

    function scrollToTarget() {
      const t = $(".item.target, .tool-result.target", conv);
      if (t) t.scrollIntoView({ block: "start" });
    }

    function status(total) {
      if (total != null) tree.dataset.total = total;
      const n = Number(tree.dataset.total || rows().length);
      let tag = S.filter === "default" ? "" : " [" + S.filter + "]";
      if (tree.classList.contains("show-lt")) tag += " [+label time]";
      const c = $("#tree-count");
      // Viewing another path: name the row marked "← viewing" (the leaf asked
      // for may be hidden); "← active" stays where pi resumes.
      const viewing = S.leaf && ($(".row.leaf", tree)?.dataset.ref || S.leaf);
      if (c) c.textContent = n + (n === 1 ? " row" : " rows") + tag + (viewing ? " · viewing the path to " + viewing : "");
    }

    // note shows a short message in the tree's status line for a few seconds.
    let noteTimer = 0;
    function note(text, failed) {
      const n = $("#tree-note");
      if (!n) return;
      n.textContent = text;
      n.classList.toggle("fail", !!failed);
      clearTimeout(noteTimer);
      noteTimer = setTimeout(() => (n.textContent = ""), 4000);
    }

    // copyEntry puts what pi's ctrl+x copies for the selected entry (its
    // text, command or summary) on the clipboard.
    async function copyEntry() {
      const row = selected();
      if (!row) return;
      let nothing = false;
      const text = fetch(base + "/copy?e=" + encodeURIComponent(row.dataset.ref)).then((res) => {
        if (res.status === 204) nothing = true;
        if (!res.ok || nothing) throw new Error("HTTP " + res.status);
        return res.text();
      });
      try {
        if (!navigator.clipboard) throw new Error("no clipboard here (it needs http://localhost or https)");
        if (window.ClipboardItem && navigator.clipboard.write) {
          // The item is created now, in the key press, and filled when the text arrives.
          const blob = text.then((t) => new Blob([t], { type: "text/plain" }));
          await navigator.clipboard.write([new ClipboardItem({ "text/plain": blob })]);
        } else {
          await navigator.clipboard.writeText(await text);
        }
        note("Copied to the clipboard");
      } catch (err) {
        text.catch(() => {});
        if (nothing) note("Nothing to copy");
        else note("Could not copy: " + err.message, true);
      }
    }

    // reloadTree fetches the window of rows around the selection for the current state.
    async function reloadTree() {
      const res = await fetch(base + "/rows?" + params({ target: S.target }), { headers: { "HX-Request": "true" } });
      const html = await res.text();
      if (!res.ok) {
        conv.innerHTML = html; // the friendly error fragment
        return;
      }
      tree.innerHTML = html;
      tree.dataset.first = res.headers.get("X-Tree-First") || "0"; // the row the window starts at (the minimap places the selection by it)
      S.version = res.headers.get("X-Tree-Version") || S.version;
      S.open = new Set(decodeURIComponent(res.headers.get("X-Tree-Open") || "").split(",").filter(Boolean)); // with a run opened for the selection
      status(res.headers.get("X-Tree-Total"));
      const row = rowOf(res.headers.get("X-Tree-Selected"));
      const gone = res.headers.get("X-Tree-Note");
      if (gone) {
        // The entry the page named is no longer in the file: the rows are
        // around the leaf now, and so is the conversation.
        note(decodeURIComponent(gone));
        S.leaf = "";
        if (row) loadConversation(row.dataset.ref);
      }
      if (row) {
        row.classList.add("sel");
        row.scrollIntoView({ block: "center" });
        pan(row);
        S.target = row.dataset.ref;
      }
      markPath();
      observe();
      syncURL();
      connect();
      // The map (map.js) marks the search's hits: it reads them from here.
      tree.dataset.q = S.q;
      tree.dataset.filter = S.filter;
      document.dispatchEvent(new CustomEvent("piweb:changed"));
    }

    // loadMore fetches the page of rows before or after the loaded ones.
    async function loadMore(dir) {
      const btn = $('.more[data-more="' + dir + '"]', tree);
      if (!btn || loading[dir]) return;
      const all = $$(".row", tree); // folded rows too: the page goes on after the last row it holds
      if (!all.length) return;
      loading[dir] = true;
      try {
        const anchor = dir === "after" ? all[all.length - 1] : all[0];
        const res = await fetch(base + "/rows?" + params({ [dir]: anchor.dataset.p }), { headers: { "HX-Request": "true" } });
        if (res.status === 409) return reloadTree();
        if (!res.ok) return;
        const frag = fragment(await res.text());
        const keep = anchor.getBoundingClientRect().top;
        btn.replaceWith(frag);
        if (dir === "before") {
          tree.scrollTop += anchor.getBoundingClientRect().top - keep;
          tree.dataset.first = res.headers.get("X-Tree-First") || "0"; // the window starts earlier now
        }
        markPath();
        observe();
      } finally {
        loading[dir] = false;
      }
    }

    const io = new IntersectionObserver(
      (entries) => entries.forEach((e) => e.isIntersecting && loadMore(e.target.dataset.more)),
      { root: tree, rootMargin: "600px 0px" }
    );
    function observe() {
      io.disconnect();
      $$(".more", tree).forEach((b) => io.observe(b));
    }

    // --- pi's tree navigation ------------------------------------------------

    function move(delta) {
      const all = rows();
      if (!all.length) return;
      const cur = selected();
      let i = cur ? all.indexOf(cur) + delta : 0;
      if (i < 0) {
        if ($('.more[data-more="before"]', tree)) return loadMore("before").then(() => move(delta));
        i = all.length - 1; // pi wraps around
      } else if (i >= all.length) {
        if ($('.more[data-more="after"]', tree)) return loadMore("after").then(() => move(delta));
        i = 0;
      }
      select(all[i], { delay: 150 });
    }

    function page(dir) {
      const all = rows();
      const cur = selected();
      if (!all.length || !cur) return move(dir);
      const per = Math.max(1, Math.floor(tree.clientHeight / cur.offsetHeight) - 1);
      const i = Math.max(0, Math.min(all.length - 1, all.indexOf(cur) + dir * per));
      select(all[i], { delay: 150 });
      if ((i === 0 && dir < 0) || (i === all.length - 1 && dir > 0)) loadMore(dir < 0 ? "before" : "after");
    }

    const parentRow = (r) => (r.dataset.vp !== "-1" ? rowOf(r.dataset.vp) : null);
    const kids = (r) => Number(r.dataset.nc || 0);

    // foldOrUp is pi's ctrl+left: fold a foldable row, else go up to the segment start.
    function foldOrUp() {
      const cur = selected();
      if (!cur) return;
      if (cur.hasAttribute("data-foldable") && !cur.hasAttribute("data-folded") && !cur.dataset.ref.startsWith("~")) {
        return setFold(cur.dataset.ref, true);
      }
      let r = cur;
      for (;;) {
        const p = parentRow(r);
        if (!p || (kids(p) > 1 && r !== cur)) return select(r, { delay: 150 });
        r = p;
      }
    }

    // unfoldOrDown is pi's ctrl+right: unfold a folded row, else go down to the next branch.
    function unfoldOrDown() {
      const cur = selected();
      if (!cur) return;
      if (cur.hasAttribute("data-folded")) return setFold(cur.dataset.ref, false);
      let r = cur;
      for (;;) {
        const n = kids(r);
        let next = r.nextElementSibling;
        while (next && !next.classList.contains("row") && !next.classList.contains("more")) next = next.nextElementSibling; // a hint between rows
        const child = next && next.classList.contains("row") && next.dataset.vp === r.dataset.p ? next : null;
        if (n === 0 || !child) return select(r, { delay: 150 });
        if (n > 1) return select(child, { delay: 150 });
        r = child;
      }
    }

    function setFold(ref, on) {
      if (on) S.folds.add(ref);
      else S.folds.delete(ref);
      reloadTree();
    }

    function setFilter(f) {
      S.filter = f;
      S.folds.clear(); // pi clears folds when the filter changes
      $$(".filters .filter").forEach((b) => {
        b.classList.toggle("on", b.dataset.filter === f);
        b.setAttribute("aria-pressed", String(b.dataset.filter === f));
      });
      reloadTree();
    }

    function toggleFilter(f) {
      setFilter(S.filter === f ? "default" : f);
    }

    function setSearch(q, now) {
      search.value = q;
      clearTimeout(searchTimer);
      searchTimer = setTimeout(() => {
        if (q === S.q) return;
        S.q = q;
        tree.dataset.hl = ""; // the words typed now are the ones to mark
        S.folds.clear();
        reloadTree();
        markWords();
      }, now ? 0 : 250);
    }

    // makeActive is pi's shift+V here: view the path to the selected entry,
    // and say so at once in the conversation (which path, where pi resumes).
    function makeActive() {
      const cur = selected();
      if (!cur) return;
      S.leaf = cur.dataset.ref;
      reloadTree().then(() => loadConversation(S.target));
    }

    // Compare: "compare with…" (or shift+C) takes the selected entry as A;
    // the next row clicked, or Enter on a row, is B (Esc cancels).
    // Shift+click compares the selected row with the row clicked at once.
    const compareURL = (a, b) => base + "/compare?a=" + encodeURIComponent(a) + "&b=" + encodeURIComponent(b);
    function pickCompare(a) {
      if (!a) return;
      document.body.dataset.comparePick = a;
      const sw = $('.pane-switch [data-pane="tree"]');
      if (sw && getComputedStyle(sw.parentElement).display !== "none") sw.click();
      const n = $("#tree-note");
      const say = "Compare " + a + " with… now click the entry to compare it with, or move to it and press Enter (Esc cancels).";
      if (n) {
        clearTimeout(noteTimer);
        n.classList.remove("fail");
        n.textContent = say;
      }
      // The same words under the selected row, where the eyes are.
      $$(".pick-hint", tree).forEach((h) => h.remove());
      const row = $$(".row", tree).find((r) => r.dataset.ref === a);
      if (row) {
        const hint = document.createElement("div");
        hint.className = "pick-hint";
        hint.setAttribute("role", "status");
        const b = document.createElement("strong");
        b.textContent = "A: " + a + ".";
        hint.append(b, " Now click the entry to compare it with, or move to it and press Enter (Esc cancels).");
        row.after(hint);
        hint.scrollIntoView({ block: "nearest" });
      }
      $$("[data-compare-pick]", conv).forEach((btn) => (btn.textContent = "pick B in the tree…"));
      tree.focus({ preventScroll: true });
    }
    function cancelPick() {
      delete document.body.dataset.comparePick;
      const n = $("#tree-note");
      if (n) n.textContent = "";
      $$(".pick-hint", tree).forEach((h) => h.remove());
      $$("[data-compare-pick]", conv).forEach((btn) => (btn.textContent = "compare with…"));
    }
    function finishPick(row) {
      const a = document.body.dataset.comparePick;
      cancelPick();
      location.href = compareURL(a, row.dataset.ref);
    }

    const filterKeys = { d: "default", t: "no-tools", u: "user-only", l: "labeled-only", a: "all" };

    function onKey(e) {
      const inSearch = e.target === search;
      const other = !inSearch && e.target !== tree && e.target !== document.body && e.target.closest("input,textarea,select,button,a,summary,.conv-pane");
      if (other) return;
      const mod = e.ctrlKey || e.altKey;
      const k = e.key;
      const lower = k.length === 1 ? k.toLowerCase() : k;
      if (document.body.dataset.comparePick && (k === "Escape" || k === "Enter")) {
        e.preventDefault();
        const cur = selected();
        if (k === "Escape" || !cur) cancelPick();
        else finishPick(cur);
        return;
      }
      let handled = true;
      if (k === "C" && e.shiftKey && !mod && !e.metaKey && !inSearch) {
        const cur = selected();
        if (cur) pickCompare(cur.dataset.ref);
      } else if (mod && !e.metaKey && filterKeys[lower] && !e.shiftKey) {
        lower === "d" ? setFilter("default") : toggleFilter(filterKeys[lower]);
      } else if (e.ctrlKey && !e.altKey && !e.metaKey && lower === "x" && !(inSearch && search.selectionStart !== search.selectionEnd)) {
        copyEntry(); // pi's ctrl+x; a selection in the search box is cut as usual
      } else if (k === "T" && e.shiftKey && !mod && !e.metaKey && !inSearch) {
        tree.classList.toggle("show-lt"); // pi's shift+T: when each label was set
        status();
      } else if (e.ctrlKey && lower === "o") {
        const i = filters.indexOf(S.filter);
        setFilter(filters[(i + (e.shiftKey ? filters.length - 1 : 1)) % filters.length]);
      } else if (k === "ArrowUp" && !mod) move(-1);
      else if (k === "ArrowDown" && !mod) move(1);
      else if (k === "ArrowLeft" && mod) foldOrUp();
      else if (k === "ArrowRight" && mod) unfoldOrDown();
      else if ((k === "ArrowLeft" && !inSearch) || k === "PageUp") page(-1);
      else if ((k === "ArrowRight" && !inSearch) || k === "PageDown") page(1);
      else if (k === "V" && e.shiftKey && !mod && !e.metaKey && !inSearch) makeActive(); // view this path (Enter rewinds: actions.js)
      else if (k === "Escape") {
        if (search.value) setSearch("", true);
        else if (S.leaf) {
          S.leaf = ""; // follow the session's own leaf again
          reloadTree().then(() => loadConversation(S.target));
        } else handled = false;
      } else if (!inSearch && k === "Backspace") {
        if (search.value) setSearch(search.value.slice(0, -1));
      } else if (!inSearch && k.length === 1 && !e.ctrlKey && !e.altKey && !e.metaKey) {
        setSearch(search.value + k);
      } else handled = false;
      if (handled) e.preventDefault();
    }

    document.addEventListener("keydown", onKey);
    search.addEventListener("input", () => setSearch(search.value));

    tree.addEventListener("click", (e) => {
      const fold = e.target.closest("[data-noise-toggle]");
      if (fold) {
        // A run of settings rows: drawn as one row, or row by row (the server pages it either way).
        const ref = fold.dataset.noiseToggle;
        if (S.open.has(ref)) S.open.delete(ref);
        else S.open.add(ref);
        S.target = fold.closest(".row").dataset.ref;
        reloadTree();
        return;
      }
      const more = e.target.closest(".more");
      if (more) return loadMore(more.dataset.more);
      const row = e.target.closest(".row");
      if (!row) return;
      if (e.target.closest(".fold") && !row.dataset.ref.startsWith("~")) {
        if (row.hasAttribute("data-folded")) return setFold(row.dataset.ref, false);
        if (row.hasAttribute("data-foldable")) return setFold(row.dataset.ref, true);
      }
      if (document.body.dataset.comparePick) return finishPick(row);
      const cur = selected();
      if (e.shiftKey && cur && cur !== row) return (location.href = compareURL(cur.dataset.ref, row.dataset.ref));
      select(row, { scroll: false });
      tree.focus({ preventScroll: true });
    });

    $$(".filters .filter").forEach((b) =>
      b.addEventListener("click", () => {
        setFilter(b.dataset.filter);
        tree.focus({ preventScroll: true });
      })
    );

    // Links in the conversation to an entry select it in the tree.
    conv.addEventListener("click", (e) => {
      const pick = e.target.closest("[data-compare-pick]");
      const inner = $("#conv-inner", conv);
      if (pick && inner) return pickCompare(inner.dataset.ref);
      const a = e.target.closest("a[data-jump]");
      if (!a) return;
      e.preventDefault();
      const row = rowOf(a.dataset.jump);
      if (row) return select(row, { scroll: true });
      S.target = a.dataset.ref || a.textContent.trim();
      reloadTree().then(() => loadConversation(S.target));
    });

    // The minimap (map.js) asks for the rows around a row anywhere in the tree.
    document.addEventListener("piweb:row", async (e) => {
      const k = e.detail && e.detail.row;
      if (typeof k !== "number") return;
      const res = await fetch(base + "/rows?" + params({ row: k }), { headers: { "HX-Request": "true" } });
      if (!res.ok) return;
      tree.innerHTML = await res.text();
      status(res.headers.get("X-Tree-Total"));
      tree.dataset.first = res.headers.get("X-Tree-First") || "0";
      const row = rowOf(res.headers.get("X-Tree-Selected")); // row k's, or its closed run's first
      if (row) select(row, { scroll: true });
      markPath();
      observe();
    });

    // The map (map.js) asks to select a segment's entry.
    document.addEventListener("piweb:select", (e) => {
      const ref = e.detail && e.detail.ref;
      if (!ref) return;
      const row = $$("#tree .row").find((r) => r.dataset.ref === ref);
      if (row) return select(row, { scroll: true });
      S.target = ref;
      reloadTree().then(() => loadConversation(S.target));
    });

    document.body.addEventListener("htmx:afterSwap", (e) => {
      if (conv.contains(e.target)) markWords(); // a conversation, or an earlier page of it
      if (e.target === conv) document.dispatchEvent(new CustomEvent("piweb:changed"));
      if (e.target !== conv) return;
      scrollToTarget();
      const inner = $("#conv-inner", conv);
      const src = (e.detail.requestConfig && e.detail.requestConfig.elt) || e.detail.elt;
      if (inner && inner.dataset.stale) {
        // The rows named an entry the file no longer holds: reload them around the leaf.
        note(inner.dataset.stale);
        S.target = inner.dataset.ref;
        S.leaf = "";
        reloadTree();
      } else if (inner && src && src.closest && src.closest("[data-follow]") && inner.dataset.ref !== S.target) {
        // The depth box selected the entry at a depth: the tree follows.
        const row = $$(".row", tree).find((r) => r.dataset.ref === inner.dataset.ref);
        if (row) select(row, { load: false, scroll: true });
        else {
          S.target = inner.dataset.ref;
          reloadTree();
        }
      } else syncURL(); // the tab shown belongs in the address too
    });

    // --- live updates --------------------------------------------------------

    // Shown again after a hidden while, the page reconnects with its version
    // and the server answers "reset" (with fresh counts) if the session moved.
    const live = liveStream(
      () => {
        const es = new EventSource(base + "/events?" + params({ v: S.version }));
        es.addEventListener("hello", (e) => (S.version = e.data));
        es.addEventListener("reset", (e) => {
          S.version = e.data;
          reloadTree();
          document.dispatchEvent(new CustomEvent("piweb:changed"));
        });
        es.addEventListener("delta", (e) => {
          applyDelta(e.data);
          document.dispatchEvent(new CustomEvent("piweb:changed"));
        });
        es.addEventListener("stats", (e) => replaceById(e.data));
        es.addEventListener("gone", () => {
          const c = $("#tree-count");
          if (c) c.innerHTML = '<span class="live-gone">This session is no longer on disk.</span>';
        });
        return es;
      },
      () => live.connect()
    );
    const connect = live.connect;

    function applyDelta(html) {
      const d = fragment(html).querySelector("[data-delta]");
      if (!d) return;
      const sel = selected();
      const selPos = sel ? sel.dataset.p : null;
      (d.dataset.remove || "").split(" ").filter(Boolean).forEach((p) => {
        const r = rowOf(p);
        if (r) r.remove();
      });
      Array.from($("[data-replace]", d).children).forEach((r) => {
        const old = document.getElementById(r.id);
        if (old) old.replaceWith(r);
      });
      $$("[data-insert]", d).forEach((run) => {
        const fresh = Array.from(run.children);
        fresh.forEach((r) => {
          const dup = document.getElementById(r.id);
          if (dup) dup.remove();
          r.classList.add("new");
        });
        if (run.dataset.after === "-1") {
          if (!$('.more[data-more="before"]', tree)) tree.prepend(...fresh);
          return;
        }
        const anchor = rowOf(run.dataset.after);
        if (anchor) anchor.after(...fresh);
      });
      const empty = $("[data-empty]", tree);
      if (empty && rows().length) empty.remove();
      // Keep the selection; follow the leaf when it was selected and the page follows the session.
      let next = selPos != null ? rowOf(selPos) : null;
      if (!S.leaf && selPos === d.dataset.oldLeaf && d.dataset.newLeaf !== d.dataset.oldLeaf && rowOf(d.dataset.newLeaf)) {
        next = rowOf(d.dataset.newLeaf);
        select(next, { load: true, scroll: true });
      } else if (next) {
        next.classList.add("sel");
        markPath();
      }
      status(d.dataset.total);
    }

    // --- start ----------------------------------------------------------------
    const first = rowOf(tree.dataset.selected);
    if (first) {
      first.classList.add("sel");
      first.setAttribute("aria-selected", "true");
      first.scrollIntoView({ block: "center" });
      pan(first);
    }
    markPath();
    observe();
    status();
    markWords();
    scrollToTarget();
    tree.focus({ preventScroll: true });
    connect();
  }
})();
