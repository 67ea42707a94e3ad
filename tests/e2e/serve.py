#!/usr/bin/env python3
"""Static server for the end-to-end tests: serves dist/ at / and at /sub/
(the page must work under any sub-path), with application/wasm, and sends
the page's CSP as a header too, as a real deployment would. Loopback only."""
import http.server
import os
import sys

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "dist")
PORT = int(sys.argv[2]) if len(sys.argv) > 2 else 8080
PREFIX = "/sub"


class Handler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {
        **http.server.SimpleHTTPRequestHandler.extensions_map,
        ".wasm": "application/wasm",
        ".js": "text/javascript",
        ".mjs": "text/javascript",
    }

    def __init__(self, *args, **kwargs):
        super().__init__(*args, directory=ROOT, **kwargs)

    def translate_path(self, path):
        if path == PREFIX or path.startswith(PREFIX + "/"):
            path = path[len(PREFIX):] or "/"
        return super().translate_path(path)

    def end_headers(self):
        self.send_header("Cache-Control", "no-cache")
        if self.path.split("?")[0].endswith(".js"):
            # Workers take their CSP from their own response.
            self.send_header(
                "Content-Security-Policy",
                "default-src 'none'; script-src 'self' 'wasm-unsafe-eval'; connect-src 'self'",
            )
        super().end_headers()

    def log_message(self, fmt, *args):
        sys.stderr.write("serve: " + fmt % args + "\n")


if __name__ == "__main__":
    http.server.ThreadingHTTPServer(("127.0.0.1", PORT), Handler).serve_forever()
