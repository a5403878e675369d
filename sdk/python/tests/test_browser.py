"""The sandbox's browser: actions, screenshot, tabs and the CDP URL. Starts
Chromium inside a sandbox (needs Debian's chromium on the server)."""

from __future__ import annotations

import asyncio
import json
import shutil

import pytest

import paddock

PAGE = """<html><head><title>SDK page</title></head><body>
<h1 id="h">Hello SDK</h1><input id="q"><button id="b" onclick="document.getElementById('h').textContent='clicked '+document.getElementById('q').value">Go</button>
</body></html>"""


@pytest.mark.browser
def test_browser_actions_and_cdp(client: paddock.Paddock) -> None:
    if shutil.which("chromium") is None:
        pytest.skip("needs Debian's chromium (the server's browser; .ci/run installs it)")
    with client.sandboxes.create(browser=True, labels={"suite": "pytest"}) as sb:
        sb.files.write("/tmp/site/index.html", PAGE, parents=True)
        sb.processes.start(["python3", "-m", "http.server", "8080", "--bind", "127.0.0.1", "--directory", "/tmp/site"])
        st = sb.browser.start()
        assert st.state in ("running", "starting")
        for _ in range(50):
            try:
                page = sb.browser.navigate("http://127.0.0.1:8080/")
                break
            except paddock.PaddockError:
                import time
                time.sleep(0.1)
        assert page.title == "SDK page"
        sb.browser.type("hi", selector="#q")
        sb.browser.click("#b")
        assert sb.browser.eval("document.getElementById('h').textContent").value == "clicked hi"
        assert "clicked hi" in sb.browser.text().text
        snap = sb.browser.snapshot()
        assert snap.refs > 0
        png = sb.browser.screenshot()
        assert png[:8] == b"\x89PNG\r\n\x1a\n"
        tab = sb.browser.open_tab("http://127.0.0.1:8080/")
        assert tab.id in [t.id for t in sb.browser.tabs()]
        sb.browser.activate_tab(tab.id)
        assert tab.id not in [t.id for t in sb.browser.close_tab(tab.id)]
        assert sb.browser.scroll("down").tab
        assert sb.browser.downloads().downloads == []
        v = sb.browser.version()
        assert "webSocketDebuggerUrl" in v and "/v1/sandboxes/%s/browser/cdp" % sb.id in v["webSocketDebuggerUrl"]

        # The CDP URL (a sandbox token in it, no key) drives DevTools directly.
        url = sb.browser.cdp_url(ttl=120)
        assert "token=pdt_" in url and client.config.api_key not in url

        async def cdp() -> dict:
            import websockets
            async with websockets.connect(url, max_size=None) as ws:
                await ws.send(json.dumps({"id": 1, "method": "Browser.getVersion"}))
                while True:
                    m = json.loads(await ws.recv())
                    if m.get("id") == 1:
                        return m["result"]
        assert "Chrome" in asyncio.run(cdp())["product"]
        sb.browser.stop()
        import time
        for _ in range(100):
            if sb.browser.status().state == "stopped":
                break
            time.sleep(0.1)
        assert sb.browser.status().state == "stopped"
