import { request } from "node:http";

/**
 * Whether a Docker engine answers `GET /_ping` within `timeoutMs`. Deliberately cheaper than
 * testcontainers' runtime discovery, which is slow to give up when there is no engine.
 */
export function dockerEngineAnswers(timeoutMs = 500): Promise<boolean> {
  const host = process.env.DOCKER_HOST;
  let target: { socketPath: string } | { host: string; port: number };
  if (!host) target = { socketPath: "/var/run/docker.sock" };
  else if (host.startsWith("unix://")) target = { socketPath: host.slice("unix://".length) };
  else if (host.startsWith("tcp://")) {
    const url = new URL(host.replace(/^tcp:/, "http:"));
    target = { host: url.hostname, port: Number(url.port || 2375) };
  } else return Promise.resolve(false);

  return new Promise((resolve) => {
    const req = request({ ...target, path: "/_ping", method: "GET", timeout: timeoutMs }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on("timeout", () => req.destroy());
    req.on("error", () => resolve(false));
    req.end();
  });
}
