"""Capabilities the roles call: entity search, traversal, SPARQL; and the backends behind them."""
