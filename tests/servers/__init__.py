"""Local model servers (127.0.0.1) shared by tests and benchmarks; the product never imports them."""
