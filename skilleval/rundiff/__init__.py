"""Comparing two runs (`skilleval diff A B`) and the paired statistics behind the
regression gate (`gate.baseline`)."""
