// A model's page: F1 per label.
(function (MLB) {
  "use strict";
  var d = MLB.readJSON("per-label-data");
  if (d && d.labels.length) MLB.barChart(document.getElementById("per-label-chart"), d.labels, d.f1, { label: "F1", max: 1 });
})(window.MLB);
