"""`python -m bench`: run the benchmarks and print the table."""

from bench._cli import main

raise SystemExit(main())
