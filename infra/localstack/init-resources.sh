#!/usr/bin/env bash
# LocalStack "ready" hook (docker-compose.yml mounts it into /etc/localstack/init/ready.d): creates
# what the CDK stack creates in AWS — topic, DLQ, queue with its redrive, raw-delivery subscription —
# with the same numbers, passed in by docker-compose.yml.
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

echo "outbox resources ready: topic=${topic_arn} queue=${queue_url} dlq=${dlq_url}"
