"""The OpenAPI 3.1 document of the API, built from the same registry that serves requests.

`document_for` answers `GET /api/pb/v1/openapi.json` (only what the token may call);
`full_document` is the site owner's view, for the docs page and `pb-headless openapi`.
"""

from pb_headless.openapi.document import OPENAPI_VERSION, assemble, build_parts, document_for, full_document

__all__ = ["OPENAPI_VERSION", "assemble", "build_parts", "document_for", "full_document"]
