// The usage page: shown in the browser's time zone, a picked date makes
// the range "from–to", and the page draws itself again as pi appends (its
// live stream says when), at most once a second, keeping open tables open.
"use strict";

(function () {
  const main = document.getElementById("usage-main");
  if (!main) return;
  const url = new URL(location.href);
  if (!url.searchParams.get("tz")) {
    const tz = Intl.DateTimeFormat().resolvedOptions().timeZone;
    if (tz) {
      url.searchParams.set("tz", tz);
      location.replace(url);
      return;
    }
  }

  // Before htmx reads the form (capture runs first): dates mean a custom range.
  document.addEventListener("change", (e) => {
    if (e.target.matches && e.target.matches("#usage-since, #usage-until")) {
      const r = document.getElementById("usage-range");
      if (r) r.value = "custom";
    }
  }, true);

  // Open tables stay open across redraws.
  let open = [];
  document.body.addEventListener("htmx:beforeSwap", (e) => {
    if (e.detail.target && e.detail.target.id === "usage-body") {
      open = Array.from(document.querySelectorAll("#usage-body details[open]")).map((d) => d.id);
    }
  });
  document.body.addEventListener("htmx:afterSwap", () => {
    for (const id of open) {
      const d = document.getElementById(id);
      if (d) d.open = true;
    }
  });

  let busy = false;
  let again = false;
  function redraw() {
    if (busy) {
      again = true;
      return;
    }
    busy = true;
    htmx.ajax("GET", location.pathname + location.search, { target: "#usage-body", swap: "outerHTML" }).finally(() => {
      setTimeout(() => {
        busy = false;
        if (again) {
          again = false;
          redraw();
        }
      }, 1000);
    });
  }

  // The live stream; a page hidden for 3 s lets go of it (browsers allow few
  // connections per host) and draws itself again when shown.
  let es = null;
  let timer = 0;
  function connect() {
    if (es) es.close();
    es = new EventSource(main.dataset.events);
    es.addEventListener("changed", redraw);
    // Open means the server follows the sessions (it subscribes before it answers).
    es.addEventListener("open", () => (main.dataset.live = "open"));
    es.addEventListener("error", () => delete main.dataset.live);
  }
  document.addEventListener("visibilitychange", () => {
    clearTimeout(timer);
    if (document.hidden) {
      timer = setTimeout(() => {
        if (es) es.close();
        es = null;
        delete main.dataset.live;
      }, 3000);
    } else if (!es) {
      connect();
      redraw();
    }
  });
  connect();
})();
