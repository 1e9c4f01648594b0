// Live progress for rows and cards carrying data-progress-url: training jobs on the dashboard,
// batch classifications on the Classify page and their own page. Each is polled until it is no
// longer active; the endpoint's JSON has the same keys for both kinds, and it says itself whether
// the job is still active (is_active), so the server's status lists are not repeated here.
(function () {
  "use strict";
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
    el.querySelectorAll("[data-show-when]").forEach(function (f) {
      f.hidden = f.getAttribute("data-show-when") !== d.status;
    });
    el.setAttribute("data-status", d.status);
    el.setAttribute("data-active", d.is_active ? "true" : "false");
  }
  function poll(el) {
    fetch(el.getAttribute("data-progress-url"), { headers: { Accept: "application/json" }, credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (d) {
        if (!d) return;
        render(el, d);
        if (d.is_active) setTimeout(function () { poll(el); }, 2000);
      })
      .catch(function () { setTimeout(function () { poll(el); }, 5000); });
  }
  document.querySelectorAll("[data-progress-url]").forEach(function (el) {
    if (el.getAttribute("data-active") === "true") poll(el);
  });
})();
