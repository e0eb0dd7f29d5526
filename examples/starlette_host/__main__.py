"""`python -m examples.starlette_host [--host H] [--port P]` serves the bookshop;
`python -m examples.starlette_host token [--scopes S]` prints a new API token for it."""

from examples.host_command import run
from examples.starlette_host.app import database_url

if __name__ == "__main__":
    run("examples.starlette_host", database_url(), default_scopes="books.read")
