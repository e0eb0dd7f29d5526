"""The release this code is: `pb_headless.__version__`, `/health`, the OpenAPI `info.version`, and the
package's version (pyproject.toml reads it from here; docs/compatibility.md says what it promises)."""

VERSION = "0.2.0"
