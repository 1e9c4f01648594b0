// The training job page: poll the progress endpoint, update the numbers and extend the curves.
(function (MLB) {
  "use strict";
  var card = document.getElementById("job-card");
  if (!card) return;
  var url = card.getAttribute("data-progress-url");
  var singlePass = card.hasAttribute("data-single-pass");
  var totalEpochs = parseFloat(card.getAttribute("data-total-epochs")) || undefined;
  var lossChart = MLB.lineChart(document.getElementById("loss-chart"), { label: "loss", xLabel: "step", yLabel: "loss", yMin: 0 });
  var f1Chart = MLB.lineChart(document.getElementById("f1-chart"), { label: "F1", xLabel: singlePass ? "" : "epoch", yLabel: "micro-F1", color: MLB.palette[2], points: true, yMin: 0, yMax: 1, xMin: 0, xMax: totalEpochs });
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
    emptyNotes();
  }
  // A curve with no points says why (or that none came yet) instead of showing bare axes.
  function emptyNote(name, chart) {
    var note = document.getElementById(name + "-empty");
    if (!note) return;
    var empty = !chart || chart.data.datasets[0].data.length === 0;
    var message = note.getAttribute(card.getAttribute("data-active") === "true" ? "data-empty-active" : "data-empty-ended");
    MLB.emptyState(document.getElementById(name + "-chart"), empty ? (message || note.textContent) : null);
  }
  function emptyNotes() { emptyNote("loss", lossChart); emptyNote("f1", f1Chart); }

  // Durations: the server drew them; those still growing count up here, from the moment drawn.
  var clocks = {};
  document.querySelectorAll("#job-card [data-duration]").forEach(function (el) {
    var s = el.getAttribute("data-seconds");
    clocks[el.getAttribute("data-duration")] = {
      out: el.querySelector(".duration"),
      base: s === null ? null : parseFloat(s),
      since: s !== null && el.hasAttribute("data-counting") ? Date.now() : null
    };
  });
  function clockValue(c) { return c.base === null ? null : c.base + (c.since ? (Date.now() - c.since) / 1000 : 0); }
  function clockStart(key) {
    var c = clocks[key];
    if (!c || c.since) return;
    if (c.base === null) c.base = 0;
    c.since = Date.now();
  }
  function clockStop(key) {
    var c = clocks[key];
    if (c && c.since) { c.base = clockValue(c); c.since = null; }
  }
  function paintClocks() {
    Object.keys(clocks).forEach(function (key) {
      var c = clocks[key];
      if (c.base !== null) c.out.textContent = MLB.fmtDuration(clockValue(c));
    });
  }
  // Follow the job's state: waiting counts while queued, running while it runs, the total until
  // it ends. A transition seen here is timed by this browser, within one poll.
  function followClocks(s) {
    if (s === "queued") { clockStart("queued"); clockStart("total"); }
    else if (s === "running") { clockStop("queued"); clockStart("ran"); clockStart("total"); }
    else {
      Object.keys(clocks).forEach(clockStop);
      var ran = clocks.ran;
      if (ran && ran.base === null) ran.out.textContent = "did not start";
    }
    paintClocks();
  }
  var ticker = setInterval(paintClocks, 1000);

  addHistory(MLB.readJSON("history-data") || []);

  // The log opens at its newest line (a stall or a failure is written last) and follows the
  // lines that arrive, unless the reader has scrolled up to read earlier ones.
  var logBox = document.getElementById("job-log");
  var followLog = true;
  function logAtEnd() { return logBox.scrollTop + logBox.clientHeight >= logBox.scrollHeight - 4; }
  if (logBox) {
    logBox.scrollTop = logBox.scrollHeight;
    logBox.addEventListener("scroll", function () { followLog = logAtEnd(); });
  }

  function text(id, value) { var el = document.getElementById(id); if (el) el.textContent = value; }
  function fmt(v, digits) { return v === null || v === undefined ? "–" : Number(v).toFixed(digits); }
  // The endpoint's keys may be renamed (snake_case or camelCase): take the first one present.
  function pick(d) {
    for (var i = 1; i < arguments.length; i++) {
      if (d[arguments[i]] !== undefined) return d[arguments[i]];
    }
    return undefined;
  }

  function render(d) {
    var s = d.status;
    var active = d.is_active === true;
    // Fields that hold only in some states (queue position, heartbeat, time left, phase)
    // vanish once the job moves on.
    document.querySelectorAll("#job-card [data-show-when]").forEach(function (el) {
      el.hidden = el.getAttribute("data-show-when").split(/\s+/).indexOf(s) < 0;
    });
    var pct = Math.round(pick(d, "progress", "progress_percentage", "progressPercentage") || 0);
    text("job-percent", pct + "%");
    var prog = document.getElementById("job-progress");
    prog.querySelector(".bar").style.width = pct + "%";
    prog.setAttribute("aria-valuenow", pct);
    prog.className = "progress big" + (s === "completed" ? " done" : d.is_problem ? " bad" : "");
    var badge = document.getElementById("job-status");
    badge.textContent = pick(d, "status_display", "statusDisplay") || s; badge.className = "badge " + s;
    text("job-phase", pick(d, "phase_display", "phaseDisplay") || "");
    if (!singlePass) {
      var epoch = pick(d, "epoch", "current_epoch", "currentEpoch");
      text("job-epoch", fmt(epoch, 2) + " / " + pick(d, "total_epochs", "totalEpochs"));
      text("job-step", pick(d, "step", "current_step", "currentStep") + " / " + pick(d, "total_steps", "totalSteps"));
      text("job-loss", fmt(pick(d, "loss", "last_loss", "lastLoss"), 4));
    }
    text("job-eta", active ? MLB.fmtSeconds(pick(d, "eta_seconds", "etaSeconds")) : "–");
    var age = pick(d, "heartbeat_age_seconds", "heartbeatAgeSeconds");
    text("job-heartbeat", age === null || age === undefined ? "–" : Math.round(age) + " s ago");
    text("attempt", d.attempt);
    var reasonText = pick(d, "reason_plain", "reasonPlain") || "";
    var reason = document.getElementById("job-reason");
    reason.hidden = !reasonText; reason.textContent = reasonText;
    // Either form is absent for a role that may not use it (the page draws only what it may).
    var cancelForm = document.getElementById("cancel-form");
    if (cancelForm) cancelForm.hidden = !active;
    // A flash such as "Training queued" is stale once the job has ended; the badge says the rest.
    if (!active) document.querySelectorAll("main > .alert").forEach(function (el) { el.remove(); });
    var resumeForm = document.getElementById("resume-form");
    if (resumeForm) resumeForm.hidden = !d.is_resumable;
    var logTail = pick(d, "log_tail", "logTail");
    if (logTail !== undefined && logBox) {
      var follow = followLog;  // read before the new text moves the scroll position
      logBox.textContent = logTail || "No output yet.";
      if (follow) logBox.scrollTop = logBox.scrollHeight;
    }
    if (d.leaderboard) renderLeaderboard(d.leaderboard);
    var plan = pick(d, "device_plan", "devicePlan");
    if (plan && plan.device) {
      document.getElementById("device-plan").hidden = false;
      document.getElementById("device-plan-pending").hidden = true;
      document.querySelectorAll("[data-plan]").forEach(function (el) {
        var v = plan[el.getAttribute("data-plan")];
        el.textContent = v === undefined || v === null || v === "" ? "–" : v;
      });
    }
    card.setAttribute("data-status", s);
    card.setAttribute("data-active", active ? "true" : "false");
    followClocks(s);
    if (!active) clearInterval(ticker);
    var history = d.history;
    if (history && (history.length || pick(d, "history_reset", "historyReset"))) addHistory(history, pick(d, "history_reset", "historyReset"));
    else emptyNotes();
  }

  // A search's trials, best first (templates/classification/includes/leaderboard.html).
  function renderLeaderboard(rows) {
    var body = document.getElementById("leaderboard-rows");
    if (!body || !rows.length) return;
    body.textContent = "";
    rows.forEach(function (row) {
      var params = Object.keys(row.params || {}).map(function (k) {
        var v = row.params[k];
        return k + "=" + (typeof v === "number" ? Number(v.toPrecision(4)) : v);
      }).join(", ");
      // The adapted kind is named after its encoder, as the server draws it.
      var model = row.model_type === "adapted" && body.dataset.adaptedLabel ?
        body.dataset.adaptedLabel : row.model_type;
      // As templates/classification/includes/search_trial_row.html draws it.
      var spread = row.spread === null || row.spread === undefined || row.value === null ?
        "" : " ± " + fmt(row.spread, 3);
      var cells = [row.number, model, params || "–", fmt(row.value, 3) + spread,
        row.seconds === null || row.seconds === undefined ? "–" : fmt(row.seconds, 1) + " s",
        row.embeddings || "–", row.state + (row.note ? " " + row.note : "")];
      var labels = ["#", "Model", "Parameters", "Macro-F1", "Time", "Embeddings", "State"];
      var tr = document.createElement("tr");
      tr.setAttribute("data-state", row.state);
      tr.setAttribute("data-trial", row.number);
      cells.forEach(function (value, i) {
        var td = document.createElement("td");
        td.setAttribute("data-label", labels[i]);
        td.textContent = value;
        tr.appendChild(td);
      });
      body.appendChild(tr);
    });
  }

  function poll() {
    fetch(url + "&since=" + seen + "&last=" + encodeURIComponent(last), { headers: { Accept: "application/json" }, credentials: "same-origin" })
      .then(function (r) { if (!r.ok) throw new Error(r.status); return r.json(); })
      .then(function (d) {
        render(d);
        if (d.is_active) setTimeout(poll, 1500);
      })
      .catch(function () { setTimeout(poll, 4000); });
  }
  poll();
})(window.MLB);
