"""Counter adapters that misbehave on purpose: the runner must contain them."""
