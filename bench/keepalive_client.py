"""An HTTP/1.1 client on one kept-alive connection, for load generators that share the server's cores.

bench/soak.py sends 200,000 requests from the same two cores the instance runs on; httpx spent
about as much CPU per request as the instance itself, so the soak measured its own client as much as
the server. This client writes each request with one `write` and reads the answer with asyncio's
stream reader: what the soak needs (status, headers, body, the request it answered) and no more.
It speaks to a server on this machine only: plain HTTP, Content-Length or chunked bodies, and a new
connection whenever the server closes one (`Connection: close`, or a restart).

    async with KeepAliveClient("http://127.0.0.1:8001/api/pb/v1", timeout=30) as http:
        response = await http.get("/objects/articles", headers={"Authorization": "Bearer ..."})
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlsplit

SAFE = "/?=&[],:;@!$'()*+-._~%"  # what a path and query keep as written; the rest is percent-encoded


@dataclass(frozen=True)
class Request:
    method: str
    url: str


@dataclass(frozen=True)
class Response:
    status_code: int
    headers: dict[str, str]  # names in lower case
    content: bytes
    request: Request

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", "replace")

    def json(self) -> Any:
        return json.loads(self.content)


class KeepAliveClient:
    """Requests one at a time on one connection, opened again when the server closed it."""

    def __init__(self, base_url: str, timeout: float) -> None:
        parts = urlsplit(base_url)
        if parts.scheme != "http" or parts.hostname is None:
            raise ValueError(f"KeepAliveClient speaks plain HTTP to a host and port: {base_url}")
        self.base_url, self.timeout = base_url.rstrip("/"), timeout
        self.host, self.port = parts.hostname, parts.port or 80
        self.prefix = parts.path.rstrip("/")
        self.host_header = f"{self.host}:{self.port}"
        self.streams: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None

    async def __aenter__(self) -> KeepAliveClient:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.close()

    async def close(self) -> None:
        if self.streams is not None:
            writer = self.streams[1]
            self.streams = None
            writer.close()
            with contextlib.suppress(OSError):
                await writer.wait_closed()

    async def get(self, path: str, *, headers: dict[str, str]) -> Response:
        return await self.request("GET", path, headers)

    async def delete(self, path: str, *, headers: dict[str, str]) -> Response:
        return await self.request("DELETE", path, headers)

    async def post(self, path: str, *, json: Any, headers: dict[str, str]) -> Response:
        return await self.request("POST", path, headers, json)

    async def patch(self, path: str, *, json: Any, headers: dict[str, str]) -> Response:
        return await self.request("PATCH", path, headers, json)

    async def request(self, method: str, path: str, headers: dict[str, str], body: Any = None) -> Response:
        target = quote(self.prefix + path, safe=SAFE)
        lines = [f"{method} {target} HTTP/1.1", f"Host: {self.host_header}"]
        lines += [f"{name}: {value}" for name, value in headers.items()]
        content = b""
        if body is not None:
            content = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
            lines.append("Content-Type: application/json")
        if body is not None or method in ("POST", "PATCH", "PUT"):
            lines.append(f"Content-Length: {len(content)}")
        head = ("\r\n".join(lines) + "\r\n\r\n").encode()
        request = Request(method, f"{self.base_url}{path}")
        # A kept connection the server closed meanwhile fails before any answer: sent again, once.
        for attempt in (1, 2):
            reused = self.streams is not None
            try:
                return await asyncio.wait_for(self._exchange(head + content, request), self.timeout)
            except (ConnectionError, asyncio.IncompleteReadError):
                await self.close()
                if not reused or attempt == 2:
                    raise
        raise AssertionError("unreachable")

    async def _exchange(self, data: bytes, request: Request) -> Response:
        if self.streams is None:
            self.streams = await asyncio.open_connection(self.host, self.port)
        reader, writer = self.streams
        writer.write(data)
        status, headers = await self._read_head(reader)
        if request.method == "HEAD" or status in (204, 304) or 100 <= status < 200:
            content = b""
        elif headers.get("transfer-encoding", "").lower() == "chunked":
            content = await self._read_chunks(reader)
        elif "content-length" in headers:
            content = await reader.readexactly(int(headers["content-length"]))
        else:  # the body runs to the end of the connection
            content = await reader.read()
            headers["connection"] = "close"
        if headers.get("connection", "").lower() == "close":
            await self.close()
        return Response(status, headers, content, request)

    @staticmethod
    async def _read_head(reader: asyncio.StreamReader) -> tuple[int, dict[str, str]]:
        head = await reader.readuntil(b"\r\n\r\n")
        status_line, *header_lines = head[:-4].decode("latin-1").split("\r\n")
        status = int(status_line.split(" ", 2)[1])
        headers: dict[str, str] = {}
        for line in header_lines:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        return status, headers

    @staticmethod
    async def _read_chunks(reader: asyncio.StreamReader) -> bytes:
        chunks = []
        while True:
            size = int((await reader.readuntil(b"\r\n")).split(b";", 1)[0], 16)
            if size == 0:
                while await reader.readuntil(b"\r\n") != b"\r\n":  # trailers, then the blank line
                    pass
                return b"".join(chunks)
            chunks.append(await reader.readexactly(size))
            await reader.readexactly(2)
