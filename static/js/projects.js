// The invitation-created page: the link selects itself on focus, and a Copy button copies it
// (shown only where the clipboard can be written: a secure page, a browser that allows it).
(function () {
  "use strict";
  document.querySelectorAll("[data-select-on-focus]").forEach(function (input) {
    input.addEventListener("focus", function () { input.select(); });
  });
  document.querySelectorAll("[data-copy]").forEach(function (button) {
    var source = document.querySelector(button.getAttribute("data-copy"));
    if (!source || !navigator.clipboard || !window.isSecureContext) return;
    button.hidden = false;
    button.addEventListener("click", function () {
      navigator.clipboard.writeText(source.value).then(function () {
        button.textContent = "Copied";
      }, function () {
        source.focus();
        button.textContent = "Press Ctrl+C to copy";
      });
    });
  });
})();
