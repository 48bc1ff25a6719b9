"""Backend tests: the real claude CLI fixture (`claude_bin`) and serve-sim fixtures live in
tests/conftest.py."""
