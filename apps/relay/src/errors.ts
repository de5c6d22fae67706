/** A library option `createRelay` refuses, with the rule it breaks. */
export class RelayOptionsError extends Error {
  override readonly name = "RelayOptionsError";
}
