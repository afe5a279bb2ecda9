"""A container registry on 127.0.0.1 for the release's tests (#25).

It speaks the distribution API's read side with the Bearer token flow ghcr.io and Docker
Hub use (401 + ``WWW-Authenticate: Bearer realm=...``, then an anonymous token from the
realm). ``mode`` private hands an anonymous client no token (a private ghcr.io package);
``basic`` asks for credentials outright (an htpasswd registry).
"""

from __future__ import annotations

import hashlib
import http.server
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

REPO = "skbugudi/evalkit-action"


def digest_of(body: bytes) -> str:
    return "sha256:" + hashlib.sha256(body).hexdigest()


@dataclass
class Registry:
    """Manifests and blobs by digest (and tags), and who may read them."""

    manifests: dict[str, tuple[bytes, str]] = field(default_factory=dict)
    blobs: set[str] = field(default_factory=set)
    mode: str = "public"  # public | private | basic
    seen: list[str] = field(default_factory=list)

    def add_manifest(self, doc: dict[str, Any], tag: str | None = None) -> str:
        body = json.dumps(doc).encode()
        digest = digest_of(body)
        self.manifests[digest] = (body, str(doc["mediaType"]))
        if tag:
            self.manifests[tag] = self.manifests[digest]
        return digest

    def add_image(self, arch: str) -> str:
        config, layer = (digest_of(f"{arch}-{part}".encode()) for part in ("config", "layer"))
        self.blobs |= {config, layer}
        return self.add_manifest(
            {
                "schemaVersion": 2,
                "mediaType": "application/vnd.oci.image.manifest.v1+json",
                "config": {"digest": config},
                "layers": [{"digest": layer}],
            }
        )

    def add_index(self, arches: list[str], tag: str | None = None) -> str:
        entries = [
            {"digest": self.add_image(a), "platform": {"os": "linux", "architecture": a}}
            for a in arches
        ]
        doc = {"mediaType": "application/vnd.oci.image.index.v1+json", "manifests": entries}
        return self.add_manifest(doc, tag)


def serve(registry: Registry) -> tuple[str, http.server.ThreadingHTTPServer]:
    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def reply(self, status: int, body: bytes = b"", headers: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
            self.send_response(status)
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def do_GET(self) -> None:
            registry.seen.append(f"{self.command} {self.path}")
            host = f"http://{self.headers['Host']}"
            if self.path.startswith("/token"):
                if registry.mode == "private":
                    self.reply(401, b'{"errors": [{"code": "DENIED"}]}')
                else:
                    self.reply(200, b'{"token": "anonymous-pull"}')
                return
            if registry.mode == "basic":
                self.reply(401, headers={"WWW-Authenticate": 'Basic realm="Registry"'})
                return
            if self.headers.get("Authorization") != "Bearer anonymous-pull":
                scope = f"repository:{REPO}:pull"
                challenge = f'Bearer realm="{host}/token",service="test",scope="{scope}"'
                self.reply(401, headers={"WWW-Authenticate": challenge})
                return
            prefix = f"/v2/{REPO}/"
            kind, _, ref = self.path.removeprefix(prefix).partition("/")
            if kind == "tags" and ref.partition("?")[0] == "list":
                tags = sorted(t for t in registry.manifests if not t.startswith("sha256:"))
                self.reply(200, json.dumps({"name": REPO, "tags": tags}).encode())
            elif kind == "manifests" and ref in registry.manifests:
                body, media_type = registry.manifests[ref]
                self.reply(200, body, {"Content-Type": media_type})
            elif kind == "blobs" and ref in registry.blobs:
                # as ghcr.io does: the blob is in storage elsewhere
                self.reply(307, headers={"Location": f"http://storage.invalid/{ref}"})
            else:
                self.reply(404, b'{"errors": [{"code": "NOT_FOUND"}]}')

        do_HEAD = do_GET

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"127.0.0.1:{server.server_address[1]}", server


@contextmanager
def running(registry: Registry) -> Iterator[str]:
    """``registry`` served on 127.0.0.1; yields its host:port."""
    host, server = serve(registry)
    try:
        yield host
    finally:
        server.shutdown()
        server.server_close()
