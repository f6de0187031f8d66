/* regime-trader's charts, drawn with the vendored uPlot (service/web/vendor/uplot).
 *
 * RegimeCharts.render(container, data) draws one account from the data object of
 * service/web/chart_data.py: its equity beside buy-and-hold, the drawdown, the summary,
 * positions and recent orders, and per instrument the price with the probability of the
 * turbulent regime under it (its uncertainty band and the convergence state).
 * RegimeCharts.renderFit(container, data) draws a fit (service/reports/fit_html.py).
 *
 * Both are idempotent: a second call on the same container destroys the charts of the
 * first and draws the new data (the live dashboard calls render on every refresh).
 * Times are unix seconds, shown in UTC like every time of the tables. */
(function (global) {
  "use strict";

  var STATE = "__regimeCharts"; // the container's charts and resize listener
  var COLOURS = {
    equity: "#1f5fa8", buyHold: "#8a8a8a", drawdown: "#c0392b", price: "#2c3e50",
    turbulent: "#c0392b", band: "rgba(192, 57, 43, 0.18)", converged: "#27ae60",
  };
  var REGIME_COLOURS = ["#1f5fa8", "#e08e0b", "#c0392b", "#7d3c98"];
  var HEIGHT = 220, SMALL_HEIGHT = 150;

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function chartWidth(container) {
    return Math.max(320, (container.clientWidth || 960) - 24);
  }

  function utcDate(ts) {
    return uPlot.tzDate(new Date(ts * 1e3), "Etc/UTC");
  }

  function pct(digits) {
    return function (u, values) {
      return values.map(function (v) { return v == null ? "" : (v * 100).toFixed(digits) + "%"; });
    };
  }

  function destroy(container) {
    var state = container[STATE];
    if (state) {
      state.plots.forEach(function (plot) { plot.destroy(); });
      global.removeEventListener("resize", state.onResize);
    }
    container[STATE] = null;
    while (container.firstChild) container.removeChild(container.firstChild);
  }

  function begin(container, className) {
    destroy(container);
    var state = { plots: [], onResize: null };
    state.onResize = function () {
      var width = chartWidth(container);
      state.plots.forEach(function (plot) {
        plot.setSize({ width: Math.floor(width * plot.rcShare), height: plot.height });
      });
    };
    global.addEventListener("resize", state.onResize);
    container[STATE] = state;
    var root = el("div", "rc-root " + className);
    container.appendChild(root);
    return { root: root, state: state, width: chartWidth(container) };
  }

  function section(parent, title, note) {
    var box = el("section", "rc-section");
    box.appendChild(el("h2", "rc-title", title));
    if (note) box.appendChild(el("p", "rc-note", note));
    parent.appendChild(box);
    return box;
  }

  function table(parent, spec, className) {
    var wrap = el("div", "rc-table-wrap");
    var t = el("table", "rc-table " + (className || ""));
    var head = el("tr");
    spec.columns.forEach(function (c) { head.appendChild(el("th", null, c)); });
    t.appendChild(el("thead")).appendChild(head);
    var body = t.appendChild(el("tbody"));
    spec.rows.forEach(function (row) {
      var tr = el("tr");
      row.forEach(function (cell) { tr.appendChild(el("td", null, cell)); });
      body.appendChild(tr);
    });
    if (!spec.rows.length) {
      var empty = el("tr");
      var td = el("td", "rc-empty", "none");
      td.colSpan = spec.columns.length;
      empty.appendChild(td);
      body.appendChild(empty);
    }
    wrap.appendChild(t);
    parent.appendChild(wrap);
    return t;
  }

  // share: the part of the page's width the chart takes (kept when the window resizes)
  function plot(ctx, parent, options, data, share) {
    var holder = el("div", "rc-chart");
    parent.appendChild(holder);
    share = share || 1;
    var base = { width: Math.floor(ctx.width * share), height: HEIGHT, tzDate: utcDate };
    var chart = new uPlot(Object.assign(base, options), data, holder);
    chart.rcShare = share;
    ctx.state.plots.push(chart);
    return chart;
  }

  function line(label, colour, extra) {
    return Object.assign({ label: label, stroke: colour, width: 1.5, spanGaps: true }, extra || {});
  }

  // -- one account -------------------------------------------------------------------

  function equityCharts(ctx, parent, equity, account) {
    var sync = { key: "rc-equity-" + account };
    plot(ctx, parent, {
      title: "Equity beside buy-and-hold", cursor: { sync: sync },
      series: [{}, line("equity", COLOURS.equity), line("buy & hold", COLOURS.buyHold, { dash: [6, 4] })],
    }, [equity.t, equity.equity, equity.buy_hold]);
    plot(ctx, parent, {
      title: "Drawdown", height: SMALL_HEIGHT, cursor: { sync: sync },
      scales: { y: { range: function (u, lo) { return [Math.min(lo, -0.001), 0]; } } },
      axes: [{}, { values: pct(1), size: 60 }],
      series: [{}, line("drawdown", COLOURS.drawdown, { fill: "rgba(192, 57, 43, 0.25)",
        value: function (u, v) { return v == null ? "" : (v * 100).toFixed(2) + "%"; } })],
    }, [equity.t, equity.drawdown]);
  }

  function stepped() {
    return uPlot.paths && uPlot.paths.stepped ? uPlot.paths.stepped({ align: 1 }) : undefined;
  }

  function instrumentCharts(ctx, parent, inst) {
    var box = section(parent, inst.symbol);
    var sync = { key: "rc-instrument-" + inst.symbol };
    plot(ctx, box, {
      title: inst.symbol + ": close", height: SMALL_HEIGHT, cursor: { sync: sync },
      series: [{}, line("close", COLOURS.price)],
    }, [inst.t, inst.close]);
    plot(ctx, box, {
      title: inst.symbol + ": P(turbulent regime), band of \u00b12 sd, convergence",
      height: SMALL_HEIGHT, cursor: { sync: sync },
      scales: { y: { range: [0, 1] } },
      axes: [{}, { values: pct(0), size: 50 }],
      bands: [{ series: [3, 2], fill: COLOURS.band }],
      series: [{},
        line("P(turbulent)", COLOURS.turbulent),
        line("band low", COLOURS.band, { width: 0.5 }),
        line("band high", COLOURS.band, { width: 0.5 }),
        line("converged (1 = yes)", COLOURS.converged, { width: 1, dash: [2, 3], paths: stepped() })],
    }, [inst.t, inst.p_turbulent, inst.p_lo, inst.p_hi, inst.converged]);
  }

  function render(container, data) {
    var ctx = begin(container, "rc-account");
    var head = section(ctx.root, "Account " + data.account, data.period);
    head.appendChild(el("p", "rc-note", "generated " + data.generated_at));
    equityCharts(ctx, head, data.equity, data.account);
    table(section(ctx.root, "Summary"), data.summary, "rc-summary");
    table(section(ctx.root, "Positions", "as of each symbol's last update"), data.positions);
    table(section(ctx.root, "Recent orders", "newest first"), data.orders);
    var instruments = section(ctx.root, "Instruments");
    (data.instruments || []).forEach(function (inst) { instrumentCharts(ctx, instruments, inst); });
    return ctx.state.plots.length;
  }

  // -- one fit -----------------------------------------------------------------------

  function fitSeries(ctx, parent, series) {
    var sync = { key: "rc-fit" };
    var time = series.time_axis === "time";
    var x = { time: time };
    plot(ctx, parent, {
      title: "Price", height: SMALL_HEIGHT, cursor: { sync: sync }, scales: { x: x },
      series: [{}, line(series.price_label, COLOURS.price)],
    }, [series.x, series.price]);
    var probs = series.smoothed.map(function (_, k) {
      return line("P(regime " + (k + 1) + ")", REGIME_COLOURS[k % REGIME_COLOURS.length]);
    });
    plot(ctx, parent, {
      title: "Smoothed regime probabilities (regime 1 = calmest)", cursor: { sync: sync },
      scales: { x: x, y: { range: [0, 1] } }, axes: [{}, { values: pct(0), size: 50 }],
      series: [{}].concat(probs),
    }, [series.x].concat(series.smoothed));
  }

  function histogram(ctx, parent, post) {
    var bars = uPlot.paths && uPlot.paths.bars ? uPlot.paths.bars({ size: [1, Infinity] }) : undefined;
    plot(ctx, parent, {
      title: post.name + "  (mean " + post.mean.toPrecision(4) + ", 90% in " +
        post.q5.toPrecision(4) + " to " + post.q95.toPrecision(4) + ")",
      height: SMALL_HEIGHT,
      scales: { x: { time: false } }, legend: { show: false },
      series: [{}, { label: "draws", stroke: COLOURS.equity, fill: "rgba(31, 95, 168, 0.35)", paths: bars }],
    }, [post.centres, post.counts], 0.48);
  }

  function renderFit(container, data) {
    var ctx = begin(container, "rc-fit");
    var head = section(ctx.root, "Series and regimes", data.note);
    fitSeries(ctx, head, data.series);
    table(section(ctx.root, "Parameters"), data.parameters, "rc-summary");
    table(section(ctx.root, "Diagnostics"), data.diagnostics, "rc-summary");
    var grid = el("div", "rc-grid");
    section(ctx.root, "Posteriors", "histograms of every kept draw of every chain").appendChild(grid);
    data.posteriors.forEach(function (post) { histogram(ctx, grid, post); });
    return ctx.state.plots.length;
  }

  global.RegimeCharts = { render: render, renderFit: renderFit, destroy: destroy, version: 1 };
})(window);
