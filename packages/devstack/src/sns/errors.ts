/**
 * An error answered as an AWS Query `<ErrorResponse>`. The `code` is the wire code from the
 * SNS model's `awsQueryError` trait (e.g. `NotFound`), which the SDK maps back to the typed
 * exception class (`NotFoundException`); the status must match the model or retries misfire.
 */
export class SnsError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status = 400,
    readonly type: "Sender" | "Receiver" = status >= 500 ? "Receiver" : "Sender",
  ) {
    super(message);
    this.name = code;
  }
}

export const invalidParameter = (message: string): SnsError =>
  new SnsError("InvalidParameter", `Invalid parameter: ${message}`);

export const topicNotFound = (): SnsError => new SnsError("NotFound", "Topic does not exist", 404);

export const subscriptionNotFound = (): SnsError =>
  new SnsError("NotFound", "Subscription does not exist", 404);
