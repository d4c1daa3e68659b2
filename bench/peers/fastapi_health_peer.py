"""The fastapi-health peer: FastAPI on uvicorn, one worker process.

Its /ready is fastapi-health's endpoint over three conditions, the same
three trivially fast probes as every other server of the benchmark
(probes.cjs, examples/bench/src/probes.rs); FastAPI runs them as
dependencies on every request, as zb-health's ready tier without a cache
runs its probes. Listens on 127.0.0.1, port chosen by the OS, and prints
`listening <addr>` once bound.
"""

import socket
import sys

import uvicorn
from fastapi import FastAPI
from fastapi_health import health


def check(name, description):
    async def condition():
        return {name: {"status": "Healthy", "description": description}}

    # fastapi-health names each dependency after its function.
    condition.__name__ = name.replace("-", "_")
    return condition


PROBES = [
    check("database", "database reachable"),
    check("disk-space", "disk space above threshold"),
    check("cache", "cache reachable"),
]

app = FastAPI()
app.add_api_route("/ready", health(PROBES))


def main():
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    # Listening before the announcement: a request that comes before
    # uvicorn's loop starts waits in the backlog instead of being refused.
    sock.listen(2048)
    host, port = sock.getsockname()
    config = uvicorn.Config(app, log_level="warning", access_log=False, workers=1)
    server = uvicorn.Server(config)
    print(f"listening {host}:{port}", flush=True)
    server.run(sockets=[sock])


if __name__ == "__main__":
    sys.exit(main())
