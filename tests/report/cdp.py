"""Drive headless Chromium over the DevTools protocol with the standard library only.

A minimal WebSocket client (RFC 6455: masked client frames, unmasked server frames,
continuation frames) is enough to send CDP commands, collect console messages,
exceptions and log entries, and take screenshots.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import socket
import struct
import subprocess
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx

from helpers.child_evidence import START_BOUND_S, thread_report

# The flags this machine's notes prescribe for Chromium in a closed network, as root.
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    "--mute-audio",
]


def find_chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    return None


class WebSocket:
    def __init__(self, url: str, timeout: float = 30.0) -> None:
        parts = urlsplit(url)
        host, port = parts.hostname or "127.0.0.1", parts.port or 80
        self.sock = socket.create_connection((host, port), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        request = (
            f"GET {parts.path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        )
        self.sock.sendall(request.encode())
        self.file = self.sock.makefile("rb")
        status = self.file.readline()
        if b" 101 " not in status:
            raise ConnectionError(f"WebSocket handshake refused: {status!r}")
        while self.file.readline() not in (b"\r\n", b""):
            pass

    def send(self, text: str) -> None:
        payload = text.encode()
        n = len(payload)
        if n < 126:
            header = struct.pack(">BB", 0x81, 0x80 | n)
        elif n < 1 << 16:
            header = struct.pack(">BBH", 0x81, 0x80 | 126, n)
        else:
            header = struct.pack(">BBQ", 0x81, 0x80 | 127, n)
        mask = os.urandom(4)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        self.sock.sendall(header + mask + masked)

    def _exact(self, n: int) -> bytes:
        data = self.file.read(n)
        if data is None or len(data) != n:
            raise ConnectionError("WebSocket closed by the browser")
        return data

    def recv(self) -> str:
        chunks: list[bytes] = []
        while True:
            b0, b1 = self._exact(2)
            n = b1 & 0x7F
            if n == 126:
                (n,) = struct.unpack(">H", self._exact(2))
            elif n == 127:
                (n,) = struct.unpack(">Q", self._exact(8))
            mask = self._exact(4) if b1 & 0x80 else b""
            data = self._exact(n)
            if mask:
                data = bytes(b ^ mask[i % 4] for i, b in enumerate(data))
            opcode = b0 & 0x0F
            if opcode == 0x8:
                raise ConnectionError("WebSocket closed by the browser")
            if opcode in (0x9, 0xA):  # ping / pong: not used by Chromium's CDP
                continue
            chunks.append(data)
            if b0 & 0x80:
                return b"".join(chunks).decode()

    def close(self) -> None:
        self.file.close()
        self.sock.close()


class Browser:
    """One headless Chromium with one page; collects everything the page complains about."""

    def __init__(self, exe: str, profile: Path) -> None:
        self.proc = subprocess.Popen(
            [exe, *FLAGS, "--remote-debugging-port=0", f"--user-data-dir={profile}", "about:blank"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.stderr: list[str] = []
        found = threading.Event()
        self._endpoint = ""

        def pump() -> None:
            assert self.proc.stderr is not None
            for line in self.proc.stderr:
                self.stderr.append(line)
                if "DevTools listening on " in line and not found.is_set():
                    self._endpoint = line.split("DevTools listening on ", 1)[1].strip()
                    found.set()

        threading.Thread(target=pump, daemon=True).start()
        if not found.wait(START_BOUND_S):
            threads = thread_report(self.proc.pid)  # what it was doing, before it ends
            self.close()
            raise RuntimeError(
                f"Chromium did not start within {START_BOUND_S:g} s\n{threads}\n"
                + "".join(self.stderr[-20:])
            )
        port = urlsplit(self._endpoint).port
        page_url = self._page_ws(port)
        self.ws = WebSocket(page_url)
        self._next = 0
        self.events: list[dict[str, Any]] = []
        for domain in ("Runtime", "Log", "Page"):
            self.call(f"{domain}.enable")

    @staticmethod
    def _page_ws(port: int | None) -> str:
        deadline = time.monotonic() + START_BOUND_S
        while time.monotonic() < deadline:
            targets = httpx.get(f"http://127.0.0.1:{port}/json/list", timeout=5).json()
            pages = [t for t in targets if t.get("type") == "page"]
            if pages:
                return str(pages[0]["webSocketDebuggerUrl"])
            time.sleep(0.1)
        raise RuntimeError("Chromium opened no page")

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        self._next += 1
        ident = self._next
        self.ws.send(json.dumps({"id": ident, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == ident:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                result: dict[str, Any] = msg.get("result", {})
                return result
            self.events.append(msg)

    def wait_for(self, event: str, timeout: float = 30.0) -> dict[str, Any]:
        for msg in self.events:
            if msg.get("method") == event:
                return msg
        deadline = time.monotonic() + timeout
        self.ws.sock.settimeout(timeout)
        while time.monotonic() < deadline:
            received: dict[str, Any] = json.loads(self.ws.recv())
            self.events.append(received)
            if received.get("method") == event:
                return received
        raise TimeoutError(event)

    def open(self, url: str, width: int = 1100, height: int = 1800) -> None:
        self.events.clear()
        self.call(
            "Emulation.setDeviceMetricsOverride",
            width=width,
            height=height,
            deviceScaleFactor=1,
            mobile=False,
        )
        self.call("Page.navigate", url=url)
        self.wait_for("Page.loadEventFired")
        self.call("Runtime.evaluate", expression="1")  # flush messages raised during load

    def evaluate(self, expression: str) -> Any:
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        return result["result"].get("value")

    def problems(self) -> list[str]:
        """Console errors/warnings, uncaught exceptions, error log entries, dialogs."""
        out = []
        for msg in self.events:
            method, params = msg.get("method"), msg.get("params", {})
            if method == "Runtime.consoleAPICalled" and params.get("type") in (
                "error",
                "assert",
                "warning",
            ):
                args = " ".join(str(a.get("value", a.get("description"))) for a in params["args"])
                out.append(f"console.{params['type']}: {args}")
            elif method == "Runtime.exceptionThrown":
                out.append(f"exception: {params['exceptionDetails'].get('text')}")
            elif method == "Log.entryAdded" and params["entry"]["level"] in ("error", "warning"):
                entry = params["entry"]
                out.append(f"log {entry['level']} ({entry['source']}): {entry['text']}")
            elif method == "Page.javascriptDialogOpening":
                out.append(f"dialog: {params.get('message')}")
        return out

    def screenshot(self, scale: float = 1.0, full_page: bool = False) -> bytes:
        params: dict[str, Any] = {"format": "png"}
        if full_page or scale != 1.0:
            size = self.call("Page.getLayoutMetrics")["cssContentSize"]
            height = size["height"] if full_page else 1800
            params["clip"] = {"x": 0, "y": 0, "width": 1100, "height": height, "scale": scale}
            params["captureBeyondViewport"] = full_page
        data = self.call("Page.captureScreenshot", **params)["data"]
        return base64.b64decode(data)

    def close(self) -> None:
        ws = getattr(self, "ws", None)
        if ws is not None:
            ws.close()
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
