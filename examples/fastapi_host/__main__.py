"""`python -m examples.fastapi_host [--host H] [--port P]` serves the record shop;
`python -m examples.fastapi_host token [--scopes S]` prints a new API token for it."""

from examples.fastapi_host.app import database_url
from examples.host_command import run

if __name__ == "__main__":
    run("examples.fastapi_host", database_url(), default_scopes="records.read")
