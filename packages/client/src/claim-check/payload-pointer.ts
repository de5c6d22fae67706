/**
 * The claim check's wire format: the one AWS's payload-offloading extended clients write and read
 * (amazon-sns-java-extended-client-lib, amazon-sqs-java-extended-client-lib and their Python ports,
 * all on payload-offloading-java-common-lib), so a consumer built on those reads our messages and
 * ours reads theirs. The message body is Jackson's wrapper-array form of the pointer class,
 * `["software.amazon.payloadoffloading.PayloadS3Pointer",{"s3BucketName":"…","s3Key":"…"}]`, and the
 * message carries the `ExtendedPayloadSize` attribute, the payload's size in bytes. The libraries
 * tell an offloaded message by that attribute's name alone (`ExtendedPayloadSize`, or the legacy
 * `SQSLargePayloadSize`), never by its data type: they write it as Number, our relay publishes every
 * attribute as String, and both read the same.
 */

/** The pointer class the libraries name in the body today. */
export const PAYLOAD_POINTER_CLASS = "software.amazon.payloadoffloading.PayloadS3Pointer";
/** The class the first SQS extended client wrote; its successors still read it, and so do we. */
export const LEGACY_PAYLOAD_POINTER_CLASS = "com.amazon.sqs.javamessaging.MessageS3Pointer";
/** The attribute that marks an offloaded message: the payload's size in bytes. */
export const EXTENDED_PAYLOAD_SIZE_ATTRIBUTE = "ExtendedPayloadSize";
/** The name the SQS extended client used before; still recognised on receive. */
export const LEGACY_PAYLOAD_SIZE_ATTRIBUTE = "SQSLargePayloadSize";
/** Both names, in the order a reader looks for them. */
export const PAYLOAD_SIZE_ATTRIBUTES: readonly string[] = [
  EXTENDED_PAYLOAD_SIZE_ATTRIBUTE,
  LEGACY_PAYLOAD_SIZE_ATTRIBUTE,
];

/** Where a claim-checked payload is: an S3 object. */
export interface PayloadPointer {
  readonly bucket: string;
  readonly key: string;
}

/** The message body that stands for the payload at `pointer`. */
export function encodePointer(pointer: PayloadPointer): string {
  return JSON.stringify([PAYLOAD_POINTER_CLASS, { s3BucketName: pointer.bucket, s3Key: pointer.key }]);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * The pointer a parsed message body is, or why it is not one. `body` is the body's JSON value,
 * already parsed (the consumer parses every body once).
 */
export function decodePointer(body: unknown): PayloadPointer | string {
  if (!Array.isArray(body) || body.length !== 2) {
    return `the body is not a [class, pointer] pair of the extended clients' format`;
  }
  const [className, fields] = body as [unknown, unknown];
  if (className !== PAYLOAD_POINTER_CLASS && className !== LEGACY_PAYLOAD_POINTER_CLASS) {
    return `unknown pointer class ${JSON.stringify(className) ?? "(none)"}`;
  }
  if (!isRecord(fields)) return "the pointer is not an object";
  const { s3BucketName, s3Key } = fields;
  if (typeof s3BucketName !== "string" || s3BucketName === "")
    return "the pointer has no s3BucketName string";
  if (typeof s3Key !== "string" || s3Key === "") return "the pointer has no s3Key string";
  return { bucket: s3BucketName, key: s3Key };
}

/**
 * Whether a message's attributes (an outbox row's headers, an SQS message's or an SNS
 * notification's attributes) mark it claim-checked: by the size attribute's name alone, as the
 * extended clients tell it.
 */
export function marksClaimCheck(attributes: unknown): boolean {
  return isRecord(attributes) && PAYLOAD_SIZE_ATTRIBUTES.some((name) => Object.hasOwn(attributes, name));
}

/**
 * The pointer a claim-checked message carries, or undefined: its attributes mark it
 * (marksClaimCheck) and its body, JSON text, decodes as a pointer. A marked body that is no pointer
 * gives undefined too: why it is not one is the consumer's poison reason (decodePointer), not a
 * tool's business.
 */
export function claimCheckPointer(attributes: unknown, bodyText: unknown): PayloadPointer | undefined {
  if (!marksClaimCheck(attributes) || typeof bodyText !== "string") return undefined;
  let body: unknown;
  try {
    body = JSON.parse(bodyText);
  } catch {
    return undefined;
  }
  const pointer = decodePointer(body);
  return typeof pointer === "string" ? undefined : pointer;
}

/** `s3://bucket/key`, for log lines and poison reasons. */
export function pointerUri(pointer: PayloadPointer): string {
  return `s3://${pointer.bucket}/${pointer.key}`;
}
