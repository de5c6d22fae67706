/**
 * Variables a container may set although no daemon setting reads them: Node, the AWS SDK and
 * OpenTelemetry read them on their own. Everything else outside a daemon's settings is refused, so a
 * typo of one of our names still fails the synth instead of being ignored by the daemon at run time.
 */
export const PLATFORM_ENV_NAMES: ReadonlySet<string> = new Set([
  // Node: extra CAs for TLS (a proxy's, a private equipment service's) and runtime flags. The image
  // sets NODE_OPTIONS=--enable-source-maps; a task's value replaces it, so keep that flag in it.
  "NODE_EXTRA_CA_CERTS",
  "NODE_OPTIONS",
  // The SDK's own switches the daemons' settings do not cover (AWS_REGION, AWS_ENDPOINT_URL*,
  // AWS_MAX_ATTEMPTS are settings). Credentials are deliberately absent: the task role provides
  // them, and a key in plain environment would sit in the template.
  "AWS_RETRY_MODE",
  "AWS_USE_FIPS_ENDPOINT",
  "AWS_USE_DUALSTACK_ENDPOINT",
]);

/** OpenTelemetry's SDKs read the whole family (OTEL_SERVICE_NAME, OTEL_EXPORTER_OTLP_ENDPOINT, …). */
export const PLATFORM_ENV_PREFIXES: readonly string[] = ["OTEL_"];

export function isPlatformVariable(name: string): boolean {
  return (
    PLATFORM_ENV_NAMES.has(name) ||
    PLATFORM_ENV_PREFIXES.some((prefix) => name.startsWith(prefix) && name.length > prefix.length)
  );
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i += 1) {
    const current = [i];
    for (let j = 1; j <= b.length; j += 1) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution));
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}

/** The known name a typo most likely meant: within two edits, else none. */
export function closestName(name: string, known: Iterable<string>): string | undefined {
  let best: { name: string; distance: number } | undefined;
  for (const candidate of known) {
    const distance = editDistance(name, candidate);
    if (distance <= 2 && (best === undefined || distance < best.distance)) {
      best = { name: candidate, distance };
    }
  }
  return best?.name;
}
