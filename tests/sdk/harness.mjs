// Starts the loopback mock upstream and a real gistproxy for SDK tests, and
// stops both when the test file ends.
import { spawn } from "node:child_process";
import { once } from "node:events";
import readline from "node:readline";

const BUILD = process.env.GISTPROXY_BUILD;
if (!BUILD) throw new Error("GISTPROXY_BUILD must name the build directory");

async function firstLine(stream, predicate, what) {
  const rl = readline.createInterface({ input: stream });
  const timer = setTimeout(() => rl.emit("error", new Error(`${what} did not start`)), 10000);
  for await (const line of rl) {
    if (predicate(line)) {
      clearTimeout(timer);
      return line;
    }
  }
  throw new Error(`${what} exited before starting`);
}

// The loopback mock upstream (scripted model); returns its URL and process.
export async function startMock() {
  const mock = spawn(`${BUILD}/gistproxy-mock-upstream`, [], { stdio: ["ignore", "pipe", "inherit"] });
  const port = JSON.parse(await firstLine(mock.stdout, (l) => l.startsWith("{"), "mock upstream")).port;
  return { url: `http://127.0.0.1:${port}`, process: mock };
}

// The test's environment without proxy variables: gistproxy honours
// HTTPS_PROXY / HTTP_PROXY / NO_PROXY, and a machine's own would route the
// tests' loopback upstreams elsewhere.
function withoutProxyVariables(env) {
  return Object.fromEntries(Object.entries(env).filter(([name]) => !/_proxy$/i.test(name)));
}

// One gistproxy serve in front of `upstream`; `env` adds environment variables.
export async function startProxy(upstream, extraArgs = [], env = {}) {
  const proxy = spawn(`${BUILD}/gistproxy`, ["serve", "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0",
    "--upstream", upstream, ...extraArgs], { stdio: ["ignore", "ignore", "pipe"],
    env: { ...withoutProxyVariables(process.env), ...env } });
  const listening = JSON.parse(await firstLine(proxy.stderr, (l) => l.includes('"msg":"listening"'), "gistproxy"));
  proxy.stderr.resume();
  return {
    url: `http://127.0.0.1:${Number(listening.listen.split(":").pop())}`,
    adminUrl: `http://127.0.0.1:${Number(listening.admin.split(":").pop())}`,
    process: proxy,
  };
}

export async function stopProcess(p) {
  if (p.exitCode !== null || p.signalCode !== null) return;
  p.kill("SIGTERM");
  await once(p, "exit");
}

// upstream: override where gistproxy forwards (default: the mock).
export async function startStack(extraArgs = [], upstream = null) {
  const mock = await startMock();
  const proxy = await startProxy(upstream ?? mock.url, extraArgs);
  return {
    mockUrl: mock.url,
    proxyUrl: proxy.url,
    adminUrl: proxy.adminUrl,
    async stop() {
      for (const p of [proxy.process, mock.process]) await stopProcess(p);
    },
  };
}
