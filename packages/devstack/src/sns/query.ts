/**
 * Decodes the AWS Query wire format the SNS SDK sends: a flat form body whose keys encode
 * structure (`X.member.N.Field` for lists, `X.entry.N.key|value` or `.Name|Value` for maps).
 */
export type QueryParams = ReadonlyMap<string, string>;

export function parseQuery(body: string): QueryParams {
  return new Map(new URLSearchParams(body));
}

/** Sub-parameters of the `N`th list member or map entry, keyed relative to it. */
function indexed(params: QueryParams, prefix: string): QueryParams[] {
  const byIndex = new Map<number, Map<string, string>>();
  const head = `${prefix}.`;
  for (const [key, value] of params) {
    if (!key.startsWith(head)) continue;
    const rest = key.slice(head.length);
    const dot = rest.indexOf(".");
    const index = Number(dot === -1 ? rest : rest.slice(0, dot));
    if (!Number.isInteger(index) || index < 1) continue;
    let member = byIndex.get(index);
    if (!member) {
      member = new Map();
      byIndex.set(index, member);
    }
    member.set(dot === -1 ? "" : rest.slice(dot + 1), value);
  }
  return [...byIndex.entries()].sort(([a], [b]) => a - b).map(([, member]) => member);
}

/** `Name.member.N…` → one sub-parameter map per list member, in wire order. */
export function queryList(params: QueryParams, name: string): QueryParams[] {
  return indexed(params, `${name}.member`);
}

/** `Name.entry.N.key=…&Name.entry.N.value=…` → plain string map (SNS `Attributes`). */
export function queryStringMap(params: QueryParams, name: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of indexed(params, `${name}.entry`)) {
    const key = entry.get("key");
    if (key !== undefined) out[key] = entry.get("value") ?? "";
  }
  return out;
}

/** `Name.entry.N.Name` + `Name.entry.N.Value.*` → entries whose value is itself structured. */
export function queryStructMap(params: QueryParams, name: string): Array<[string, QueryParams]> {
  return indexed(params, `${name}.entry`).map((entry) => {
    const value = new Map<string, string>();
    for (const [key, v] of entry) if (key.startsWith("Value.")) value.set(key.slice(6), v);
    return [entry.get("Name") ?? "", value];
  });
}
