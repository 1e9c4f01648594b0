// The review page: keyboard shortcuts and corrections saved without leaving the page.
// Keys: 1-9 toggle (multi-label) or choose (single-label) a label, Enter confirms, j / k move
// to the next / previous article. One article per screen: after a confirm the browser goes to
// the next least-certain article the server names. List: the row stays, marked, and the
// cursor moves down. Without this script every form still posts and redirects.
(function () {
  "use strict";
  var root = document.getElementById("review");
  if (!root) return;
  var mode = root.getAttribute("data-mode");

  // Threshold ticks on the probability bars (the CSP forbids style attributes in the HTML).
  root.querySelectorAll("[data-left]").forEach(function (el) {
    var pct = parseFloat(el.getAttribute("data-left"));
    if (!isNaN(pct)) el.style.left = Math.max(0, Math.min(100, pct)) + "%";
  });

  var rows = Array.prototype.slice.call(root.querySelectorAll(".review-row"));
  var current = null;
  function setCurrent(row, focus) {
    if (!row) return;
    if (current) current.classList.remove("current");
    current = row;
    row.classList.add("current");
    if (focus) {
      row.focus({ preventScroll: true });
      row.scrollIntoView({ block: "nearest" });
    }
  }
  if (mode === "list" && rows.length) {
    var byHash = location.hash ? document.getElementById(location.hash.slice(1)) : null;
    setCurrent(rows.indexOf(byHash) >= 0 ? byHash : (rows.filter(function (r) {
      return !r.classList.contains("reviewed");
    })[0] || rows[0]), false);
    root.addEventListener("focusin", function (event) {
      var row = event.target.closest(".review-row");
      if (row && row !== current) setCurrent(row, false);
    });
  }

  function activeForm() {
    return mode === "list" ? current : document.getElementById("review-item");
  }

  function pct(share) {
    return share === null || share === undefined ? "–" : Math.round(share * 100) + "%";
  }

  function showAgreement(a) {
    var set = function (name, text) {
      root.querySelectorAll('[data-agreement="' + name + '"]').forEach(function (el) { el.textContent = text; });
    };
    set("reviewed", a.reviewed);
    set("exact", a.exact);
    set("corrected", a.corrected);
    set("exact_share", pct(a.exact_share));
    var bar = root.querySelector("[data-agreement-bar]");
    if (bar && a.total) bar.style.width = Math.round(100 * a.reviewed / a.total) + "%";
    a.per_label.forEach(function (l) {
      root.querySelectorAll("#agreement-labels tr[data-label]").forEach(function (tr) {
        if (tr.getAttribute("data-label") !== l.label) return;
        tr.querySelector('[data-cell="share"]').textContent = pct(l.share);
        tr.querySelector('[data-cell="added"]').textContent = l.added;
        tr.querySelector('[data-cell="missed"]').textContent = l.missed;
      });
    });
    root.querySelectorAll("#retrain-button, #dataset-button").forEach(function (b) {
      b.disabled = !a.reviewed;
    });
  }

  function showError(form, text) {
    var box = form.querySelector("#review-error") || document.getElementById("review-error");
    if (box) { box.textContent = text; box.hidden = !text; } else if (text) { window.alert(text); }
  }

  function save(form) {
    var button = form.querySelector('button[type="submit"]');
    if (form.getAttribute("data-busy") === "true") return;
    form.setAttribute("data-busy", "true");
    if (button) button.disabled = true;
    fetch(form.action, {
      method: "POST", body: new FormData(form), credentials: "same-origin",
      headers: { Accept: "application/json" },
    })
      .then(function (r) {
        return r.json().catch(function () { return { detail: "The server answered " + r.status + "." }; })
          .then(function (d) { return { ok: r.ok, d: d }; });
      })
      .then(function (res) {
        form.setAttribute("data-busy", "false");
        if (button) button.disabled = false;
        if (!res.ok) { showError(form, res.d.detail || "Not saved."); return; }
        showError(form, "");
        showAgreement(res.d.agreement);
        if (mode !== "list") { window.location.assign(res.d.next_url); return; }
        form.classList.add("reviewed");
        form.classList.toggle("corrected", !res.d.confirmed);
        var state = form.querySelector('[data-field="state"]');
        if (state) state.textContent = res.d.confirmed ? "confirmed" : "corrected";
        var next = rows[rows.indexOf(form) + 1];
        if (next) setCurrent(next, true);
      })
      .catch(function () {
        form.setAttribute("data-busy", "false");
        if (button) button.disabled = false;
        showError(form, "Not saved: the server could not be reached. Try again.");
      });
  }

  root.addEventListener("submit", function (event) {
    var form = event.target;
    if (!form.matches("#review-item, .review-row")) return;
    event.preventDefault();
    save(form);
  });

  function follow(id) {
    var link = document.getElementById(id);
    if (link) window.location.assign(link.href);
  }

  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey || event.isComposing) return;
    var target = event.target;
    var tag = target.tagName;
    var typing = tag === "TEXTAREA" || tag === "SELECT" || target.isContentEditable ||
      (tag === "INPUT" && !/^(checkbox|radio)$/.test(target.type));
    if (typing) return;
    var form = activeForm();
    var key = event.key;
    if (/^[1-9]$/.test(key) && form) {
      var input = form.querySelector('input[data-key="' + key + '"]');
      if (!input) return;
      event.preventDefault();
      input.checked = input.type === "radio" ? true : !input.checked;
      input.dispatchEvent(new Event("change", { bubbles: true }));
    } else if (key === "Enter" && form) {
      if (tag === "BUTTON" || tag === "A") return;  // the focused control does its own thing
      event.preventDefault();
      form.requestSubmit();
    } else if (key === "j" || key === "k") {
      event.preventDefault();
      if (mode === "list") {
        setCurrent(rows[rows.indexOf(current) + (key === "j" ? 1 : -1)], true);
      } else {
        follow(key === "j" ? "review-next" : "review-prev");
      }
    }
  });
})();
