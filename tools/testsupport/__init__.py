"""Test fixtures shared by the Python tests that run the real daemon (clients/python/tests,
players/web/tests): the daemon as a subprocess and a bounded waiting helper."""
