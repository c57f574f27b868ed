-- Up Migration

-- A call whose seat's phone has no live registration ends `failed` / `seat_unavailable`.
ALTER TABLE call_control.calls DROP CONSTRAINT calls_hangup_cause_check;
ALTER TABLE call_control.calls ADD CONSTRAINT calls_hangup_cause_check
  CHECK (hangup_cause IN ('normal_clearing', 'user_busy', 'no_answer', 'timeout', 'time_limit',
    'originator_cancel', 'call_rejected', 'no_route', 'network_error', 'seat_unavailable'));

-- The SIP dialogs of a call (the sip voice carrier, RFC 3261 §12): one row per leg, `phone`
-- (the seat's phone) and `trunk` (the carrier's trunk), written before any packet of the leg is
-- sent, so that any replica, or the process that comes back after a crash, can send the BYE
-- (confirmed) or the CANCEL (calling) of the leg. `invite_*` is the INVITE being answered (a
-- CANCEL repeats its Request-URI, Via and CSeq number); `flow_*` is where the leg's requests go
-- (the phone's registration source, the trunk's address); `remote_sdp` is the phone's offer
-- (the trunk's INVITE carries it; an ACK that refuses it is built from it). `owner_*` names the
-- process whose client transactions run the leg's setup: the address in its Via, and a random
-- id per process.
CREATE TABLE call_control.sip_dialogs (
  call_id text NOT NULL REFERENCES call_control.calls (id) ON DELETE CASCADE,
  leg text NOT NULL CHECK (leg IN ('phone', 'trunk')),
  sip_call_id text NOT NULL CHECK (char_length(sip_call_id) BETWEEN 1 AND 256),
  local_tag text NOT NULL,
  remote_tag text,
  local_uri text NOT NULL,
  remote_uri text NOT NULL,
  remote_target text,
  route_set text[] NOT NULL DEFAULT '{}',
  invite_uri text NOT NULL,
  invite_branch text NOT NULL,
  invite_sent_by text NOT NULL,
  invite_cseq bigint NOT NULL CHECK (invite_cseq >= 1),
  local_cseq bigint NOT NULL CHECK (local_cseq >= 1),
  -- the CSeq of the far end's last request inside the dialog (RFC 3261 §12.2.2)
  remote_cseq bigint,
  flow_transport text NOT NULL CHECK (flow_transport IN ('udp', 'tcp')),
  flow_address text NOT NULL,
  flow_port integer NOT NULL CHECK (flow_port BETWEEN 1 AND 65535),
  remote_sdp text,
  state text NOT NULL CHECK (state IN ('calling', 'confirmed', 'terminated')),
  acked boolean NOT NULL DEFAULT false,
  owner_address text NOT NULL,
  owner_instance text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (call_id, leg)
);
CREATE INDEX sip_dialogs_sip_call_id ON call_control.sip_dialogs (sip_call_id);
CREATE INDEX sip_dialogs_open ON call_control.sip_dialogs (call_id) WHERE state <> 'terminated';
