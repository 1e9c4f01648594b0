/* Screening: the session page's panel, polled as decisions come in (the screen page is
   static/js/screen.js). */
(function () {
  "use strict";

  // A refusal (403 for a reviewer removed mid-session, 404, 503) may come back as an HTML page:
  // it rejects with the server's detail when there is one, never with a JSON parse error.
  function answer(r) {
    return r.json().catch(function () { return {}; }).then(function (d) {
      if (!r.ok) throw new Error(d.detail || "The server answered " + r.status + "; nothing was changed.");
      return d;
    });
  }

  function getJSON(url) {
    return fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(answer);
  }

  // The server writes times in UTC (ISO 8601); a reviewer reads them in their own time zone.
  function localTime(iso) {
    var d = new Date(iso);
    return isNaN(d.getTime()) ? iso : d.toLocaleString();
  }
  function localTimes(root) {
    root.querySelectorAll("time[datetime]").forEach(function (t) {
      t.textContent = localTime(t.getAttribute("datetime"));
    });
  }

  function sessionPanel(panel) {
    var url = panel.getAttribute("data-summary-url");
    var every = parseInt(panel.getAttribute("data-poll-ms"), 10) || 3000;
    // The conflicts list carries forms (with their CSRF token), so it is re-read from the page
    // itself, and only when the number changes: a note being typed into a form is kept.
    function refreshConflicts() {
      return fetch(window.location.href, { credentials: "same-origin" })
        .then(function (r) { return r.text(); })
        .then(function (html) {
          var fresh = new DOMParser().parseFromString(html, "text/html").getElementById("conflicts");
          var shown = document.getElementById("conflicts");
          if (fresh && shown) shown.replaceWith(document.importNode(fresh, true));
        });
    }
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
          cell("agreement-table", a.label, "n", a.n === null ? "–" : a.n);
          cell("agreement-table", a.label, "pa", a.percent_agreement === null ? "–" : a.percent_agreement + "%");
          cell("agreement-table", a.label, "kappa", a.kappa_display);
        });
        // Absent while the session is blind for this person (they do not see the conflicts).
        var count = document.getElementById("conflict-count");
        if (count && count.textContent !== String(s.conflicts)) {
          refreshConflicts();
        }
        var ranking = document.getElementById("ranking");
        if (s.ranker_error) { ranking.textContent = s.ranker_error; ranking.className = "small error"; }
        else if (s.ranking) {
          ranking.className = "small";
          ranking.textContent = s.ranking.text + (s.ranking_refreshed_at
            ? " · Ranking refreshed " + localTime(s.ranking_refreshed_at) : "");
        }
        var p = s.stopping_panel;
        if (p) {
          document.getElementById("stopping-read").textContent = p.read;
          document.getElementById("stopping-ranked-read").textContent = p.ranked_read;
          document.getElementById("stopping-sampled-read").textContent = p.sampled_read;
          var advice = document.getElementById("stopping-advice");
          advice.textContent = "";
          p.advice.forEach(function (line) {
            var li = document.createElement("li"); li.textContent = line; advice.appendChild(li);
          });
          (p.labels || []).forEach(function (f) {
            var box = document.querySelector(".stopping-label[data-label='" + f.label + "']");
            if (!box) return;
            box.querySelector(".stopping-ahead strong").textContent = f.ahead_said;
            box.querySelector(".stopping-recall").textContent = f.recall_said;
            var rows = box.querySelectorAll(".stopping-other tbody tr");
            f.table.forEach(function (row, i) {
              if (!rows[i]) return;
              rows[i].querySelector(".more").textContent = row.more_said;
              rows[i].querySelector(".total").textContent = row.total === null ? "–" : row.total;
            });
            f.heuristics.forEach(function (h) {
              var li = box.querySelector("li[data-heuristic='" + h.name + "'] .said");
              if (li) li.textContent = h.said;
            });
          });
        }
      }).catch(function () {});
    }
    localTimes(panel);
    window.setInterval(poll, every);
  }

  var panel = document.getElementById("session-panel");
  if (panel) sessionPanel(panel);
})();
