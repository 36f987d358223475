"""A stdio MCP server behind a tap: `python mcp_tap.py LOG CMD...` runs CMD as the server
and writes one line to LOG per request the client sends it (`method`, and the tool's name
for tools/call), so a test can count what a client asked a real server."""

from __future__ import annotations

import json
import subprocess
import sys


def _line(message: object) -> str:
    if not isinstance(message, dict) or "method" not in message:
        return ""
    method = str(message["method"])
    if method == "tools/call":
        return f"{method} {(message.get('params') or {}).get('name', '')}"
    return method


def main(log_path: str, cmd: list[str]) -> int:
    server = subprocess.Popen(cmd, stdin=subprocess.PIPE)  # its stdout is ours
    assert server.stdin is not None
    with open(log_path, "a", encoding="utf-8") as log:
        for raw in sys.stdin.buffer:
            try:
                line = _line(json.loads(raw))
            except ValueError:
                line = ""
            if line:
                log.write(line + "\n")
                log.flush()
            server.stdin.write(raw)
            server.stdin.flush()
    server.stdin.close()
    return server.wait()


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1], sys.argv[2:]))
