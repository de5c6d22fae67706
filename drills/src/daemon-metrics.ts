/** Reads one sample (summed over label sets) from a daemon's Prometheus `/metrics`. */
export async function readMetric(opsPort: number, name: string): Promise<number> {
  const response = await fetch(`http://127.0.0.1:${opsPort}/metrics`);
  const text = await response.text();
  let sum = 0;
  for (const line of text.split("\n")) {
    if (line.startsWith(`${name}{`) || line.startsWith(`${name} `))
      sum += Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return sum;
}
