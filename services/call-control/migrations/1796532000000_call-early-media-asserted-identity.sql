-- Up Migration

-- A call whose far end sent early media (an outbound trunk's 183 with SDP, passed to the phone
-- before the answer; an inbound phone's, passed to the trunk): docs/api.md "Calls".
ALTER TABLE call_control.calls ADD COLUMN early_media boolean NOT NULL DEFAULT false;

-- The trunk's P-Asserted-Identity of an inbound call (RFC 3325), as it wrote it: kept for the
-- platform (abuse, emergency, lawful requests), never shown to the account (`from` is what the
-- caller chose to show, "anonymous" when it withholds its number).
ALTER TABLE call_control.calls ADD COLUMN asserted_identity text
  CHECK (char_length(asserted_identity) <= 512);

-- Down Migration

ALTER TABLE call_control.calls DROP COLUMN asserted_identity;
ALTER TABLE call_control.calls DROP COLUMN early_media;
