// piweb's write actions on the session page (views/actions.templ): the
// forms post with htmx and re-render their panel; this file adds pi's
// shift+L key for the label field, copy buttons, and the outcome cards
// (#act-outcomes), which stay until dismissed.
"use strict";

(function () {
  const panel = () => document.getElementById("entry-actions");
  const selectedRef = () => {
    const row = document.querySelector("#tree .row.sel");
    return row ? row.dataset.ref : null;
  };

  // openAct opens one form of the panel (which must be the selected
  // entry's) and focuses its first field, or its button when it has none.
  function openAct(name) {
    const p = panel();
    const d = p && p.querySelector('details[data-act="' + name + '"]');
    if (!d) return false;
    d.open = true;
    const field = d.querySelector('input[type="text"], input:not([type]), input[name="label"]');
    const target = name === "rewind" ? d.querySelector('button[type="submit"]') : field || d.querySelector('button[type="submit"]');
    if (target) {
      target.focus();
      if (target.select) target.select();
    }
    d.scrollIntoView({ block: "nearest" });
    return true;
  }

  // openFor opens form name for the selected row's entry, loading its panel first when the
  // conversation shows another entry (still loading, or the hidden leaf the page opened at).
  function openFor(name) {
    const p = panel();
    const ref = selectedRef();
    if (p && ref && p.dataset.ref === ref) return openAct(name);
    pending = name;
    const row = document.querySelector("#tree .row.sel");
    if (row) row.click();
  }

  let pending = ""; // the form asked for (label, rewind) before the selected entry's panel arrived

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
      openFor("label");
    },
    true
  );

  // Enter, as in pi's /tree, goes to where pi resumes: it opens "Rewind
  // here" for the selected entry with its button focused, so a second Enter
  // rewinds (Esc closes it). Viewing another path is shift+V (app.js). As
  // with shift+L, the key down is taken and the form opens on key up, so the
  // same key press cannot also press the button it focuses. A second Enter
  // within 300 ms of the first (a double press, a held key) is not taken as
  // the confirmation: the form says to press it again. The rewind's card
  // offers Undo for 10 s.
  let enterArmed = false;
  let firstEnter = -Infinity; // the time of the Enter that opened the form
  const confirmGap = 300;
  window.addEventListener(
    "keydown",
    (e) => {
      if (e.key !== "Enter" || e.shiftKey || e.ctrlKey || e.altKey || e.metaKey) return;
      if (document.body.dataset.comparePick) return; // Enter picks the entry to compare with (app.js)
      const t = e.target;
      const tree = document.getElementById("tree");
      if (!tree || !(t === tree || t === document.body || t.id === "tree-q")) return;
      e.preventDefault();
      e.stopPropagation();
      enterArmed = true;
      if (!e.repeat) firstEnter = e.timeStamp;
    },
    true
  );
  const onRewindButton = (e) => e.key === "Enter" && e.target.matches && e.target.matches('#entry-actions details[data-act="rewind"] button[type="submit"]');
  let tooSoon = false; // the Enter going down now was too soon: its keypress must not press the button either
  window.addEventListener(
    "keypress",
    (e) => {
      if (tooSoon && onRewindButton(e)) {
        e.preventDefault();
        e.stopPropagation();
      }
    },
    true
  );
  window.addEventListener("keyup", (e) => e.key === "Enter" && (tooSoon = false), true);
  window.addEventListener(
    "keydown",
    (e) => {
      if (!onRewindButton(e)) return;
      tooSoon = e.repeat || e.timeStamp - firstEnter < confirmGap;
      if (!tooSoon) return;
      e.preventDefault();
      e.stopPropagation();
      const form = e.target.closest("form");
      let say = form.querySelector(".act-soon");
      if (!say) {
        say = document.createElement("p");
        say.className = "act-soon";
        say.setAttribute("role", "status");
        form.append(say);
      }
      say.textContent = "Press Enter again to rewind (the second Enter came too soon to count as a yes).";
    },
    true
  );
  window.addEventListener(
    "keyup",
    (e) => {
      if (!enterArmed || e.key !== "Enter") return;
      enterArmed = false;
      e.preventDefault();
      e.stopPropagation();
      openFor("rewind");
    },
    true
  );

  // Buttons elsewhere on the page that open a form of the panel (the "viewing another path" note).
  document.addEventListener("click", (e) => {
    const b = e.target.closest && e.target.closest("[data-open-act]");
    if (!b) return;
    e.preventDefault();
    openFor(b.dataset.openAct);
  });

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

  // One form open at a time. (Not with details' name attribute: a panel
  // swapped in while the old one has a form open would have its own form
  // closed by the browser, collapsing a refusal.)
  document.addEventListener(
    "toggle",
    (e) => {
      const d = e.target;
      if (!(d instanceof HTMLDetailsElement) || !d.open || !d.closest("#entry-actions")) return;
      d.closest("#entry-actions").querySelectorAll("details[open]").forEach((o) => o !== d && (o.open = false));
    },
    true
  );

  // A rewind's card offers Undo for 10 s: a rewind back to the leaf before.
  // It draws the panel shown now, whichever entry that is.
  const undoFor = 10000;
  // Only the latest rewind can be undone (an older Undo would be refused:
  // pi's leaf moved since), and an Undo is used once.
  document.addEventListener("htmx:load", () => {
    const fresh = document.querySelectorAll("#act-outcomes form[data-undo]:not([data-timed])");
    if (!fresh.length) return;
    document.querySelectorAll("#act-outcomes form[data-undo][data-timed]").forEach((f) => f.remove());
    fresh.forEach((f) => {
      f.dataset.timed = "";
      f.closest(".outcome").scrollIntoView({ block: "nearest" }); // in sight, wherever the conversation was
      setTimeout(() => f.remove(), undoFor);
    });
  });
  document.body.addEventListener("htmx:configRequest", (e) => {
    const f = e.detail.elt;
    if (!f.matches || !f.matches("form[data-undo]")) return;
    const p = panel();
    if (p) e.detail.parameters.panel = p.dataset.ref;
    f.hidden = true;
  });
  document.body.addEventListener("htmx:afterRequest", (e) => {
    const f = e.detail.elt;
    if (f.matches && f.matches("form[data-undo]")) f.remove();
  });

  // Outcome cards stay until dismissed.
  document.addEventListener("click", (e) => {
    const b = e.target.closest && e.target.closest("#act-outcomes [data-dismiss]");
    if (b) b.closest(".outcome").remove();
  });

  // Copy buttons copy the text field before them.
  document.addEventListener("click", (e) => {
    const b = e.target.closest && e.target.closest("[data-copy]");
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

  // A key pressed before the selected entry's panel arrived opens its form once it has.
  document.body.addEventListener("htmx:afterSettle", () => {
    const p = panel();
    if (p && pending && p.dataset.ref === selectedRef()) {
      const name = pending;
      pending = "";
      openAct(name);
    }
  });

})();
