export async function servePlayground(_: unknown): Promise<{ url: string; close(): Promise<void> }> {
  throw new Error("todo");
}
