"""For the tests of mockllm's users: the HTTP client of the admin routes, sessions and
their assertions, the in-process server, and the pytest plugin."""
