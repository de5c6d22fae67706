import { HeadObjectCommand, type S3Client } from "@aws-sdk/client-s3";

export type { S3Client } from "@aws-sdk/client-s3";

/**
 * S3's error name when the object is not there, or undefined: NoSuchKey (GetObject's 404) or
 * NotFound (HeadObject's, which has no body to name a code). Without s3:ListBucket on the bucket S3
 * answers 403 AccessDenied instead, indistinguishable from a real denial: hence the ListBucket grant
 * of whoever reads the claim check (infra).
 */
export function missingObjectCode(error: unknown): string | undefined {
  const name = (error as { name?: unknown } | null)?.name;
  return name === "NoSuchKey" || name === "NotFound" ? name : undefined;
}

/**
 * Whether S3 has the object (HeadObject, cut when `signal` aborts): false only when S3 answers that
 * it is not there. Anything else (S3 unreachable, a denial, the time ran out) throws: an outage must
 * never pass for an object that is gone.
 */
export async function objectExists(
  s3: S3Client,
  object: { readonly bucket: string; readonly key: string },
  signal: AbortSignal,
): Promise<boolean> {
  try {
    await s3.send(new HeadObjectCommand({ Bucket: object.bucket, Key: object.key }), { abortSignal: signal });
    return true;
  } catch (error) {
    if (missingObjectCode(error) !== undefined) return false;
    throw error;
  }
}
