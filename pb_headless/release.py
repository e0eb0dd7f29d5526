"""The release this code is: `pb_headless.__version__`, `/health`, the OpenAPI `info.version`."""

VERSION = "0.1.0"
