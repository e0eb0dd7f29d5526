"""`python -m examples.raw_asgi_host [--host H] [--port P]` serves the recipe site;
`python -m examples.raw_asgi_host token [--scopes S]` prints a new API token for it."""

from examples.host_command import run
from examples.raw_asgi_host.app import database_url

if __name__ == "__main__":
    run("examples.raw_asgi_host", database_url(), default_scopes="recipes.read")
