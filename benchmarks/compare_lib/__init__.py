"""Helpers of benchmarks/compare: the models it times (models.py), the peer engines' worker
process (worker.py) and the driver's side of each engine (engines.py)."""
