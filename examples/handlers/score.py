#!/usr/bin/env python3
"""A tiny HTTP handler for examples/http-handler.yaml: answers each POSTed JSON array of bids with
one row per bid worth scoring (bids under 1 000 are left out), scored by price and channel.

    python3 examples/handlers/score.py [PORT]     # default 8080, on 127.0.0.1
"""
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CHANNEL_WEIGHT = {"Google": 1.2, "Facebook": 1.1, "Baidu": 0.9, "Apple": 1.0}


class Score(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"     # keep the connection between requests
    disable_nagle_algorithm = True    # else each answer's body waits ~40 ms for a delayed ACK

    def do_POST(self):
        bids = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        rows = [{"auction": b["auction"], "bidder": b["bidder"],
                 "score": round(b["price"] / 1000 * CHANNEL_WEIGHT.get(b["channel"], 0.5), 3)}
                for b in bids if b["price"] >= 1000]
        body = json.dumps(rows).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass  # quiet: one request per batch


if __name__ == "__main__":
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 8080
    ThreadingHTTPServer(("127.0.0.1", port), Score).serve_forever()
