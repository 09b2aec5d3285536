"""Analysis of finished runs (Qt-free): the paper's tables (report), failure categories (taxonomy), episodes
rescored with the current metrics (rescore) and the statistics behind them (stats).

It sits above core.session and core.labels: it reads what runs recorded and what annotators labelled, and
nothing below it imports it (an import-linter contract in pyproject.toml).
"""
