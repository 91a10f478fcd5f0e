#!/usr/bin/env python3
"""Create the task queue (with its DLQ) and the events queue on an SQS-compatible endpoint.

The attributes are the SAM stack's (template.yaml): keep the two in step.
Usage: sqs_queues.py ENDPOINT PREFIX  -> prints KEY=VALUE lines for .local/env
"""
import json
import sys
import urllib.request

# process-task runs for at most 300 s; the queue hides a message a little longer.
TASK_VISIBILITY_TIMEOUT = "360"
# Above the attempt budget (3): duplicate deliveries also count as receives.
MAX_RECEIVE_COUNT = 10
DLQ_RETENTION = "1209600"  # 14 days


def call(endpoint, action, body):
    request = urllib.request.Request(
        endpoint,
        data=json.dumps(body).encode(),
        headers={"X-Amz-Target": f"AmazonSQS.{action}", "Content-Type": "application/x-amz-json-1.0"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read() or b"{}")


def main():
    endpoint, prefix = sys.argv[1], sys.argv[2]
    dlq = call(endpoint, "CreateQueue", {"QueueName": f"{prefix}-tasks-dlq",
                                         "Attributes": {"MessageRetentionPeriod": DLQ_RETENTION}})["QueueUrl"]
    dlq_arn = call(endpoint, "GetQueueAttributes", {"QueueUrl": dlq, "AttributeNames": ["QueueArn"]})["Attributes"]["QueueArn"]
    tasks = call(endpoint, "CreateQueue", {"QueueName": f"{prefix}-tasks", "Attributes": {
        "VisibilityTimeout": TASK_VISIBILITY_TIMEOUT,
        "RedrivePolicy": json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": MAX_RECEIVE_COUNT}),
    }})["QueueUrl"]
    events = call(endpoint, "CreateQueue", {"QueueName": f"{prefix}-events"})["QueueUrl"]
    print(f"AITASK_TASK_QUEUE_URL={tasks}")
    print(f"AITASK_TASK_DLQ_URL={dlq}")
    print(f"AITASK_EVENTS_QUEUE_URL={events}")


if __name__ == "__main__":
    main()
