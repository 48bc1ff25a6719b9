"""Description variants as sweep values (issue 15): sources, expansion, sweep summary."""
