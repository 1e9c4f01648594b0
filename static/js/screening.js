/* Screening: the keyboard-first screening page (y/n/u per label, next record prefetched so it
   shows on keydown) and the session page's panel, polled as decisions come in. */
(function () {
  "use strict";

  function csrf() {
    var input = document.querySelector("input[name=csrfmiddlewaretoken]");
    return input ? input.value : "";
  }

  function getJSON(url) {
    return fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (r) { return r.json(); });
  }

  function screenPage(root) {
    var labels = root.getAttribute("data-labels").split("|");
    var nextUrl = root.getAttribute("data-next-url");
    var decideUrl = root.getAttribute("data-decide-url");
    var current = null, upcoming = null, answers = {}, at = 0, prefetching = null;
    var error = document.getElementById("screen-error");

    function prefetch() {
      var url = nextUrl + (current ? "?exclude=" + current.id : "");
      prefetching = getJSON(url).then(function (d) { upcoming = d.record; prefetching = null; return d.record; });
      return prefetching;
    }

    function draw() {
      var done = document.getElementById("screen-done");
      document.getElementById("record").hidden = !current;
      done.hidden = !!current;
      if (!current) return;
      document.getElementById("record-position").textContent = "Record " + current.position + (current.ext_id ? " · " + current.ext_id : "");
      document.getElementById("record-title").textContent = current.title;
      document.getElementById("record-abstract").textContent = current.abstract;
      document.getElementById("record-note").value = current.note || "";
      var box = document.getElementById("record-labels");
      box.textContent = "";
      labels.forEach(function (label, i) {
        var row = document.createElement("div");
        row.className = "screen-label" + (i === at ? " active" : "");
        row.setAttribute("data-label", label);
        row.textContent = label + ": " + (answers[label] || current.mine[label] || "?");
        box.appendChild(row);
      });
    }

    function show(record) {
      current = record; answers = {}; at = 0; draw();
    }

    function save(record, values, note) {
      return fetch(decideUrl, {
        method: "POST", credentials: "same-origin",
        headers: { "Content-Type": "application/json", "X-CSRFToken": csrf(), Accept: "application/json" },
        body: JSON.stringify({ record: record.id, values: values, note: note }),
      }).then(function (r) {
        return r.json().then(function (d) {
          error.hidden = r.ok; error.textContent = r.ok ? "" : (d.detail || "Not saved.");
        });
      });
    }

    function advance() {
      var values = answers, note = document.getElementById("record-note").value, decided = current;
      if (upcoming && upcoming.id !== decided.id) { show(upcoming); } else { current = null; draw(); }
      upcoming = null;
      save(decided, values, note).then(function () {
        if (!current) { return getJSON(nextUrl).then(function (d) { show(d.record); prefetch(); }); }
        return prefetch();
      });
    }

    document.addEventListener("keydown", function (event) {
      if (!current || event.target.id === "record-note") return;
      var key = event.key.toLowerCase();
      var value = { y: "yes", n: "no", u: "unsure" }[key];
      if (value) {
        event.preventDefault();
        answers[labels[at]] = value;
        at = Math.min(labels.length - 1, at + 1);
        if (labels.every(function (l) { return answers[l]; })) { advance(); } else { draw(); }
      } else if (key === "tab" || key === "arrowdown") {
        event.preventDefault(); at = (at + 1) % labels.length; draw();
      } else if (key === "arrowup") {
        event.preventDefault(); at = (at + labels.length - 1) % labels.length; draw();
      }
    });

    getJSON(nextUrl).then(function (d) { show(d.record); prefetch(); });
  }

  function sessionPanel(panel) {
    var url = panel.getAttribute("data-summary-url");
    function cell(table, label, cls, text) {
      var row = document.querySelector("#" + table + " tr[data-label='" + label + "']");
      if (row) row.querySelector("." + cls).textContent = text;
    }
    function poll() {
      getJSON(url).then(function (s) {
        document.getElementById("remaining").textContent = s.remaining;
        s.stopping.forEach(function (x) {
          cell("stopping-table", x.label, "claim", x.claimable_recall.toFixed(3));
          cell("stopping-table", x.label, "needed", x.more_needed);
          cell("stopping-table", x.label, "sample", x.sampled + " / " + x.k);
          cell("stopping-table", x.label, "p", x.p_value.toFixed(4));
        });
        s.agreement.forEach(function (a) {
          cell("agreement-table", a.label, "n", a.n);
          cell("agreement-table", a.label, "pa", a.percent_agreement === null ? "–" : a.percent_agreement + "%");
          cell("agreement-table", a.label, "kappa", a.kappa === null ? "–" : "κ = " + a.kappa + " (" + a.kappa_low + " to " + a.kappa_high + ")");
        });
        document.getElementById("conflict-count").textContent = s.conflicts;
        var ranking = document.getElementById("ranking");
        if (s.ranker_error) { ranking.textContent = s.ranker_error; ranking.className = "small error"; }
        else if (s.ranking_refreshed_at) { ranking.textContent = "Ranking refreshed " + s.ranking_refreshed_at; }
      }).catch(function () {});
    }
    window.setInterval(poll, 3000);
  }

  var root = document.getElementById("screen");
  if (root) screenPage(root);
  var panel = document.getElementById("session-panel");
  if (panel) sessionPanel(panel);
})();
