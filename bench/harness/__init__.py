"""Strata vs Apache Kafka side-by-side benchmark harness (driven by bench/run.py)."""
