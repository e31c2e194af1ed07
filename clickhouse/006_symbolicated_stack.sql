-- The stack an occurrence was grouped on, as the release's uploaded source maps or R8/ProGuard
-- mapping read it when the crash was recorded ('' when it had none: the raw stack_trace is then
-- the one shown). The raw stack stays in stack_trace, shown beside it.
ALTER TABLE crash_occurrences ADD COLUMN IF NOT EXISTS symbolicated_stack String DEFAULT '' CODEC(ZSTD(3))
