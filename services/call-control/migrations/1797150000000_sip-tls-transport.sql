-- Up Migration

-- SIP over TLS (SIP_TLS_PORT, a TLS trunk): a phone registered over TLS is reached over its own
-- connection, and a call's leg may run over TLS.
ALTER TABLE call_control.sip_registrations
  DROP CONSTRAINT sip_registrations_transport_check,
  ADD CONSTRAINT sip_registrations_transport_check CHECK (transport IN ('udp', 'tcp', 'tls'));
ALTER TABLE call_control.sip_dialogs
  DROP CONSTRAINT sip_dialogs_flow_transport_check,
  ADD CONSTRAINT sip_dialogs_flow_transport_check CHECK (flow_transport IN ('udp', 'tcp', 'tls'));

-- Down Migration

DELETE FROM call_control.sip_registrations WHERE transport = 'tls';
DELETE FROM call_control.sip_dialogs WHERE flow_transport = 'tls';
ALTER TABLE call_control.sip_dialogs
  DROP CONSTRAINT sip_dialogs_flow_transport_check,
  ADD CONSTRAINT sip_dialogs_flow_transport_check CHECK (flow_transport IN ('udp', 'tcp'));
ALTER TABLE call_control.sip_registrations
  DROP CONSTRAINT sip_registrations_transport_check,
  ADD CONSTRAINT sip_registrations_transport_check CHECK (transport IN ('udp', 'tcp'));
