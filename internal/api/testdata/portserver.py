# A test server for the exposed-ports tests, run inside a sandbox:
# HTTP requests are answered with what arrived (method, path, headers,
# body) as JSON; a WebSocket upgrade on any path echoes every message.
# Usage: python3 portserver.py PORT [6]   (6: listen on ::1 only)
import base64, hashlib, json, socket, struct, sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        if self.headers.get("Upgrade", "").lower() == "websocket":
            return self.websocket()
        self.reply()

    do_POST = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = do_GET

    def do_HEAD(self):
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def reply(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else b""
        headers = {}
        for k, v in self.headers.items():
            headers.setdefault(k.lower(), []).append(v)
        out = json.dumps({"method": self.command, "path": self.path, "headers": headers,
                          "body": body.decode("latin1")}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.send_header("Set-Cookie", "app_session=1; Path=/")
        self.end_headers()
        self.wfile.write(out)

    def websocket(self):
        key = self.headers["Sec-WebSocket-Key"]
        accept = base64.b64encode(hashlib.sha1((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").encode()).digest()).decode()
        self.send_response(101)
        self.send_header("Upgrade", "websocket")
        self.send_header("Connection", "Upgrade")
        self.send_header("Sec-WebSocket-Accept", accept)
        self.end_headers()
        self.wfile.flush()
        while True:
            h = self.rfile.read(2)
            if len(h) < 2:
                return
            op, n = h[0] & 0x0F, h[1] & 0x7F
            if n == 126:
                n = struct.unpack(">H", self.rfile.read(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self.rfile.read(8))[0]
            mask = self.rfile.read(4) if h[1] & 0x80 else b"\0\0\0\0"
            data = bytes(b ^ mask[i % 4] for i, b in enumerate(self.rfile.read(n)))
            if op == 8:
                self.wfile.write(b"\x88\x00")
                self.wfile.flush()
                return
            if op == 9:
                op = 10
            size = bytes([len(data)]) if len(data) < 126 else b"\x7e" + struct.pack(">H", len(data))
            self.wfile.write(bytes([0x80 | op]) + size + data)
            self.wfile.flush()

class Server6(ThreadingHTTPServer):
    address_family = socket.AF_INET6

port = int(sys.argv[1])
if len(sys.argv) > 2 and sys.argv[2] == "6":
    Server6(("::1", port), Handler).serve_forever()
else:
    ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()
