"""Benchmarks of ollie_nb: `python -m bench` measures each figure against its floor and prints one table."""
