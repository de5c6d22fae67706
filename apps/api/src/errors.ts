/**
 * A refusal the caller can act on: its HTTP status and a message saying what was wrong. Every error
 * body of the service is `{ "error": message }`, whatever produced it (see `error-reply.ts`).
 */
export class ApiError extends Error {
  override readonly name = "ApiError";

  constructor(
    readonly statusCode: number,
    message: string,
  ) {
    super(message);
  }
}

/** Options `createPhotoServer` refuses: every problem, `option: what is wrong`, joined by "; " (see `photoServerTimeouts`). */
export class PhotoServerOptionsError extends Error {
  override readonly name = "PhotoServerOptionsError";
}
