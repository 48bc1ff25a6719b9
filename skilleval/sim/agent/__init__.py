"""The simulated agent that does functional tasks offline (stub backend) and inside serve-sim."""
