#!/usr/bin/env bash
# LocalStack "ready" hook (docker-compose.yml mounts it into /etc/localstack/init/ready.d): creates
# what the CDK stack creates in AWS — topic, DLQ, queue with its redrive, raw-delivery subscription,
# the S3 claim check's bucket — with the same numbers, passed in by docker-compose.yml.
set -euo pipefail

name="${OUTBOX_RESOURCE_NAME:?}"

dlq_url=$(awslocal sqs create-queue --queue-name "${name}-dlq" \
  --attributes "MessageRetentionPeriod=${OUTBOX_DLQ_RETENTION_SECONDS:?}" --query QueueUrl --output text)
dlq_arn=$(awslocal sqs get-queue-attributes --queue-url "$dlq_url" \
  --attribute-names QueueArn --query Attributes.QueueArn --output text)

cat >/tmp/outbox-queue-attributes.json <<JSON
{
  "VisibilityTimeout": "${OUTBOX_VISIBILITY_TIMEOUT_SECONDS:?}",
  "MessageRetentionPeriod": "${OUTBOX_QUEUE_RETENTION_SECONDS:?}",
  "ReceiveMessageWaitTimeSeconds": "${OUTBOX_WAIT_TIME_SECONDS:?}",
  "RedrivePolicy": "{\"deadLetterTargetArn\":\"${dlq_arn}\",\"maxReceiveCount\":${OUTBOX_MAX_RECEIVE_COUNT:?}}"
}
JSON
queue_url=$(awslocal sqs create-queue --queue-name "$name" \
  --attributes file:///tmp/outbox-queue-attributes.json --query QueueUrl --output text)
queue_arn=$(awslocal sqs get-queue-attributes --queue-url "$queue_url" \
  --attribute-names QueueArn --query Attributes.QueueArn --output text)

topic_arn=$(awslocal sns create-topic --name "$name" --query TopicArn --output text)
awslocal sns subscribe --topic-arn "$topic_arn" --protocol sqs --notification-endpoint "$queue_arn" \
  --attributes RawMessageDelivery=true >/dev/null

# The claim check's bucket; its objects expire as in the stack (infra/lib/claim-check-bucket.ts): the
# relay's RELAY_CLAIM_CHECK_SEND_WITHIN_HOURS (its default, 192 h), then the queue's and the DLQ's
# retention twice (one redrive), plus a day.
awslocal s3api create-bucket --bucket "${name}-claim-check" >/dev/null
pointer_seconds=$((192 * 3600 + 2 * (OUTBOX_QUEUE_RETENTION_SECONDS + OUTBOX_DLQ_RETENTION_SECONDS)))
expire_days=$(((pointer_seconds + 86399) / 86400 + 1))
awslocal s3api put-bucket-lifecycle-configuration --bucket "${name}-claim-check" --lifecycle-configuration \
  "{\"Rules\":[{\"ID\":\"expire-claimed-payloads\",\"Status\":\"Enabled\",\"Filter\":{},\"Expiration\":{\"Days\":${expire_days}}}]}"

echo "outbox resources ready: topic=${topic_arn} queue=${queue_url} dlq=${dlq_url} bucket=${name}-claim-check"
