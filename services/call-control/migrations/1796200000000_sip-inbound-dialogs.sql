-- Up Migration

-- The trunk leg of an inbound call is a dialog we are the UAS of: `server_invite` keeps the
-- trunk's INVITE as a response to it needs it (its Via list, From, To with our tag, Call-ID,
-- CSeq), so that any replica can send the INVITE's final response (RFC 3261 §8.2.6) to the
-- trunk's source flow. NULL for the legs we INVITE.
ALTER TABLE call_control.sip_dialogs ADD COLUMN server_invite jsonb;

-- Down Migration

ALTER TABLE call_control.sip_dialogs DROP COLUMN server_invite;
