// Small wrappers over the vendored Chart.js so every page's charts look alike.
window.MLB = window.MLB || {};
(function (MLB) {
  "use strict";
  var PALETTE = ["#1f6f8b", "#e07a5f", "#3d9970", "#8e6c8a", "#f2a541", "#5b8def", "#a3a847", "#c0504d"];
  MLB.palette = PALETTE;
  MLB.lineChart = function (canvas, opts) {
    if (!window.Chart || !canvas) return null;
    return new Chart(canvas, {
      type: "line",
      data: { datasets: [{ label: opts.label, data: [], borderColor: opts.color || PALETTE[0],
        backgroundColor: opts.color || PALETTE[0], pointRadius: opts.points ? 3 : 0, tension: 0.2, borderWidth: 2 }] },
      options: {
        animation: false, responsive: true, maintainAspectRatio: false, parsing: false,
        scales: { x: { type: "linear", title: { display: true, text: opts.xLabel }, min: opts.xMin, suggestedMax: opts.xMax },
                  y: { title: { display: true, text: opts.yLabel }, suggestedMin: opts.yMin, suggestedMax: opts.yMax } },
        plugins: { legend: { display: false } }
      }
    });
  };
  // A chart with nothing to draw says so instead of showing bare axes (an empty Chart.js axis
  // spans -1 to 1). message: the words to show, or null when there is something to draw.
  MLB.emptyState = function (canvas, message) {
    var box = canvas && canvas.parentNode;
    if (!box) return;
    var note = box.querySelector(".chart-empty");
    if (!note && message) {
      note = document.createElement("p");
      note.className = "chart-empty";
      box.appendChild(note);
    }
    box.classList.toggle("is-empty", !!message);
    if (note) {
      note.hidden = !message;
      if (message) note.textContent = message;
    }
  };
  MLB.barChart = function (canvas, labels, values, opts) {
    opts = opts || {};
    MLB.emptyState(canvas, labels && labels.length ? null : (opts.emptyText || "Nothing to show yet."));
    if (!window.Chart || !canvas) return null;
    return new Chart(canvas, {
      type: "bar",
      data: { labels: labels, datasets: opts.datasets || [{ label: opts.label || "", data: values,
        backgroundColor: opts.color || PALETTE[0] }] },
      options: { animation: false, responsive: true, maintainAspectRatio: false,
        indexAxis: opts.horizontal ? "y" : "x",
        scales: { x: { title: { display: !!opts.xTitle, text: opts.xTitle } },
                  y: { beginAtZero: true, suggestedMax: opts.max, title: { display: !!opts.yTitle, text: opts.yTitle } } },
        plugins: { legend: { display: !!opts.datasets } } }
    });
  };
  MLB.readJSON = function (id) {
    var el = document.getElementById(id);
    return el ? JSON.parse(el.textContent) : null;
  };
  // Training history points come from the worker; accept the key spellings it may use.
  MLB.pointLoss = function (p, i) {
    if (p.kind === "eval") return null;  // eval points carry the validation loss, not training
    var y = p.loss !== undefined ? p.loss : p.train_loss;
    if (y === null || y === undefined) return null;
    var x = p.step !== undefined && p.step !== null ? p.step : i;
    return { x: x, y: y };
  };
  MLB.pointF1 = function (p) {
    if (p.kind && p.kind !== "eval") return null;
    var m = p.metrics || {};
    var y = [p.eval_micro_f1, p.micro_f1, p.eval_f1, p.f1, m.micro_f1, m.f1].find(function (v) {
      return v !== undefined && v !== null;
    });
    if (y === undefined) return null;
    var x = p.epoch !== undefined && p.epoch !== null ? p.epoch : (p.step || 0);
    return { x: x, y: y };
  };
  MLB.fmtSeconds = function (s) {
    if (s === null || s === undefined) return "–";
    s = Math.max(0, Math.round(s));
    if (s < 90) return "~" + s + " s";
    if (s < 5400) return "~" + Math.round(s / 60) + " min";
    return "~" + (s / 3600).toFixed(1) + " h";
  };
  // How long something took: "8 s", "4 min 05 s", "2 h 03 min" (as format_duration in
  // classification/views/presenters.py writes it on the server).
  MLB.fmtDuration = function (s) {
    if (s === null || s === undefined || isNaN(s)) return "–";
    s = Math.max(0, Math.round(s));
    var pad = function (n) { return (n < 10 ? "0" : "") + n; };
    if (s < 60) return s + " s";
    var m = Math.floor(s / 60);
    if (m < 60) return m + " min " + pad(s % 60) + " s";
    return Math.floor(m / 60) + " h " + pad(m % 60) + " min";
  };
})(window.MLB);
