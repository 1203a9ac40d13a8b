// Starts the loopback mock upstream and a real gistproxy for SDK tests, and
// stops both when the test file ends.
import { spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, readFileSync } from "node:fs";
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
  // The log from here on (the access lines), kept up to 4 MB for tests to read.
  let log = "";
  proxy.stderr.setEncoding("utf8");
  proxy.stderr.on("data", (text) => { if (log.length < 4 << 20) log += text; });
  return {
    url: `http://127.0.0.1:${Number(listening.listen.split(":").pop())}`,
    adminUrl: `http://127.0.0.1:${Number(listening.admin.split(":").pop())}`,
    process: proxy,
    // The complete JSON lines logged so far whose msg is `msg`.
    logged: (msg) => log.split("\n").slice(0, -1).filter((l) => l.startsWith("{")).map((l) => JSON.parse(l))
      .filter((r) => r.msg === msg),
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

// A 200 KB tool output with one needle line: what the mock's scripted model
// greps for once the output is offloaded.
export function haystack() {
  const lines = [];
  for (let i = 0; lines.join("\n").length < 200 * 1024; i++) {
    if (i === 2500) lines.push("config line 2500: NEEDLE secret_port=48213");
    lines.push(`config line ${i}: key_${i}=value_${(i * 31) % 977}`);
  }
  return lines.join("\n") + "\n";
}
export const expectedNeedle = "found: 2501: config line 2500: NEEDLE secret_port=48213";

// The complete JSON lines of a file a running proxy appends to (a recording,
// a span log): a line is complete once its newline is written (a reader can
// see a record half written, and a slow build such as ASan widens that
// window), so the text after the last newline is left for a later read.
export function completeLines(file) {
  if (!existsSync(file)) return [];
  const lines = readFileSync(file, "utf8").split("\n");
  lines.pop();
  return lines.filter(Boolean).map((l) => JSON.parse(l));
}

// Polls `predicate` until it returns something truthy, for at most `ms`:
// the proxy writes its recording after the client has its answer.
export async function waitFor(what, predicate, ms = 10000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await predicate();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
