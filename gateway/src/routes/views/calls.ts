import { wire, type callcontrol } from "@switchboard/proto";

/** call-control's messages as the REST API shows them (snake_case, null for unset). */
export const toSeat = (s: callcontrol.Seat | undefined) => ({
  id: s?.id ?? "",
  name: s?.name ?? "",
  max_concurrent_calls: s?.maxConcurrentCalls ?? 1,
  status: (s && wire.seatStatus.spell(s.status)) ?? "",
  active_calls: s?.activeCalls ?? 0,
  sip: {
    username: s?.sip?.username ?? "",
    domain: s?.sip?.domain ?? "",
    registered: s?.sip?.registered ?? false,
    contact: s?.sip?.contact ?? null,
  },
  created_at: s?.createdAt ?? "",
  updated_at: s?.updatedAt ?? "",
});

/** A seat with its SIP password (creation and rotation answers only). */
export const toSeatWithSipPassword = (s: callcontrol.Seat | undefined, password: string) => {
  const body = toSeat(s);
  return { ...body, sip: { ...body.sip, password } };
};

export const toAgent = (a: callcontrol.Agent | undefined) => ({
  id: a?.id ?? "",
  name: a?.name ?? "",
  description: a?.description ?? null,
  created_at: a?.createdAt ?? "",
  updated_at: a?.updatedAt ?? "",
});

export const toRoute = (r: callcontrol.Route | undefined) => ({
  id: r?.id ?? "",
  name: r?.name ?? "",
  numbers: r?.numbers ?? [],
  agent: r?.agent ?? "",
  seat_id: r?.seatId ?? null,
  created_at: r?.createdAt ?? "",
  updated_at: r?.updatedAt ?? "",
});

export const toCall = (c: callcontrol.Call | undefined) => ({
  id: c?.id ?? "",
  direction: (c && wire.callDirection.spell(c.direction)) ?? "",
  status: (c && wire.callStatus.spell(c.status)) ?? "",
  to: c?.to ?? "",
  from: c?.from ?? "",
  agent: c?.agent ?? null,
  seat_id: c?.seatId ?? null,
  route_id: c?.routeId ?? null,
  stir_shaken: c?.stirShaken
    ? {
        attestation: wire.attestation.spell(c.stirShaken.attestation) ?? "",
        identity: c.stirShaken.identity,
      }
    : null,
  client_state: c?.clientState ?? null,
  timeout_seconds: c?.timeoutSeconds ?? 0,
  time_limit_seconds: c?.timeLimitSeconds ?? 0,
  hangup_cause: (c?.hangupCause && wire.hangupCause.spell(c.hangupCause)) ?? null,
  hangup_source: (c?.hangupSource && wire.hangupSource.spell(c.hangupSource)) ?? null,
  sip_code: c?.sipCode ?? null,
  early_media: c?.earlyMedia ?? false,
  created_at: c?.createdAt ?? "",
  answered_at: c?.answeredAt ?? null,
  ended_at: c?.endedAt ?? null,
  duration_seconds: c?.durationSeconds ?? null,
  status_callback: c?.statusCallback
    ? { url: c.statusCallback.url, events: c.statusCallback.events }
    : null,
});
