// A dataset's page: label counts and the article-length histogram.
(function (MLB) {
  "use strict";
  var d = MLB.readJSON("dataset-charts");
  if (!d) return;
  if (d.labels.length) MLB.barChart(document.getElementById("label-chart"), d.labels, d.counts, { label: "articles", yTitle: "articles" });
  var h = d.histogram || {};
  if (h.labels && h.counts) MLB.barChart(document.getElementById("length-chart"), h.labels, h.counts, { label: "articles", color: MLB.palette[1], xTitle: "words per article (title + abstract)", yTitle: "articles" });
})(window.MLB);
