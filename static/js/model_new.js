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
  function seconds(type) {
    var rows = est.rows[value("dataset")] || 0;
    var rate = (est.rates[type] || 1) * Math.pow(Math.max(1, est.plan.threads), 0.8) * (est.gpu_speedup[est.plan.device] || 1);
    var single = est.single_pass.indexOf(type) >= 0;
    var passes = single ? 1 : Math.max(1, setting("epochs") || 1);
    var len = single ? 1 : Math.max(32, setting("max_length") || 256) / 256;
    return (est.overhead[type] || 0) + rows * passes * len / rate;
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
