"""What the benchmark scripts share: processes pinned to a CPU, nginx as a baseline proxy or a
canned upstream, gistproxy, and the load generator. Every process started here is stopped by
stop_all()."""
import json
import os
import shutil
import signal
import socket
import subprocess
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CANNED_CHAT = ('{"id":"chatcmpl-bench","object":"chat.completion","created":1700000000,"model":"gpt-4o-mini",'
               '"choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],'
               '"usage":{"prompt_tokens":250,"completion_tokens":1,"total_tokens":251}}')
_procs = []


def taskset(cpu):
    return ["taskset", "-c", str(cpu)] if cpu is not None and shutil.which("taskset") and os.cpu_count() > 1 else []


def start(cmd, **kw):
    p = subprocess.Popen(cmd, **kw)
    _procs.append(p)
    return p


def stop(p):
    try:
        p.send_signal(signal.SIGTERM)
        p.wait(timeout=10)
    except Exception:
        p.kill()
    if p in _procs:
        _procs.remove(p)


def stop_all():
    for p in reversed(list(_procs)):
        stop(p)


def rmtree(path):
    shutil.rmtree(path, ignore_errors=True)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def wait_port(port, timeout=10):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise SystemExit(f"bench: nothing listens on {port}")


def require(build):
    for tool in ("nginx", f"{build}/gistproxy", f"{build}/gistproxy-loadgen"):
        if not shutil.which(tool) and not os.path.exists(tool):
            raise SystemExit(f"bench: {tool} is missing (run make build; scripts/install-deps installs nginx-light)")


def nginx(tmp, name, body, cpu, workers=1, connections=4096, http2=False, tls=None):
    """nginx with `body` inside its server block, on a free port; `http2`: the port speaks h2c
    with prior knowledge (nginx's `listen ... http2` without ssl) instead of HTTP/1.1; `tls`
    (ssl_* directives for the server block): the port speaks TLS (`listen ... ssl`), and with
    `http2` ALPN offers h2 beside http/1.1."""
    port = free_port()
    prefix = os.path.join(tmp, name)
    os.makedirs(os.path.join(prefix, "logs"), exist_ok=True)
    conf = os.path.join(prefix, "nginx.conf")
    with open(conf, "w") as f:
        f.write(f"""
worker_processes {workers};
worker_rlimit_nofile {connections + 100};
error_log {prefix}/logs/error.log warn;
pid {prefix}/nginx.pid;
events {{ worker_connections {connections}; }}
http {{
  access_log off;
  client_body_temp_path {prefix}/body; proxy_temp_path {prefix}/proxy;
  fastcgi_temp_path {prefix}/f; uwsgi_temp_path {prefix}/u; scgi_temp_path {prefix}/s;
  client_max_body_size 64m; client_body_buffer_size 16m;
  keepalive_requests 1000000;
  server {{
    listen 127.0.0.1:{port} backlog=4096{" ssl" if tls else ""}{" http2" if http2 else ""};
    {tls or ""}
    {body}
  }}
}}
""")
    start(taskset(cpu) + ["nginx", "-p", prefix, "-c", conf, "-g", "daemon off;"])
    wait_port(port)
    return port


def nginx_proxy(tmp, name, upstream, cpu, http2=False, tls=None):
    """nginx as the baseline reverse proxy: keep-alive upstream, the request buffered (as
    gistproxy reads it whole), the answer streamed."""
    return nginx(tmp, name, f"""
    location / {{ proxy_pass http://backend; proxy_http_version 1.1; proxy_set_header Connection "";
                  proxy_buffering off; proxy_request_buffering on; }}
  }}
  upstream backend {{ server 127.0.0.1:{upstream}; keepalive 256;""", cpu=cpu, http2=http2, tls=tls)


def nginx_worker_pids(tmp, name):
    with open(os.path.join(tmp, name, "nginx.pid")) as f:
        master = int(f.read().strip())
    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(master)], capture_output=True, text=True).stdout
    return [master] + [int(x) for x in out.split()]


def schedstat_ns(pids):
    """CPU time of every thread of these processes, in nanoseconds."""
    total = 0
    for pid in pids:
        for tid in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                    total += int(f.read().split()[0])
            except (FileNotFoundError, ProcessLookupError):
                pass  # a thread that ended: its time is in the process's other counters no more
    return total


def gistproxy(build, upstream, store, threads=1, cpu=0, extra=()):
    port, admin = free_port(), free_port()
    p = start(taskset(cpu) + [f"{build}/gistproxy", "serve", "--listen", f"127.0.0.1:{port}",
                              "--admin-listen", f"127.0.0.1:{admin}", "--upstream", f"http://127.0.0.1:{upstream}",
                              "--store", store, "--threads", str(threads), "--log-level", "warn", *extra],
              stderr=subprocess.DEVNULL)
    wait_port(port)
    return port, p


def loadgen(build, port, mode, cpu=1, **kw):
    args = taskset(cpu) + [f"{build}/gistproxy-loadgen", "--port", str(port), "--mode", mode]
    for k, v in kw.items():
        args += ["--" + k.replace("_", "-"), str(v)]
    out = subprocess.run(args, capture_output=True, text=True, timeout=900)
    if out.returncode != 0:
        raise SystemExit(f"bench: loadgen failed: {out.stderr}")
    return json.loads(out.stdout)
