"""Hydra configuration tree shipped as `skilleval.conf` (this folder must hold __init__.py)."""
