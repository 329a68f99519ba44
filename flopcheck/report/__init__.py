"""Pure functions from results to text and JSON-ready dicts."""
