// Live progress for job rows on the dashboard and model list: any element carrying
// data-progress-url is polled until its job is no longer queued or running.
(function () {
  "use strict";
  var ACTIVE = { queued: true, running: true };
  function fmtEta(s) {
    if (s === null || s === undefined) return "";
    s = Math.round(s);
    if (s < 90) return "~" + s + " s left";
    if (s < 5400) return "~" + Math.round(s / 60) + " min left";
    return "~" + (s / 3600).toFixed(1) + " h left";
  }
  function poll(row) {
    var url = row.getAttribute("data-progress-url");
    fetch(url, { headers: { Accept: "application/json" }, credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (d) {
        if (!d) return;
        var set = function (name, text) {
          var el = row.querySelector('[data-field="' + name + '"]');
          if (el) el.textContent = text;
        };
        var bar = row.querySelector('[data-field="bar"]');
        if (bar) bar.style.width = Math.round(d.progress) + "%";
        set("percent", Math.round(d.progress));
        set("phase", d.phase_display);
        set("eta", fmtEta(d.eta_seconds));
        var badge = row.querySelector('[data-field="status"]');
        if (badge) { badge.textContent = d.status_display; badge.className = "badge " + d.status; }
        if (ACTIVE[d.status]) setTimeout(function () { poll(row); }, 2000);
      })
      .catch(function () { setTimeout(function () { poll(row); }, 5000); });
  }
  document.querySelectorAll("[data-progress-url]").forEach(function (row) {
    if (ACTIVE[row.getAttribute("data-status")]) poll(row);
  });
})();
