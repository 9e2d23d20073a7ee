"""The sample-corpus generator behind data/generate.py (stdlib only, deterministic)."""
