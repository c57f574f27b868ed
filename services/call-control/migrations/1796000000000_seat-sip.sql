-- Up Migration

-- A seat's SIP credentials (docs/api.md "Voice over SIP"): its digest username is the seat's
-- id; of its password only the digest HA1s are kept, H(username:realm:password) per algorithm.
-- They are bound to `realm` (SIP_DOMAIN when issued). Seats created before this migration have
-- no row until their credentials are rotated (which issues the first password).
CREATE TABLE call_control.seat_sip_credentials (
  seat_id text PRIMARY KEY REFERENCES call_control.seats (id) ON DELETE CASCADE,
  realm text NOT NULL CHECK (char_length(realm) BETWEEN 1 AND 253),
  ha1_md5 text NOT NULL CHECK (ha1_md5 ~ '^[0-9a-f]{32}$'),
  ha1_sha256 text NOT NULL CHECK (ha1_sha256 ~ '^[0-9a-f]{64}$'),
  issued_at timestamptz NOT NULL DEFAULT now()
);

-- Registrations (RFC 3261 §10): a seat's contacts, with where each REGISTER came from (the
-- source address and port, so a request reaches a phone behind NAT; for TCP the connection
-- lives on the replica named by received_by) and the Call-ID/CSeq that orders refreshes. A row
-- counts only while expires_at is in the future.
CREATE TABLE call_control.sip_registrations (
  seat_id text NOT NULL REFERENCES call_control.seats (id) ON DELETE CASCADE,
  contact_uri text NOT NULL CHECK (char_length(contact_uri) BETWEEN 1 AND 1024),
  call_id text NOT NULL CHECK (char_length(call_id) BETWEEN 1 AND 1024),
  cseq bigint NOT NULL CHECK (cseq >= 0),
  transport text NOT NULL CHECK (transport IN ('udp', 'tcp')),
  source_address text NOT NULL,
  source_port integer NOT NULL CHECK (source_port BETWEEN 1 AND 65535),
  received_by text NOT NULL,
  expires_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (seat_id, contact_uri)
);
CREATE INDEX sip_registrations_expiry ON call_control.sip_registrations (expires_at);
