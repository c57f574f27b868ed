-- Up Migration

-- A durable timer carries the W3C trace context of the transaction that set it (as the outbox
-- does), so the work it stands for (the dial after a POST, the ring timeout after the dial)
-- continues that trace whichever replica, or whichever wake, runs it. NULL: set untraced.
ALTER TABLE call_control.scheduled_actions ADD COLUMN trace_carrier jsonb;

-- Down Migration

ALTER TABLE call_control.scheduled_actions DROP COLUMN trace_carrier;
