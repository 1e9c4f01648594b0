// The conflicts page: y / n resolve the conflict on screen, s skips to the next one, as
// records are screened. Typing a note is never taken for a key.
(function () {
  "use strict";
  var form = document.getElementById("resolve-form");
  if (!form) return;
  var sent = false;
  document.addEventListener("keydown", function (event) {
    var target = event.target;
    if (sent || event.ctrlKey || event.metaKey || event.altKey) return;
    if (target && (target.tagName === "INPUT" || target.tagName === "TEXTAREA" || target.tagName === "SELECT")) return;
    var key = event.key.toLowerCase();
    var button = { y: "resolve-yes", n: "resolve-no", s: "resolve-skip" }[key];
    var element = button && document.getElementById(button);
    if (!element) return;
    event.preventDefault();
    sent = true;  // one key, one resolution: a held key does not resolve the next conflict too
    element.click();
  });
})();
