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
 * RegimeCharts.plots(container) returns the uPlot instances drawn there (what tests read).
 * Every y axis is as wide as its widest tick label, and its labels carry as many decimals
 * as its tick step needs (numberTicks, percentTicks).
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

  // -- axes: tick labels as wide as they need, with the decimals that tell them apart ----

  // The fewest decimals that write a multiple of `step` exactly (uPlot's tick steps are
  // 1, 2, 2.5 and 5 x 10^k): 0.05 -> 2, 0.25 -> 2, 5 -> 0.
  function decimalsOf(step) {
    if (!(step > 0) || !isFinite(step)) return 0;
    for (var d = 0; d < 12; d++) {
      var scaled = step * Math.pow(10, d);
      if (Math.abs(scaled - Math.round(scaled)) < 1e-6 * scaled) return d;
    }
    return 12;
  }

  // The tick step: uPlot's increment, else the smallest gap between the ticks.
  function tickStep(splits, incr) {
    if (incr > 0 && isFinite(incr)) return incr;
    var step = Infinity;
    for (var i = 1; i < splits.length; i++) {
      var gap = Math.abs(splits[i] - splits[i - 1]);
      if (gap > 0 && gap < step) step = gap;
    }
    return step === Infinity ? 0 : step;
  }

  // A number axis: grouped thousands ("100,000"), decimals from the step.
  function numberTicks(u, splits, axisIdx, space, incr) {
    var d = decimalsOf(tickStep(splits, incr));
    return splits.map(function (v) {
      return v == null ? "" : v.toLocaleString("en-US",
        { minimumFractionDigits: d, maximumFractionDigits: d });
    });
  }

  // A fraction axis in per cent (drawdown, probabilities): -0.05% and -0.10% stay apart.
  function percentTicks(u, splits, axisIdx, space, incr) {
    var d = decimalsOf(100 * tickStep(splits, incr));
    return splits.map(function (v) {
      return v == null ? "" : (v * 100).toFixed(d).replace(/^-(0\.?0*)$/, "$1") + "%";
    });
  }

  // The axis' width from its widest tick label, so "100,000" is never cut to "0,000"
  // (uPlot asks again with the labels of each layout pass until the sizes settle).
  function axisSize(u, values, axisIdx) {
    var axis = u.axes[axisIdx];
    var size = axis.ticks.size + axis.gap + 4;
    if (values && values.length) {
      var ratio = uPlot.pxRatio || global.devicePixelRatio || 1, widest = 0;
      u.ctx.font = axis.font[0];
      values.forEach(function (v) {
        if (v != null && v !== "") widest = Math.max(widest, u.ctx.measureText(String(v)).width);
      });
      size += widest / ratio;
    }
    return Math.ceil(size);
  }

  // The pixels between y ticks: uPlot's 30, less on a short chart so that it still has
  // a few labels (a price moving within 97.6..98.5 on a 150 px chart got only "98").
  function tickSpace(u, axisIdx, min, max, plotDim) {
    return Math.max(18, Math.min(30, plotDim / 4));
  }

  // The y axis of a chart: its labels (numberTicks or percentTicks), sized to fit them;
  // `incrs`, when given, the tick steps it may use.
  function yAxis(ticks, incrs) {
    var axis = { values: ticks, size: axisSize, space: tickSpace };
    if (incrs) axis.incrs = incrs;
    return axis;
  }

  // Tick steps of 1, 2 and 5 x 10^k from `lo` to `hi` (both powers of ten).
  function steps125(lo, hi) {
    var steps = [];
    for (var k = Math.round(Math.log10(lo)); k <= Math.round(Math.log10(hi)); k++) {
      var mag = Number("1e" + k);  // exact, unlike repeated multiplication
      steps.push(mag, 2 * mag, 5 * mag);
    }
    return steps;
  }
  var COUNT_STEPS = steps125(1, 1e9);  // whole steps: no tick at 2.5 draws
  var FRACTION_STEPS = steps125(1e-8, 1);  // per cent: -0.02%, -0.04%, never -0.025%

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
      axes: [{}, yAxis(numberTicks)],
      series: [{}, line("equity", COLOURS.equity), line("buy & hold", COLOURS.buyHold, { dash: [6, 4] })],
    }, [equity.t, equity.equity, equity.buy_hold]);
    plot(ctx, parent, {
      title: "Drawdown", height: SMALL_HEIGHT, cursor: { sync: sync },
      scales: { y: { range: function (u, lo) { return [Math.min(lo, -0.001), 0]; } } },
      axes: [{}, yAxis(percentTicks, FRACTION_STEPS)],
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
      axes: [{}, yAxis(numberTicks)],
      series: [{}, line("close", COLOURS.price)],
    }, [inst.t, inst.close]);
    plot(ctx, box, {
      title: inst.symbol + ": P(turbulent regime), band of \u00b12 sd, convergence",
      height: SMALL_HEIGHT, cursor: { sync: sync },
      scales: { y: { range: [0, 1] } },
      axes: [{}, yAxis(percentTicks, FRACTION_STEPS)],
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
    var xAxis = time ? {} : { values: numberTicks };
    plot(ctx, parent, {
      title: "Price", height: SMALL_HEIGHT, cursor: { sync: sync }, scales: { x: x },
      axes: [xAxis, yAxis(numberTicks)],
      series: [{}, line(series.price_label, COLOURS.price)],
    }, [series.x, series.price]);
    var probs = series.smoothed.map(function (_, k) {
      return line("P(regime " + (k + 1) + ")", REGIME_COLOURS[k % REGIME_COLOURS.length]);
    });
    plot(ctx, parent, {
      title: "Smoothed regime probabilities (regime 1 = calmest)", cursor: { sync: sync },
      scales: { x: x, y: { range: [0, 1] } }, axes: [xAxis, yAxis(percentTicks, FRACTION_STEPS)],
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
      axes: [{ values: numberTicks }, yAxis(numberTicks, COUNT_STEPS)],
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

  // The uPlot instances drawn in `container` by the last render or renderFit, in drawing
  // order (a copy; empty when none): for tests and tools that read what was drawn.
  function plots(container) {
    var state = container && container[STATE];
    return state ? state.plots.slice() : [];
  }

  global.RegimeCharts = {
    render: render, renderFit: renderFit, destroy: destroy, plots: plots, version: 1,
  };
})(window);
