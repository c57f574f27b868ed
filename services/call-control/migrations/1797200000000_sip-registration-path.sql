-- Up Migration

-- The Path of a registration (RFC 3327): the proxies its REGISTER came through (a SIP edge
-- holding the phone's connection), as written, first the one nearest to us. A request to the
-- phone goes through them: they are its preloaded Route set (RFC 3327 §5). Empty: the phone
-- registered directly.
ALTER TABLE call_control.sip_registrations
  ADD COLUMN path text[] NOT NULL DEFAULT '{}'
    CHECK (cardinality(path) <= 5);

-- Down Migration

ALTER TABLE call_control.sip_registrations DROP COLUMN path;
