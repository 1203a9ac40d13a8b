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

// upstream: override where gistproxy forwards (default: the mock).
export async function startStack(extraArgs = [], upstream = null) {
  const mock = spawn(`${BUILD}/gistproxy-mock-upstream`, [], { stdio: ["ignore", "pipe", "inherit"] });
  const mockPort = JSON.parse(await firstLine(mock.stdout, (l) => l.startsWith("{"), "mock upstream")).port;
  const proxy = spawn(`${BUILD}/gistproxy`, ["serve", "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0",
    "--upstream", upstream ?? `http://127.0.0.1:${mockPort}`, ...extraArgs], { stdio: ["ignore", "ignore", "pipe"] });
  const listening = JSON.parse(await firstLine(proxy.stderr, (l) => l.includes('"msg":"listening"'), "gistproxy"));
  proxy.stderr.resume();
  const port = Number(listening.listen.split(":").pop());
  return {
    mockUrl: `http://127.0.0.1:${mockPort}`,
    proxyUrl: `http://127.0.0.1:${port}`,
    async stop() {
      for (const p of [proxy, mock]) {
        p.kill("SIGTERM");
        await once(p, "exit");
      }
    },
  };
}
