// On every page. The Content-Security-Policy allows no inline scripts or style attributes, so
// what templates used to write inline is carried in data- attributes and applied here.
(function () {
  "use strict";
  // Progress bars: data-width is a percentage.
  document.querySelectorAll("[data-width]").forEach(function (el) {
    var pct = parseFloat(el.getAttribute("data-width"));
    if (!isNaN(pct)) el.style.width = Math.max(0, Math.min(100, pct)) + "%";
  });
  // Heatmap cells: data-heat is the cell's opacity of the brand colour, 0..1.
  document.querySelectorAll("[data-heat]").forEach(function (el) {
    var alpha = parseFloat(el.getAttribute("data-heat"));
    if (!isNaN(alpha)) el.style.backgroundColor = "rgba(31, 111, 139, " + alpha + ")";
  });
  // Destructive forms ask first: data-confirm is the question.
  document.addEventListener("submit", function (event) {
    var form = event.target.closest ? event.target.closest("form[data-confirm]") : null;
    if (form && !window.confirm(form.getAttribute("data-confirm"))) event.preventDefault();
  });
  // Drop-down menus (<details data-menu>, e.g. the project switcher) close on a click elsewhere
  // or on Escape, as menus do.
  function closeMenus(except) {
    document.querySelectorAll("details[data-menu][open]").forEach(function (menu) {
      if (menu !== except) menu.removeAttribute("open");
    });
  }
  document.addEventListener("click", function (event) {
    closeMenus(event.target.closest ? event.target.closest("details[data-menu]") : null);
  });
  document.addEventListener("keydown", function (event) {
    if (event.key === "Escape") closeMenus(null);
  });
})();
