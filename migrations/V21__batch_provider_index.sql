-- A provider's job-state event (Bedrock's "Batch Inference Job State Change", through the
-- stack's EventBridge rule) names a batch by the provider's id, its job ARN: the sweeper finds
-- the open batch it names through this index, not a scan of the open batches.
CREATE INDEX task_batches_provider_idx ON task_batches (provider_batch_id) WHERE state = 'submitted';
