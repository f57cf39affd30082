#!/usr/bin/env python3
"""Loopback targets for measuring ptdmon serve against hostile engines.

  targets.py good PORT RATE        vLLM exposition, completions = RATE × seconds
  targets.py endless PORT          an endless chunked body
  targets.py churn PORT N          a vLLM counter with N new label values per scrape

Each runs until killed; measure.sh starts and stops them.
"""
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

T0 = time.monotonic()
mode, port = sys.argv[1], int(sys.argv[2])
scrapes = 0


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def send_text(self, body):
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        global scrapes
        if mode == "good":
            rate = float(sys.argv[3])
            n = rate * (time.monotonic() - T0 + 100)
            body = (
                "# TYPE vllm:request_success counter\n"
                f'vllm:request_success_total{{model_name="m",finished_reason="stop"}} {n!r}\n'
                "# TYPE vllm:num_requests_running gauge\n"
                'vllm:num_requests_running{model_name="m"} 4\n'
            )
            self.send_text(body.encode())
        elif mode == "endless":
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            chunk = b'vllm:num_requests_running{model_name="m"} 1\n' * 4096
            frame = b"%x\r\n%s\r\n" % (len(chunk), chunk)
            try:
                while True:
                    self.wfile.write(frame)
            except (BrokenPipeError, ConnectionResetError):
                pass
            self.close_connection = True
        elif mode == "churn":
            per = int(sys.argv[3])
            scrapes += 1
            lines = ["# TYPE vllm:prompt_tokens counter\n"]
            lines += [f'vllm:prompt_tokens_total{{model_name="m",request="{scrapes}-{i}"}} 1\n' for i in range(per)]
            lines.append("# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{model_name=\"m\"} 1\n")
            self.send_text("".join(lines).encode())


ThreadingHTTPServer.daemon_threads = True
ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()
