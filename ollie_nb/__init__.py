"""ollie_nb: a planning LLM agent in the Jupyter kernel (`%load_ext ollie_nb`)."""

from __future__ import annotations

__version__ = "0.1.0"
