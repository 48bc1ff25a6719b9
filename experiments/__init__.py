"""Bundled example skills and eval sets, shipped as `skilleval.examples`."""
