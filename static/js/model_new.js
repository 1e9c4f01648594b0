// "Train a model": live training-time estimates and the custom model folder toggle.
(function (MLB) {
  "use strict";
  var form = document.getElementById("new-model-form");
  var est = MLB.readJSON("estimator-data");
  if (!form || !est) return;
  function value(name) {
    var el = form.querySelector('[name="' + name + '"]:checked') || form.querySelector('[name="' + name + '"]');
    return el ? el.value : "";
  }
  function setting(name) {
    var manual = parseFloat(value(name));
    if (!isNaN(manual)) return manual;
    return (est.presets[value("preset")] || {})[name];
  }
  // classification/estimates.py training_estimate_seconds, line for line.
  function effectiveLength(maxLength, p95Words) {
    var words = p95Words > 0 ? p95Words : est.fallback_p95_words;
    return Math.max(32, Math.min(maxLength, words * est.tokens_per_word + est.special_tokens));
  }
  function seconds(type) {
    var data = est.datasets[value("dataset")] || {sizes: {}, p95_words: null};
    var train = data.sizes.train || 0, val = data.sizes.validation || 0, test = data.sizes.test || 0;
    var scale = Math.pow(Math.max(1, est.plan.threads), 0.8) * (est.gpu_speedup[est.plan.device] || 1) * Math.max(est.rates[type] || 1, 1e-6);
    var work;
    if (est.single_pass.indexOf(type) >= 0) {
      work = train + val + test;
    } else {
      var epochs = Math.max(1, setting("epochs") || 1);
      var length = effectiveLength(setting("max_length") || 256, data.p95_words) / 256;
      work = length * (train * epochs + est.eval_cost * (val * epochs + test));
    }
    return (est.overhead[type] || 0) + work / scale;
  }
  function update() {
    form.querySelectorAll("[data-estimate]").forEach(function (el) {
      el.textContent = MLB.fmtSeconds(seconds(el.getAttribute("data-estimate")));
    });
    var type = value("model_type");
    document.getElementById("estimate-total").textContent = type ? MLB.fmtSeconds(seconds(type)) + " (estimate)" : "–";
    var pathField = document.getElementById("model-path-field");  // staff only
    if (pathField) pathField.hidden = type !== "custom";
  }
  form.addEventListener("change", update);
  form.addEventListener("input", update);
  update();
})(window.MLB);
