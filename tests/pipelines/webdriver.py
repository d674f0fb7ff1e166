"""A minimal W3C WebDriver client for Debian's ``chromedriver`` (no Selenium): open a page, press
keys, click, read the page's text and take a screenshot. Enough to photograph the Dagster UI
with its asset groups expanded (Alt+E), which a plain ``chromium --screenshot`` cannot do."""

from __future__ import annotations

import base64
import json
import socket
import subprocess
import time
import urllib.request
from pathlib import Path
from typing import Any

ALT = "\ue00a"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Browser:
    """A headless Chromium session driven through ``chromedriver`` on a loopback port."""

    def __init__(self, chromedriver: str, chromium: str, *, width: int = 1600, height: int = 1000) -> None:
        port = _free_port()
        self.base = f"http://127.0.0.1:{port}"
        self.process = subprocess.Popen([chromedriver, f"--port={port}"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while True:
            try:
                self._call("GET", "/status")
                break
            except OSError:
                if time.monotonic() > deadline:
                    self.process.kill()
                    raise
                time.sleep(0.2)
        args = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", f"--window-size={width},{height}"]
        options = {"binary": chromium, "args": args}
        capabilities = {"capabilities": {"alwaysMatch": {"browserName": "chrome", "goog:chromeOptions": options}}}
        self.session = self._call("POST", "/session", capabilities)["sessionId"]

    def _call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.base + path, method=method, data=data, headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=120) as response:
            return json.load(response)["value"]

    def _session(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        return self._call(method, f"/session/{self.session}{path}", body)

    def open(self, url: str) -> None:
        self._session("POST", "/url", {"url": url})

    def refresh(self) -> None:
        self._session("POST", "/refresh", {})

    def press(self, key: str, *, modifier: str | None = None) -> None:
        down = [{"type": "keyDown", "value": modifier}] if modifier else []
        up = [{"type": "keyUp", "value": modifier}] if modifier else []
        keys = [*down, {"type": "keyDown", "value": key}, {"type": "keyUp", "value": key}, *up]
        self._session("POST", "/actions", {"actions": [{"type": "key", "id": "keyboard", "actions": keys}]})

    def script(self, source: str) -> Any:
        return self._session("POST", "/execute/sync", {"script": source, "args": []})

    def wait_for_text(self, text: str, *, timeout: float = 60) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if text in (self.script("return document.body ? document.body.innerText : ''") or ""):
                return True
            time.sleep(0.5)
        return False

    def screenshot(self, out: Path) -> None:
        out.write_bytes(base64.b64decode(self._session("GET", "/screenshot")))

    def close(self) -> None:
        try:
            self._call("DELETE", f"/session/{self.session}")
        finally:
            self.process.kill()
            self.process.wait(timeout=10)
