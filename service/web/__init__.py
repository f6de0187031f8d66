"""What the browser gets: the vendored uPlot, our chart code on top of it (charts.js,
charts.css), the files read through importlib.resources (assets.py), and the one data
object the charts draw (chart_data.py). The report pages inline them; the live dashboard
serves them."""
