// Live progress for rows and cards carrying data-progress-url: training jobs on the dashboard,
// batch classifications on the Classify page and their own page. Each is polled until it is no
// longer queued or running; the endpoint's JSON has the same keys for both kinds.
(function () {
  "use strict";
  var ACTIVE = { queued: true, running: true };
  var BAD = { failed: true, stalled: true, interrupted: true };
  function fmtEta(s) {
    if (s === null || s === undefined) return "";
    s = Math.round(s);
    if (s < 90) return "~" + s + " s left";
    if (s < 5400) return "~" + Math.round(s / 60) + " min left";
    return "~" + (s / 3600).toFixed(1) + " h left";
  }
  function render(el, d) {
    var set = function (name, text) {
      el.querySelectorAll('[data-field="' + name + '"]').forEach(function (f) { f.textContent = text; });
    };
    var bar = el.querySelector('[data-field="bar"]');
    if (bar) {
      bar.style.width = Math.round(d.progress) + "%";
      bar.parentNode.classList.toggle("done", d.status === "completed");
      bar.parentNode.classList.toggle("bad", BAD[d.status] === true);
    }
    set("percent", Math.round(d.progress));
    set("phase", d.phase_display);
    set("eta", ACTIVE[d.status] ? fmtEta(d.eta_seconds) : "");
    el.querySelectorAll('[data-field="status"]').forEach(function (badge) {
      badge.textContent = d.status_display; badge.className = "badge " + d.status;
    });
    var reason = el.querySelector('[data-field="reason"]');
    if (reason) { reason.textContent = d.reason || ""; reason.hidden = !d.reason; }
    el.querySelectorAll("[data-show-when]").forEach(function (f) {
      f.hidden = f.getAttribute("data-show-when") !== d.status;
    });
    el.setAttribute("data-status", d.status);
  }
  function poll(el) {
    fetch(el.getAttribute("data-progress-url"), { headers: { Accept: "application/json" }, credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (d) {
        if (!d) return;
        render(el, d);
        if (ACTIVE[d.status]) setTimeout(function () { poll(el); }, 2000);
      })
      .catch(function () { setTimeout(function () { poll(el); }, 5000); });
  }
  document.querySelectorAll("[data-progress-url]").forEach(function (el) {
    if (ACTIVE[el.getAttribute("data-status")]) poll(el);
  });
})();
