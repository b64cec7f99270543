"""Test suites as data (hw4.toml, hw4-mini.toml), the deterministic input generator and the
prepared-output cache. Imports neither the web app nor the worker."""
