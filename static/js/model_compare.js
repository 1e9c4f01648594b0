// Compare: the headline metrics and F1 per label, one colour per model; a page waiting for
// evaluations reloads itself.
(function (MLB) {
  "use strict";
  // Evaluations on an uploaded file still running: look again until they have all finished.
  if (document.getElementById("evaluations-pending")) {
    window.setTimeout(function () { window.location.reload(); }, 5000);
  }
  var d = MLB.readJSON("compare-data");
  if (!d) return;
  var metricNames = Object.keys(d.headline);
  MLB.barChart(document.getElementById("headline-chart"), metricNames, null, { max: 1,
    datasets: d.models.map(function (name, i) {
      return { label: name, backgroundColor: MLB.palette[i % MLB.palette.length],
        data: metricNames.map(function (k) { return d.headline[k][i]; }) };
    }) });
  MLB.barChart(document.getElementById("label-chart"), d.labels, null, { max: 1,
    datasets: d.models.map(function (name, i) {
      return { label: name, backgroundColor: MLB.palette[i % MLB.palette.length], data: d.per_label_f1[i] };
    }) });
})(window.MLB);
