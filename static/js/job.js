// The training job page: poll the progress endpoint, update the numbers and extend the curves.
(function (MLB) {
  "use strict";
  var card = document.getElementById("job-card");
  if (!card) return;
  var url = card.getAttribute("data-progress-url");
  var ACTIVE = { queued: true, running: true };
  var totalEpochs = parseFloat(card.getAttribute("data-total-epochs")) || undefined;
  var lossChart = MLB.lineChart(document.getElementById("loss-chart"), { label: "loss", xLabel: "step", yLabel: "loss", yMin: 0 });
  var f1Chart = MLB.lineChart(document.getElementById("f1-chart"), { label: "F1", xLabel: "epoch", yLabel: "micro-F1", color: MLB.palette[2], points: true, yMin: 0, yMax: 1, xMin: 0, xMax: totalEpochs });
  var seen = 0;
  var last = "";  // "kind:step" of the newest point we hold: the server finds our place by it

  function addHistory(points, reset) {
    if (reset) {
      seen = 0;
      [lossChart, f1Chart].forEach(function (c) { if (c) c.data.datasets[0].data = []; });
    }
    points.forEach(function (p, i) {
      var l = MLB.pointLoss(p, seen + i); if (l && lossChart) lossChart.data.datasets[0].data.push(l);
      var f = MLB.pointF1(p); if (f && f1Chart) f1Chart.data.datasets[0].data.push(f);
    });
    seen += points.length;
    if (points.length) { var p = points[points.length - 1]; last = (p.kind || "") + ":" + (p.step === undefined ? "" : p.step); }
    if (lossChart) lossChart.update();
    if (f1Chart) f1Chart.update();
    emptyNote("loss", lossChart); emptyNote("f1", f1Chart);
  }
  // A curve with no points says why instead of showing bare axes.
  function emptyNote(name, chart) {
    var note = document.getElementById(name + "-empty");
    if (note) note.hidden = !chart || chart.data.datasets[0].data.length > 0 || ACTIVE[card.getAttribute("data-status")];
  }
  addHistory(MLB.readJSON("history-data") || []);

  function text(id, value) { var el = document.getElementById(id); if (el) el.textContent = value; }
  function fmt(v, digits) { return v === null || v === undefined ? "–" : Number(v).toFixed(digits); }

  function render(d) {
    // Lines that hold only in one state (the queue position) vanish once the job moves on.
    document.querySelectorAll("#job-card [data-show-when]").forEach(function (el) {
      el.hidden = el.getAttribute("data-show-when") !== d.status;
    });
    var pct = Math.round(d.progress);
    text("job-percent", pct + "%");
    var prog = document.getElementById("job-progress");
    prog.querySelector(".bar").style.width = pct + "%";
    prog.setAttribute("aria-valuenow", pct);
    prog.className = "progress big" + (d.status === "completed" ? " done" : (d.status === "failed" || d.status === "stalled") ? " bad" : "");
    var badge = document.getElementById("job-status");
    badge.textContent = d.status_display; badge.className = "badge " + d.status;
    text("job-phase", d.phase_display);
    text("job-epoch", fmt(d.epoch, 2) + " / " + d.total_epochs);
    text("job-step", d.step + " / " + d.total_steps);
    text("job-eta", d.is_active ? MLB.fmtSeconds(d.eta_seconds) : "–");
    text("job-heartbeat", d.heartbeat_age_seconds === null ? "–" : Math.round(d.heartbeat_age_seconds) + " s ago");
    text("job-loss", fmt(d.loss, 4));
    text("attempt", d.attempt);
    var reason = document.getElementById("job-reason");
    reason.hidden = !d.reason_plain; reason.textContent = d.reason_plain || "";
    document.getElementById("cancel-form").hidden = !d.is_active;
    // A flash such as "Training queued" is stale once the job has ended; the badge says the rest.
    if (!d.is_active) document.querySelectorAll("main > .alert").forEach(function (el) { el.remove(); });
    document.getElementById("resume-form").hidden = !d.is_resumable;
    if (d.log_tail !== undefined) {
      var log = document.getElementById("job-log");
      var atBottom = log.scrollTop + log.clientHeight >= log.scrollHeight - 4;
      log.textContent = d.log_tail || "No output yet.";
      if (atBottom) log.scrollTop = log.scrollHeight;
    }
    if (d.device_plan && d.device_plan.device) {
      document.getElementById("device-plan").hidden = false;
      document.getElementById("device-plan-pending").hidden = true;
      document.querySelectorAll("[data-plan]").forEach(function (el) {
        var v = d.device_plan[el.getAttribute("data-plan")];
        el.textContent = v === undefined || v === null || v === "" ? "–" : v;
      });
    }
    card.setAttribute("data-status", d.status);
    if (d.history && (d.history.length || d.history_reset)) addHistory(d.history, d.history_reset);
    else { emptyNote("loss", lossChart); emptyNote("f1", f1Chart); }
  }

  function poll() {
    fetch(url + "&since=" + seen + "&last=" + encodeURIComponent(last), { headers: { Accept: "application/json" }, credentials: "same-origin" })
      .then(function (r) { if (!r.ok) throw new Error(r.status); return r.json(); })
      .then(function (d) {
        render(d);
        if (ACTIVE[d.status]) setTimeout(poll, 1500);
      })
      .catch(function () { setTimeout(poll, 4000); });
  }
  poll();
})(window.MLB);
