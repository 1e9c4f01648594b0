// An evaluation's page: while it is queued or running, poll its progress JSON every second and
// show the rows scored; when it ends, reload the page once, so the server draws the scores (or
// the reason) with the same template as a finished evaluation's page. Nothing here blocks.
(function () {
  "use strict";
  var el = document.getElementById("evaluation-status");
  if (!el || el.getAttribute("data-active") !== "true") return;
  function fmtEta(s) {
    if (s === null || s === undefined) return "";
    s = Math.round(s);
    if (s < 90) return "~" + s + " s left";
    return "~" + Math.round(s / 60) + " min left";
  }
  function set(name, text) {
    el.querySelectorAll('[data-field="' + name + '"]').forEach(function (f) { f.textContent = text; });
  }
  function render(d) {
    var bar = el.querySelector('[data-field="bar"]');
    if (bar) {
      bar.style.width = Math.round(d.progress) + "%";
      bar.parentNode.classList.toggle("done", d.done === true);
      bar.parentNode.classList.toggle("bad", d.is_problem === true);
    }
    set("percent", Math.round(d.progress));
    set("phase", d.phase_display);
    set("eta", d.is_active ? fmtEta(d.eta_seconds) : "");
    el.querySelectorAll('[data-field="status"]').forEach(function (badge) {
      badge.textContent = d.status_display; badge.className = "badge " + d.status;
    });
    var reason = el.querySelector('[data-field="reason"]');
    if (reason) { reason.textContent = d.reason || ""; reason.hidden = !d.reason; }
    el.querySelectorAll("[data-show-when-active]").forEach(function (f) { f.hidden = !d.is_active; });
    el.setAttribute("data-status", d.status);
    el.setAttribute("data-active", d.is_active ? "true" : "false");
  }
  function poll() {
    fetch(el.getAttribute("data-progress-url"), { headers: { Accept: "application/json" }, credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (d) {
        if (!d) { setTimeout(poll, 5000); return; }
        render(d);
        if (d.is_active) setTimeout(poll, 1000);
        else window.location.reload();
      })
      .catch(function () { setTimeout(poll, 5000); });
  }
  setTimeout(poll, 500);
})();
