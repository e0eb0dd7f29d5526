"""The ASGI chores every part of the library shares, one module each: paths, JSON answers, request
bodies, and calling a host's hook that may or may not be a coroutine."""
