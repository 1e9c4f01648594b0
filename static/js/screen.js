/* The screen page: a reviewer answers y/n/u per label as fast as keys go, and no answer is lost.

   - The next record is prefetched, so it shows on the key that answers the one before it.
   - Keys pressed while no record is on screen (the next one is still loading) are queued and
     replayed in order on the record that arrives, never dropped.
   - Saves go one at a time, in the order answered. Each shows as unsaved, saving or saved; a
     save that fails for want of the server (network, timeout, 5xx, 429) is retried with
     exponential backoff, and leaving the page while any is unsaved asks first. The server's
     upsert makes a retried save harmless.
   - Undo (z) brings the reviewer's last decided record back to answer again.
   - The citation (authors, year, journal) and keywords show above the abstract, which scrolls
     in its own pane so the buttons stay in view; the save log names records by their title.
   The record's text is built from text nodes (highlights as <mark> elements): nothing of it
   is ever parsed as HTML. */
(function () {
  "use strict";

  var root = document.getElementById("screen-desk");
  if (!root) return;

  var RETRYABLE = { 0: true, 408: true, 425: true, 429: true, 500: true, 502: true, 503: true, 504: true };
  var TIMEOUT_MS = 15000;
  var KEYS = { y: "yes", n: "no", u: "unsure" };
  var labels = root.getAttribute("data-labels").split("|");
  var nextUrl = root.getAttribute("data-next-url");
  var decideUrl = root.getAttribute("data-decide-url");
  var recentUrl = root.getAttribute("data-recent-url");
  var skipUrl = root.getAttribute("data-skip-url");
  var skipping = {};      // records set aside whose skip is still on its way
  var $ = function (id) { return document.getElementById(id); };
  var reasonBox = $("record-reason");

  var current = null;     // the record on screen
  var again = false;      // it is one the reviewer decided before (undo)
  var ahead = [];         // [record, again] to show before asking the server (put back by undo)
  var upcoming = null;    // the prefetched next record
  var answers = {}, at = 0, finished = false, asked = 0;
  var keyQueue = [];      // keys pressed while no record was on screen
  var queue = [];         // saves not yet stored, in the order answered; queue[0] is in flight
  var sending = false;
  var recent = [];        // decided records, newest last: what undo brings back
  var log = [];           // the last saves, as the panel lists them

  function csrf() {
    var input = document.querySelector("input[name=csrfmiddlewaretoken]");
    return input ? input.value : "";
  }

  function backoff(attempt) {
    var base = Math.min(15000, 500 * Math.pow(2, Math.max(0, attempt - 1)));
    return Math.round(base * (0.75 + Math.random() * 0.5));
  }

  // fetch with a deadline; resolves {status, body}, status 0 for a network error or timeout.
  function request(url, options) {
    var ctrl = window.AbortController ? new AbortController() : null;
    var timer = ctrl ? window.setTimeout(function () { ctrl.abort(); }, TIMEOUT_MS) : null;
    options = Object.assign({ credentials: "same-origin" }, options || {});
    options.headers = Object.assign({ Accept: "application/json" }, options.headers || {});
    if (ctrl) options.signal = ctrl.signal;
    return fetch(url, options).then(function (r) {
      return r.json().catch(function () { return {}; }).then(function (body) {
        return { status: r.status, ok: r.ok, body: body };
      });
    }, function () { return { status: 0, ok: false, body: {} }; }).then(function (res) {
      if (timer) window.clearTimeout(timer);
      return res;
    });
  }

  function explain(res) {
    if (res.body && res.body.detail) return res.body.detail;
    return res.status ? "the server answered " + res.status : "the server could not be reached";
  }

  function showError(text) {
    $("screen-error").hidden = !text; $("screen-error").textContent = text || "";
  }

  // --- the record on screen -------------------------------------------------------------

  function marked(node, segments, fallback) {
    node.textContent = "";
    (segments || [[fallback || "", ""]]).forEach(function (seg) {
      if (!seg[1]) { node.appendChild(document.createTextNode(seg[0])); return; }
      var mark = document.createElement("mark");
      mark.className = "term " + seg[1];
      mark.textContent = seg[0];
      node.appendChild(mark);
    });
  }

  function draw() {
    $("record").hidden = !current;
    $("screen-done").hidden = !!current || !finished;
    if (!current) return;
    $("record-position").textContent = "Record " + current.position + (current.ext_id ? " · " + current.ext_id : "");
    $("record-again").hidden = !again;
    marked($("record-title"), current.title_marks, current.title);
    drawCitation(current.citation || {});
    marked($("record-abstract"), current.abstract_marks, current.abstract);
    var box = $("record-labels");
    box.textContent = "";
    labels.forEach(function (label, i) {
      var row = document.createElement("div");
      row.className = "screen-label" + (i === at ? " active" : "");
      row.setAttribute("data-label", label);
      row.textContent = label + ": ";
      var value = document.createElement("span");
      value.className = "badge " + (i === at ? "running" : "local");
      value.textContent = answers[label] || "?";
      row.appendChild(value);
      var was = (current.mine || {})[label];
      if (again && was) row.appendChild(document.createTextNode(" (was " + was + ")"));
      if ((current.locked || []).indexOf(label) >= 0) row.appendChild(document.createTextNode(" · resolved by a maintainer"));
      box.appendChild(row);
    });
  }

  function drawCitation(cite) {
    var authors = cite.authors || [], keywords = cite.keywords || [];
    $("record-authors").textContent = authors.join(", ");
    $("record-year").textContent = cite.year ? (authors.length ? " (" + cite.year + ")" : cite.year) : "";
    $("record-journal").textContent = cite.journal ? ((authors.length || cite.year) ? " · " : "") + cite.journal : "";
    $("record-citation").hidden = !(authors.length || cite.year || cite.journal);
    var box = $("record-keywords");
    box.textContent = "";
    box.hidden = !keywords.length;
    if (keywords.length) box.appendChild(document.createTextNode("Keywords: "));
    keywords.forEach(function (word) {
      var tag = document.createElement("span");
      tag.className = "badge local keyword";
      tag.textContent = word;
      box.appendChild(tag);
    });
  }

  // The log and its messages name a record by its title (or first sentence), cut to a line.
  function named(record) {
    var title = record.title_shown || ("Record " + record.position);
    return title.length > 90 ? title.slice(0, 89) + "…" : title;
  }

  function show(record, isAgain) {
    current = record; again = !!isAgain; answers = {}; at = 0;
    $("record-abstract").scrollTop = 0;
    $("record-note").value = record.note || "";
    if (reasonBox) {
      var reasons = record.reasons || {};
      reasonBox.value = reasons[labels[0]] || Object.keys(reasons).map(function (k) { return reasons[k]; })[0] || "";
    }
    draw();
    // Keys pressed while it loaded answer it now, in the order pressed.
    while (current && keyQueue.length) handleKey(keyQueue.shift());
  }

  function pendingIds() {
    var ids = {};
    queue.forEach(function (s) { ids[s.record.id] = true; });
    ahead.forEach(function (pair) { ids[pair[0].id] = true; });
    if (current) ids[current.id] = true;
    Object.keys(skipping).forEach(function (id) { ids[id] = true; });
    return ids;
  }

  // Asks for the record after the one on screen (or the one to show when none is). Only the
  // newest question's answer counts: an older one may name a record answered since.
  function fetchNext() {
    var ticket = ++asked;
    var ids = Object.keys(pendingIds());
    request(nextUrl + (ids.length ? "?exclude=" + ids.join(",") : "")).then(function (res) {
      if (ticket !== asked) return;
      if (!res.ok) {
        showError("Could not load the next record (" + explain(res) + ")" + (RETRYABLE[res.status] ? "; trying again." : "."));
        if (RETRYABLE[res.status]) window.setTimeout(function () { if (ticket === asked) fetchNext(); }, backoff(2));
        return;
      }
      var record = res.body.record && !pendingIds()[res.body.record.id] ? res.body.record : null;
      if (current) { upcoming = record; return; }
      if (record) { finished = false; show(record, false); fetchNext(); return; }
      finished = queue.length === 0 && ahead.length === 0;
      if (finished) keyQueue = [];
      draw();
    });
  }

  function nextOnScreen() {
    if (ahead.length) { var pair = ahead.shift(); show(pair[0], pair[1]); if (!upcoming) fetchNext(); return; }
    if (upcoming) { var r = upcoming; upcoming = null; show(r, false); fetchNext(); return; }
    current = null; draw(); fetchNext();
  }

  function advance() {
    var reason = reasonBox ? reasonBox.value : "";
    var reasons = {};
    labels.forEach(function (l) { if (answers[l] === "no" && reason) reasons[l] = reason; });
    var decided = Object.assign({}, current, { mine: Object.assign({}, answers), reasons: reasons,
                                               note: $("record-note").value });
    enqueue({ record: decided, values: Object.assign({}, answers), reasons: reasons, note: decided.note });
    recent.push(decided);
    if (recent.length > 50) recent.shift();
    nextOnScreen();
  }

  function undo() {
    var last = recent.pop();
    if (!last) { showError("Nothing of yours to change on this page yet."); return; }
    if (current) ahead.unshift([current, again]);
    upcoming = null; asked++;   // a prefetch in flight must not overwrite what undo shows
    show(last, true);
  }

  // s: set the record aside; the server hands it back once the others are read, and never
  // counts it as decided. Not for one decided before (undo): that one is changed, not skipped.
  function skip() {
    if (again) { showError("You decided this record before: change your answer, or undo again."); return; }
    var record = current;
    skipping[record.id] = true;
    request(skipUrl, {
      method: "POST", body: JSON.stringify({ record: record.id }),
      headers: { "Content-Type": "application/json", "X-CSRFToken": csrf() },
    }).then(function (res) {
      delete skipping[record.id];
      if (!res.ok) { showError("Could not skip record " + record.position + " (" + explain(res) + ")."); return; }
      $("skipped-said").textContent = res.body.said || "";
      if (!current) fetchNext();   // it was the last one: it comes back now
    });
    nextOnScreen();
  }

  function handleKey(key) {
    var value = KEYS[key];
    if (value) {
      answers[labels[at]] = value;
      at = Math.min(labels.length - 1, at + 1);
      if (labels.every(function (l) { return answers[l]; })) advance(); else draw();
    } else if (key === "tab" || key === "arrowdown") {
      at = (at + 1) % labels.length; draw();
    } else if (key === "arrowup") {
      at = (at + labels.length - 1) % labels.length; draw();
    } else if (key === "z") {
      undo();
    } else if (key === "s") {
      skip();
    } else if (/^[1-9]$/.test(key) && reasonBox && reasonBox.options.length > Number(key)) {
      reasonBox.selectedIndex = Number(key);
    }
  }

  // --- saves ------------------------------------------------------------------------------

  function enqueue(save) {
    save.state = "unsaved"; save.attempts = 0;
    queue.push(save);
    log.push(save);
    if (log.length > 12) log.shift();
    drawSaves();
    pump();
  }

  function pump() {
    if (sending || !queue.length) return;
    var save = queue[0];
    sending = true; save.state = "saving"; drawSaves();
    request(decideUrl, {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-CSRFToken": csrf() },
      body: JSON.stringify({ record: save.record.id, values: save.values, reasons: save.reasons, note: save.note }),
    }).then(function (res) {
      if (res.ok) {
        save.state = "saved"; save.message = "";
        if (res.body.progress) drawProgress(res.body.progress);
        queue.shift(); sending = false;
        log.forEach(function (s) {  // an earlier refusal of this record is answered now
          if (s.state === "refused" && s.record.id === save.record.id) s.state = "superseded";
        });
        // A refusal stays said while it is in the log: the reviewer may press z to answer again.
        if (!log.some(function (s) { return s.state === "refused"; })) showError("");
      } else if (RETRYABLE[res.status]) {
        save.attempts += 1; save.state = "unsaved";
        var wait = backoff(save.attempts);
        save.message = explain(res) + "; retrying in " + Math.ceil(wait / 1000) + " s";
        drawSaves();
        window.setTimeout(function () { sending = false; pump(); }, wait);
        return;
      } else {
        // Refused (a rule, not the network): retrying would be refused again. Said, and the
        // reviewer can press z to answer the record again.
        save.state = "refused"; save.message = explain(res);
        showError("Record " + save.record.position + " was not saved (“" + named(save.record) + "”): " + save.message);
        queue.shift(); sending = false;
      }
      drawSaves();
      if (queue.length) pump();
      else if (!current || !upcoming) fetchNext();
    });
  }

  function drawSaves() {
    var list = $("save-log");
    list.textContent = "";
    log.slice().reverse().forEach(function (save) {
      var li = document.createElement("li");
      li.setAttribute("data-record", save.record.id);
      li.setAttribute("data-state", save.state);
      var title = document.createElement("span");
      title.className = "save-title";
      title.title = save.record.title_shown || "";
      title.textContent = named(save.record);
      li.appendChild(title);
      var text = " · " + labels.map(function (l) { return l + ": " + save.values[l]; }).join(", ");
      li.appendChild(document.createTextNode(text + " "));
      var badge = document.createElement("span");
      badge.className = "badge " + { saved: "ok", saving: "running", unsaved: "stalled", refused: "failed", superseded: "local" }[save.state];
      badge.textContent = { refused: "not saved", superseded: "answered again" }[save.state] || save.state;
      li.appendChild(badge);
      if (save.message) li.appendChild(document.createTextNode(" " + save.message));
      list.appendChild(li);
    });
    var waiting = queue.length;
    $("save-status").textContent = waiting ? waiting + " unsaved: keep this page open until they are saved." : "All saved.";
    $("save-status").setAttribute("data-unsaved", String(waiting));
  }

  function drawProgress(p) {
    $("mine-today").textContent = p.mine_today;
    $("mine-total").textContent = p.mine;
    $("session-done").textContent = p.done;
    $("session-remaining").textContent = p.remaining;
  }

  // --- events -----------------------------------------------------------------------------

  window.addEventListener("beforeunload", function (event) {
    if (!queue.length) return;
    event.preventDefault();
    event.returnValue = "";   // older browsers need it set to ask
  });

  function press(key) {
    if (current) { handleKey(key); return; }
    if (!finished) keyQueue.push(key);
  }

  document.addEventListener("keydown", function (event) {
    var tag = event.target && event.target.tagName;
    if (tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA") return;
    // Ctrl+R, Alt+N and the like belong to the browser, not to the decision.
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    var key = event.key.toLowerCase();
    if (!(KEYS[key] || key === "tab" || key === "arrowdown" || key === "arrowup" || key === "z" || key === "s" || /^[1-9]$/.test(key))) return;
    event.preventDefault();
    press(key);
  });

  Array.prototype.forEach.call(root.querySelectorAll("button[data-key]"), function (button) {
    button.addEventListener("click", function () { press(button.getAttribute("data-key")); });
  });

  request(recentUrl).then(function (res) {
    if (!res.ok) return;
    // Newest first from the server; kept newest last, under what this page decides itself.
    recent = res.body.records.slice().reverse().concat(recent);
    if (res.body.progress && !log.length) drawProgress(res.body.progress);
  });
  drawSaves();
  fetchNext();
})();
