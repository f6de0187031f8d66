/* The live dashboard of regime-trader's HTTP endpoint (service/http/).
 *
 * Every POLL_MS it reads api/status (the object `regime-trader status --json` prints, of
 * the running daemon) and, for each account whose last update moved since it was drawn,
 * api/charts?account=A (service/web/chart_data.py), which RegimeCharts.render
 * (service/web/charts.js) draws: equity beside buy-and-hold, drawdown, positions, recent
 * orders, and per instrument the price over P(turbulent) with its band and convergence.
 *
 * For tests and scripts the page says what it drew, on each account's <section>:
 * data-seq (the update drawn), data-bar-time (its bar, unix seconds), data-charts (charts
 * drawn) and data-chart-points (points per chart, in drawing order); and on <body>:
 * data-ready="1" once every account with history is drawn, data-polls (polls done).
 * window.RegimeDashboard.drawn() returns the same as an object. */
(function (global) {
  "use strict";

  var POLL_MS = 2000;
  var drawn = {}; // account -> {seq, barTime, charts, points, kind}
  var polls = 0;

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function getJson(url) {
    return fetch(url, { cache: "no-store" }).then(function (response) {
      return response.json();
    });
  }

  // -- the status document, read whichever way it nests the daemon's own view ----------

  function accountsOf(status) {
    var accounts = status.accounts || {};
    if (Array.isArray(accounts)) {
      var byName = {};
      accounts.forEach(function (a) { byName[a.account || a.name] = a; });
      return byName;
    }
    return accounts;
  }

  function runtimeOf(info) {
    return info.runtime || info.worker || info;
  }

  function lastSeq(info) {
    var rt = runtimeOf(info);
    var last = rt.last_update || info.last_update || {};
    return last.seq || rt.last_seq || info.last_seq || info.seq || 0;
  }

  function age(iso) {
    if (!iso) return "";
    var seconds = (Date.now() - Date.parse(iso)) / 1000;
    if (!isFinite(seconds)) return "";
    if (seconds < 90) return seconds.toFixed(0) + " s ago";
    if (seconds < 5400) return (seconds / 60).toFixed(0) + " min ago";
    return (seconds / 3600).toFixed(1) + " h ago";
  }

  // -- the page's frame ----------------------------------------------------------------

  function daemonLine(status) {
    var d = status.daemon || status.runtime || status;
    var parts = ["pid " + (d.pid || "?"), "version " + (d.version || "?")];
    if (d.started_at) parts.push("up since " + d.started_at.replace("T", " ").slice(0, 19) + " UTC");
    if (d.config_hash || status.config_hash) parts.push("config " + (d.config_hash || status.config_hash));
    if (d.stopping) parts.push("STOPPING");
    return parts.join(" \u00b7 ");
  }

  function accountSection(name) {
    var id = "account-" + name;
    var section = document.getElementById(id);
    if (section) return section;
    section = el("section", "db-account");
    section.id = id;
    section.dataset.account = name;
    section.dataset.seq = "0";
    section.appendChild(el("div", "db-account-head"));
    section.appendChild(el("p", "db-account-note"));
    section.appendChild(el("div", "db-account-charts"));
    document.getElementById("accounts").appendChild(section);
    var link = el("a", "db-jump-link", name);
    link.href = "#" + id;
    document.getElementById("jump").appendChild(link);
    return section;
  }

  function fact(parent, label, value, className) {
    var item = el("span", "db-fact " + (className || ""));
    item.appendChild(el("b", null, label + " "));
    item.appendChild(document.createTextNode(value === undefined || value === null ? "-" : String(value)));
    parent.appendChild(item);
  }

  function drawHead(section, name, info) {
    var rt = runtimeOf(info);
    var last = rt.last_update || info.last_update || {};
    var head = section.querySelector(".db-account-head");
    head.textContent = "";
    head.appendChild(el("h2", "db-account-name", name));
    var state = rt.state || info.state || "unknown";
    var paused = rt.paused || info.paused;
    head.appendChild(el("span", "db-state db-state-" + state, paused ? state + ", paused" : state));
    fact(head, "update", lastSeq(info) || "none yet");
    fact(head, "bar", last.bar_time ? last.bar_time.replace("T", " ").slice(0, 16) + " UTC" : null);
    fact(head, "committed", age(last.at));
    fact(head, "took", last.duration_ms != null ? last.duration_ms.toFixed(0) + " ms" : null);
    fact(head, "restarts", rt.restarts != null ? rt.restarts : info.restarts);
    var error = rt.last_error || info.last_error;
    if (error) fact(head, "last error", error.event + ": " + (error.reason || error.error || ""), "db-error");
    if (rt.reason || info.reason) fact(head, "why", rt.reason || info.reason, "db-error");
  }

  // -- the charts ----------------------------------------------------------------------

  function chartPoints(data) {
    var points = [data.equity.t.length, data.equity.t.length];
    (data.instruments || []).forEach(function (inst) { points.push(inst.t.length, inst.t.length); });
    return points;
  }

  function drawCharts(section, name, seq, data) {
    var note = section.querySelector(".db-account-note");
    var box = section.querySelector(".db-account-charts");
    if (data.kind !== "account") {
      note.textContent = data.kind === "pending" ? "No update yet: the charts appear after the first one."
        : "Charts unavailable: " + (data.reason || data.kind);
      return;
    }
    note.textContent = "";
    box.style.minHeight = box.offsetHeight + "px"; // keep the scroll position while redrawing
    var charts = global.RegimeCharts.render(box, data);
    box.style.minHeight = "";
    var t = data.equity.t;
    var record = { seq: seq, barTime: t.length ? t[t.length - 1] : null, charts: charts,
      points: chartPoints(data), kind: data.kind };
    drawn[name] = record;
    section.dataset.seq = String(seq);
    section.dataset.barTime = String(record.barTime);
    section.dataset.charts = String(charts);
    section.dataset.chartPoints = record.points.join(",");
  }

  function refreshCharts(name, seq) {
    var section = accountSection(name);
    var known = drawn[name];
    if (known && known.seq === seq && known.kind === "account") return Promise.resolve();
    return getJson("api/charts?account=" + encodeURIComponent(name)).then(function (data) {
      drawCharts(section, name, seq, data);
    });
  }

  // -- the loop ------------------------------------------------------------------------

  function setLink(live, text) {
    var link = document.getElementById("link");
    link.className = "db-link " + (live ? "db-live" : "db-down");
    link.textContent = text;
  }

  function poll() {
    return getJson("api/status").then(function (status) {
      document.getElementById("daemon").textContent = daemonLine(status);
      var accounts = accountsOf(status);
      var names = Object.keys(accounts);
      names.forEach(function (name) { drawHead(accountSection(name), name, accounts[name]); });
      return Promise.all(names.map(function (name) {
        return refreshCharts(name, lastSeq(accounts[name]));
      })).then(function () { return names; });
    }).then(function (names) {
      var ready = names.length > 0 && names.every(function (n) { return drawn[n] && drawn[n].kind === "account"; });
      document.body.dataset.ready = ready ? "1" : "0";
      setLink(true, "live \u00b7 " + new Date().toISOString().slice(11, 19) + " UTC");
    }, function () {
      setLink(false, "disconnected: the daemon does not answer; retrying");
    }).then(function () {
      polls += 1;
      document.body.dataset.polls = String(polls);
      global.setTimeout(poll, POLL_MS);
    });
  }

  global.RegimeDashboard = {
    drawn: function () { return JSON.parse(JSON.stringify(drawn)); },
    pollMs: POLL_MS,
  };
  document.addEventListener("DOMContentLoaded", poll);
})(window);
