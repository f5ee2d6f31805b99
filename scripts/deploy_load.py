#!/usr/bin/env python3
"""Throughput and latency of one and of three `mcp-resolve proxy --listen`
instances behind HAProxy sharing Redis (docs/deploy.md), side by side in one
run, and what the Redis round trip costs the retry of an `ask`.

For each deployment, HOSTS threads each send REQUESTS 2026-07-28 `tools/call`
requests one at a time over a kept-alive HTTP connection to HAProxy; the
table gives requests per second over all hosts, p50 and p99 latency, and the
CPU the proxy processes used per request (all their threads, Linux
`/proc/PID/task/*/schedstat`). Then one instance alone, with and without
`--redis`, answers ASKS questions and their retries: the retry's p50 with
Redis beside without is the round trip's cost.

Everything it starts (Redis on a socket in a temporary directory, HAProxy,
the proxies and their servers) is on loopback and stopped at the end.

Usage:
  deploy_load.py --proxy BIN [--hosts 8] [--requests 500] [--asks 300] \\
      --rules RULES --policy POLICY -- SERVER ARGS...
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time

META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}


def quantile(samples, q):
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))]


def cpu_seconds(pid):
    total = 0
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/schedstat") as f:
                total += int(f.read().split()[0])
    except OSError:
        pass
    return total / 1e9


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(predicate, what, seconds=30):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if predicate():
            return
        time.sleep(0.02)
    raise SystemExit(f"{what} did not start")


class Deployment:
    def __init__(self, args, work, instances, redis_url):
        self.processes = []
        self.proxies = []
        backends = []
        for i in range(instances):
            command = [args.proxy, "proxy", args.rules, "--no-probe", "--policy", args.policy,
                       "--listen", "127.0.0.1:0", "--state-key-file", os.path.join(work, "state.key")]
            if redis_url:
                command += ["--redis", redis_url]
            proxy = subprocess.Popen(command + ["--", *args.command], stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            first = proxy.stderr.readline()
            url = next(w for w in first.split() if w.startswith("http://"))
            backends.append(url.removeprefix("http://").removesuffix("/mcp"))
            threading.Thread(target=proxy.stderr.read, daemon=True).start()
            self.processes.append(proxy)
            self.proxies.append(proxy.pid)
        self.port = free_port()
        config = os.path.join(work, "haproxy.cfg")
        # The configuration of docs/deploy.md (the test suite's fixture).
        template = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                "fixtures", "deploy", "haproxy.cfg")
        with open(template) as f:
            text = f.read()
        servers = "".join(f"    server proxy{i} {backend} check inter 300ms fall 1 rise 2\n"
                          for i, backend in enumerate(backends))
        with open(config, "w") as f:
            f.write(text.replace("@PORT@", str(self.port)).replace("@SERVERS@\n", servers))
        self.processes.append(subprocess.Popen([args.haproxy, "-db", "-f", config],
                                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL))
        wait_for(lambda: _connects(self.port), "HAProxy")

    def cpu(self):
        return sum(cpu_seconds(pid) for pid in self.proxies)

    def close(self):
        for process in reversed(self.processes):
            process.terminate()
        for process in self.processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()


def _connects(port):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True
    except OSError:
        return False


def call(connection, id_, params):
    body = json.dumps({"jsonrpc": "2.0", "id": id_, "method": "tools/call", "params": params})
    # The SEP-2243 headers a 2026-07-28 client sends with it.
    connection.request("POST", "/mcp", body, {
        "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call",
        "Mcp-Name": params["name"]})
    response = connection.getresponse()
    text = response.read().decode()
    for line in reversed(text.splitlines()):
        if line.startswith("data:"):
            return json.loads(line[5:])
    return json.loads(text)


def read_params():
    return {"name": "manage_files", "arguments": {"path": "a", "action": "read"}, "_meta": META}


def load(port, hosts, requests):
    latencies, lock = [], threading.Lock()

    def host(h):
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        mine = []
        for i in range(requests):
            started = time.perf_counter()
            answer = call(connection, h * requests + i, read_params())
            mine.append(time.perf_counter() - started)
            assert "result" in answer, answer
        with lock:
            latencies.extend(mine)

    threads = [threading.Thread(target=host, args=(h,)) for h in range(hosts)]
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return latencies, time.perf_counter() - started


def asks(port, count):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    retries = []
    delete = {"name": "manage_files", "arguments": {"path": "a", "action": "delete"}, "_meta": META}
    for i in range(count):
        asked = call(connection, 2 * i, delete)
        retry = dict(delete, requestState=asked["result"]["requestState"],
                     inputResponses={"mcp-resolve/confirm": {"action": "decline"}})
        started = time.perf_counter()
        answer = call(connection, 2 * i + 1, retry)
        retries.append(time.perf_counter() - started)
        assert "declined" in answer["error"]["message"], answer
    return retries


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--proxy", required=True)
    parser.add_argument("--rules", required=True)
    parser.add_argument("--policy", required=True)
    parser.add_argument("--hosts", type=int, default=8)
    parser.add_argument("--requests", type=int, default=500)
    parser.add_argument("--asks", type=int, default=300)
    parser.add_argument("--haproxy", default=shutil.which("haproxy") or "/usr/sbin/haproxy")
    parser.add_argument("--redis-server", default=shutil.which("redis-server") or "redis-server")
    parser.add_argument("command", nargs="+")
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="mcp-resolve-deploy-")
    subprocess.run([args.proxy, "keygen", "--state", "-o", os.path.join(work, "state")],
                   check=True, stderr=subprocess.DEVNULL)
    sock = os.path.join(work, "redis.sock")
    redis = subprocess.Popen([args.redis_server, "--port", "0", "--save", "", "--appendonly", "no",
                              "--unixsocket", sock, "--dir", work],
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    wait_for(lambda: os.path.exists(sock), "Redis")
    redis_url = f"redis+unix://{sock}"
    rows = []
    try:
        for instances in (1, 3):
            deployment = Deployment(args, work, instances, redis_url)
            try:
                load(deployment.port, args.hosts, max(20, args.requests // 10))  # warm-up
                before = deployment.cpu()
                latencies, elapsed = load(deployment.port, args.hosts, args.requests)
                used = deployment.cpu() - before
            finally:
                deployment.close()
            n = len(latencies)
            rows.append((instances, n / elapsed, quantile(latencies, .5), quantile(latencies, .99),
                         used / n))
        ask_rows = []
        for label, url in (("without --redis", None), ("with --redis", redis_url)):
            deployment = Deployment(args, work, 1, url)
            try:
                asks(deployment.port, 20)
                retries = asks(deployment.port, args.asks)
            finally:
                deployment.close()
            ask_rows.append((label, quantile(retries, .5), quantile(retries, .99)))
    finally:
        redis.terminate()
        redis.wait()
        shutil.rmtree(work, ignore_errors=True)

    cores = os.cpu_count()
    print(f"{args.hosts} hosts × {args.requests} 2026-07-28 tools/call each, one at a time per host, "
          f"through HAProxy; {cores} cores shared by the hosts, HAProxy, the proxies and the servers\n")
    print("| instances | req/s | p50 (µs) | p99 (µs) | proxy CPU per request (µs) |")
    print("|---:|---:|---:|---:|---:|")
    for instances, rate, p50, p99, cpu in rows:
        print(f"| {instances} | {rate:,.0f} | {p50 * 1e6:,.0f} | {p99 * 1e6:,.0f} | {cpu * 1e6:.1f} |")
    print(f"\nThe retry of an `ask` (its state opened, claimed, the answer read), {args.asks} retries, "
          "one instance:\n")
    print("| | p50 (µs) | p99 (µs) |")
    print("|---|---:|---:|")
    for label, p50, p99 in ask_rows:
        print(f"| {label} | {p50 * 1e6:,.0f} | {p99 * 1e6:,.0f} |")


if __name__ == "__main__":
    main()
