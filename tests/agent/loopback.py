#!/usr/bin/env python3
"""loopback.py SCRIPT.json PORTFILE LOGFILE — a loopback HTTP server on
127.0.0.1 that replays recorded replies to POSTs, one script entry per request
in arrival order: {"status": 200, "body": "raw text"} or {"status": 200,
"json": {...}}, with an optional "delay" in seconds (a reply slower than the
client's timeout). It writes its port to PORTFILE and every request (headers
and parsed body) as one JSON line to LOGFILE. Bounded: it serves at most
len(script) + 2 requests and stops after 90 seconds in any case."""
import json, os, sys, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

script = json.load(open(sys.argv[1]))
portfile, logfile = sys.argv[2], sys.argv[3]
lock = threading.Lock()
state = {"next": 0}
limit = len(script) + 2

class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        with lock:
            i = state["next"]
            state["next"] += 1
            try:
                parsed = json.loads(body)
            except ValueError:
                parsed = None
            with open(logfile, "a") as f:
                f.write(json.dumps({"i": i, "path": self.path, "headers": dict(self.headers),
                                    "body": parsed}) + "\n")
        if i >= len(script):
            entry = {"status": 500, "body": "script exhausted"}
        else:
            entry = script[i]
        time.sleep(entry.get("delay", 0))
        data = entry["body"] if "body" in entry else json.dumps(entry["json"])
        data = data.encode()
        try:
            self.send_response(entry.get("status", 200))
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (its timeout): expected for delayed entries
        if i + 1 >= limit:
            threading.Thread(target=server.shutdown, daemon=True).start()

server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
with open(portfile + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
os.rename(portfile + ".tmp", portfile)
stopper = threading.Timer(90, server.shutdown)
stopper.daemon = True
stopper.start()
server.serve_forever()
