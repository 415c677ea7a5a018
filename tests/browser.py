"""A page opened in real headless Chromium over the DevTools protocol (loopback only):
console errors, uncaught exceptions, failed loads and every image's rendered size."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

import websocket

IMAGES_JS = """
(async () => {
  const imgs = [...document.images];
  await Promise.all(imgs.map(i => i.decode().catch(() => null)));
  return JSON.stringify(imgs.map(i => ({src: i.src.slice(0, 80), complete: i.complete, w: i.naturalWidth, h: i.naturalHeight})));
})()
"""


#: how wide each table of the page is against the page (a table wider than a 1280-px page scrolls)
TABLES_JS = """
JSON.stringify({page: document.documentElement.clientWidth,
  tables: [...document.querySelectorAll("table")].map(t => ({right: Math.ceil(t.getBoundingClientRect().right),
    head: [...t.querySelectorAll("th")].map(h => h.innerText).join("|").slice(0, 120)}))})
"""


def open_page(
    path: Path, script: str = IMAGES_JS, settle: float = 2.0, timeout: float = 60.0, width: int = 800
) -> dict:
    """Load ``path`` (file URL) in headless Chromium, a window ``width`` px wide; returns errors and
    the result of ``script``."""
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        raise RuntimeError("chromium is not installed (make browser)")
    profile = tempfile.mkdtemp(prefix="podnet-chromium-")
    proc = subprocess.Popen(
        [
            exe,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--remote-debugging-port=0",
            "--remote-debugging-address=127.0.0.1",
            f"--user-data-dir={profile}",
            f"--window-size={width},1000",
            "about:blank",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        port = None
        deadline = time.time() + timeout
        while port is None and time.time() < deadline:
            line = proc.stderr.readline()
            m = re.search(r"DevTools listening on ws://127\.0\.0\.1:(\d+)/", line)
            port = m and int(m.group(1))
        if port is None:
            raise RuntimeError("chromium did not start its DevTools endpoint")
        pages = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10))
        ws = websocket.create_connection(
            next(p for p in pages if p["type"] == "page")["webSocketDebuggerUrl"], timeout=timeout
        )
        msg_id = 0
        events: list[dict] = []

        def call(method: str, **params) -> dict:
            nonlocal msg_id
            msg_id += 1
            ws.send(json.dumps({"id": msg_id, "method": method, "params": params}))
            while True:
                m = json.loads(ws.recv())
                if m.get("id") == msg_id:
                    return m
                events.append(m)

        for domain in ("Runtime", "Log", "Page", "Network"):
            call(f"{domain}.enable")
        call("Page.navigate", url=path.resolve().as_uri())
        end = time.time() + timeout
        while time.time() < end and not any(e.get("method") == "Page.loadEventFired" for e in events):
            events.append(json.loads(ws.recv()))
        time.sleep(settle)
        result = call("Runtime.evaluate", expression=script, awaitPromise=True, returnByValue=True)
        ws.settimeout(0.5)
        try:
            while True:
                events.append(json.loads(ws.recv()))
        except websocket.WebSocketTimeoutException:
            pass
        ws.close()
    finally:
        proc.terminate()
        proc.wait(timeout=20)
        shutil.rmtree(profile, ignore_errors=True)
    errors = []
    for e in events:
        m, p = e.get("method"), e.get("params", {})
        if m == "Runtime.exceptionThrown":
            errors.append(
                p["exceptionDetails"].get("text", "")
                + str(p["exceptionDetails"].get("exception", {}).get("description", ""))
            )
        elif m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
            errors.append(" ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", [])))
        elif m == "Log.entryAdded" and p["entry"].get("level") == "error":
            errors.append(p["entry"].get("text", "") + " " + p["entry"].get("url", ""))
        elif m == "Network.loadingFailed":
            errors.append(f"failed to load: {p.get('errorText')}")
    value = result.get("result", {}).get("result", {}).get("value")
    return {"errors": errors, "value": value}
