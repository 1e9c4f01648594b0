// The upload form (step 1): a 250 MB file takes minutes to send, and a plain post shows nothing
// while it goes. This sends the same form with XMLHttpRequest, shows the bytes sent in the
// page's <progress>, then shows the server's answer as a plain post would: the preview page or
// the form with its error written over this document, a redirect followed. Without this script
// (or without FormData) the form posts as before.
(function () {
  "use strict";
  var form = document.getElementById("upload-form");
  var box = document.getElementById("upload-progress");
  if (!form || !box || !window.FormData || !window.XMLHttpRequest) return;
  var bar = box.querySelector("progress");
  var text = box.querySelector("[data-progress-text]");
  var button = form.querySelector("button[type=submit]");

  function mb(bytes) { return (bytes / 1048576).toFixed(1) + " MB"; }

  function show(message, percent) {
    box.hidden = false;
    text.textContent = message;
    if (percent === null) bar.removeAttribute("value");  // indeterminate: the server is reading
    else bar.value = percent;
  }

  function failed(message) {
    show(message, 0);
    if (button) button.disabled = false;
  }

  function answer(xhr, url) {
    // A redirect (an expired upload, a login) was followed by the browser: go there, as a
    // plain post would have. Any other answer is a whole page: it replaces this one.
    if (xhr.responseURL && xhr.responseURL.split("#")[0] !== url) {
      window.location.assign(xhr.responseURL);
      return;
    }
    document.open();
    document.write(xhr.responseText);
    document.close();
  }

  form.addEventListener("submit", function (event) {
    event.preventDefault();
    var url = new URL(form.getAttribute("action") || window.location.href, window.location.href)
      .href.split("#")[0];
    var xhr = new XMLHttpRequest();
    xhr.open("POST", url);
    xhr.upload.onprogress = function (e) {
      if (!e.lengthComputable) { show("Uploading… " + mb(e.loaded) + " sent", null); return; }
      var percent = Math.floor((e.loaded / e.total) * 100);
      show("Uploading… " + percent + "% (" + mb(e.loaded) + " of " + mb(e.total) + ")", percent);
    };
    xhr.upload.onload = function () { show("Uploaded; reading the file…", null); };
    xhr.onload = function () { answer(xhr, url); };
    xhr.onerror = function () {
      failed("The upload stopped (the connection was lost, or the server refused a file this " +
             "large). Check the file and try again.");
    };
    xhr.onabort = function () { failed("The upload was cancelled."); };
    if (button) button.disabled = true;
    show("Uploading… 0%", 0);
    xhr.send(new FormData(form));
  });
})();
