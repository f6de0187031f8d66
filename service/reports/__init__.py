"""Reports on what an account did: the performance figures (pure numerics), the summary a
backtest prints, and the self-contained HTML pages of `report` and `fit --html`."""
