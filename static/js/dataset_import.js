// An import's page: while a worker reads the file, poll the import's progress JSON every second
// and show the rows and bytes read; when it completes, go to the new dataset; when it fails or
// is cancelled, show the reason in plain words. The page itself never waits on the import.
(function () {
  "use strict";
  var el = document.getElementById("import-status");
  if (!el || el.getAttribute("data-active") !== "true") return;

  function mb(bytes) { return (bytes / 1048576).toFixed(1) + " MB"; }

  function set(name, text) {
    el.querySelectorAll('[data-field="' + name + '"]').forEach(function (f) { f.textContent = text; });
  }

  function render(d) {
    var bar = el.querySelector('[data-field="bar"]');
    if (bar) {
      // A workbook is read through its zip: no byte count, so no percentage until it ends.
      bar.style.width = (d.progress === null ? 0 : Math.round(d.progress)) + "%";
      bar.parentNode.classList.toggle("done", d.status === "completed");
      bar.parentNode.classList.toggle("bad", d.status === "failed");
    }
    set("percent", d.progress === null ? "" : Math.round(d.progress) + "%");
    set("message", d.message || "");
    set("restarted", d.restarted || "");
    var restarted = document.getElementById("import-restarted");
    if (restarted) restarted.hidden = !d.restarted;
    set("rows", d.rows_read.toLocaleString());
    set("bytes", mb(d.bytes_read));
    el.querySelectorAll('[data-field="status"]').forEach(function (badge) {
      badge.textContent = d.status_display; badge.className = "badge " + d.status;
    });
    var reason = el.querySelector('[data-field="reason"]');
    if (reason) {
      reason.textContent = d.reason || "";
      reason.hidden = !d.reason || d.status === "completed";
    }
    el.querySelectorAll("[data-show-when-active]").forEach(function (f) {
      f.hidden = !d.is_active || d.cancel_requested;
    });
    var again = document.getElementById("import-again");
    if (again) again.hidden = d.is_active || d.status === "completed";
    var done = document.getElementById("import-done");
    if (done && d.dataset_url) {
      done.querySelector('[data-field="dataset-link"]').setAttribute("href", d.dataset_url);
      done.hidden = false;
    }
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
        else if (d.status === "completed" && d.dataset_url) window.location.assign(d.dataset_url);
      })
      .catch(function () { setTimeout(poll, 5000); });
  }
  setTimeout(poll, 500);
})();
