"""The foundation every stage shares: the experiment config's one schema and its defaults, start-up helpers."""
