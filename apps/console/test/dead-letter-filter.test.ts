import { describe, expect, it } from "vitest";
import { type ListedLetter, matchesLetter } from "../src/reads/dead-letters.js";

// The Dead letters view's filter (and a redrive's preview of a group): the kind, then the rules of
// `consumer redrive`'s own filter (matchesFilter), whose ages are in ms where the console's are in s.

const letter = (fields: Partial<ListedLetter>): ListedLetter => ({
  messageId: "m-1",
  eventId: "e-1",
  eventType: "order.placed",
  reason: "body_not_json: Unexpected token",
  attempts: 1,
  sentAt: null,
  ageSeconds: 600,
  kind: "body_not_json",
  attributes: {},
  bodyHead: "",
  bodyChars: 0,
  ...fields,
});

describe("matchesLetter", () => {
  it("takes every letter with no field set", () => {
    expect(matchesLetter({}, letter({ ageSeconds: null }))).toBe(true);
  });

  it("takes only the kind and the event type asked for", () => {
    expect(matchesLetter({ kind: "body_not_json" }, letter({}))).toBe(true);
    expect(matchesLetter({ kind: "redrive_policy" }, letter({}))).toBe(false);
    expect(matchesLetter({ eventType: "order.placed" }, letter({}))).toBe(true);
    expect(matchesLetter({ eventType: "order.paid" }, letter({}))).toBe(false);
  });

  it("takes a letter at least as old as asked, and none whose age is unknown", () => {
    expect(matchesLetter({ olderThanSeconds: 300 }, letter({ ageSeconds: 300 }))).toBe(true);
    expect(matchesLetter({ olderThanSeconds: 300 }, letter({ ageSeconds: 299 }))).toBe(false);
    expect(matchesLetter({ olderThanSeconds: 300 }, letter({ ageSeconds: null }))).toBe(false);
  });
});
