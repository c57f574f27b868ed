import {
  checkIdempotencyKey,
  cursorId,
  DomainError,
  e164Pattern,
  idPage,
  newId,
  notFound,
  pageLimit,
  type PoolClient,
  replayByKey,
  requestFingerprint,
  requireAccount,
  withTransaction,
} from "@switchboard/kit";
import { wire, type messaging } from "@switchboard/proto";
import type { MessagingContext } from "../context.js";
import { checkChannels, sortChannels, spellChannels, spelled } from "../validation.js";
import { consentColumns, consentEventData, toConsent, type ConsentRow } from "./rows.js";

const maxEvidenceBytes = 4_096;
/** Clock skew tolerated on a `captured_at` in the future. */
const futureSkewMs = 5 * 60_000;

/** CreateConsent: records a granted consent with its source and evidence (`consent.granted`). */
export async function createConsent(
  ctx: MessagingContext,
  sent: messaging.CreateConsentRequest,
  idempotencyKey: string | undefined,
): Promise<messaging.Consent> {
  const request = {
    ...sent,
    channels: spellChannels(sent.channels),
    source: spelled(wire.consentSource, sent.source),
  };
  const errors = requireAccount(request.accountId);
  if (!e164Pattern.test(request.phoneNumber)) {
    errors.add("#/phone_number", "must be an E.164 number such as +14155550123");
  }
  checkChannels(request.channels, "#/channels", errors);
  const source = request.source;
  if (source === "") {
    errors.add("#/source", `must be one of ${wire.consentSource.values.join(", ")}`);
  }
  const evidence = parseEvidence(request.evidenceJson, errors);
  const capturedAt = request.capturedAt === undefined ? new Date() : new Date(request.capturedAt);
  if (request.capturedAt !== undefined) {
    if (Number.isNaN(capturedAt.getTime()) || !/^\d{4}-\d\d-\d\dT/.test(request.capturedAt)) {
      errors.add("#/captured_at", "must be an RFC 3339 time");
    } else if (capturedAt.getTime() > Date.now() + futureSkewMs) {
      errors.add("#/captured_at", "must not be in the future");
    }
  }
  errors.throwIfAny();
  checkIdempotencyKey(idempotencyKey);
  const fingerprint = requestFingerprint("create-consent", request);
  const consent = await withTransaction(ctx.pool, async (client) => {
    const replay = await replayByKey(client, {
      scope: "messaging:cns",
      accountId: request.accountId,
      key: idempotencyKey,
      fingerprint,
      find: async () =>
        (
          await client.query<ConsentRow>(
            `SELECT ${consentColumns} FROM messaging.consents c WHERE c.account_id = $1 AND c.idempotency_key = $2`,
            [request.accountId, idempotencyKey],
          )
        ).rows[0],
      toResource: toConsent,
    });
    if (replay) return replay;
    await refuseOptedOut(client, request.accountId, request.phoneNumber);
    return insertConsent(ctx, client, {
      accountId: request.accountId,
      phoneNumber: request.phoneNumber,
      channels: sortChannels(request.channels),
      source: source as wire.ConsentSourceValue,
      evidence,
      capturedAt,
      idempotencyKey,
      fingerprint,
    });
  });
  ctx.outbox.wake();
  return consent;
}

/**
 * A recipient who opted out by keyword (STOP and synonyms) cannot be given a consent by the
 * API: only their START or UNSTOP opts them back in, as carriers enforce it. Refused at creation
 * rather than granted and then unusable (every send would be 422 recipient-opted-out).
 */
async function refuseOptedOut(client: PoolClient, accountId: string, phoneNumber: string) {
  const { rows } = await client.query<{ keyword: string }>(
    "SELECT keyword FROM messaging.opt_outs WHERE account_id = $1 AND phone_number = $2",
    [accountId, phoneNumber],
  );
  const optOut = rows[0];
  if (optOut) {
    throw new DomainError(
      "recipient-opted-out",
      `${phoneNumber} opted out (${optOut.keyword.toUpperCase()}); only their START or UNSTOP opts them back in`,
    );
  }
}

export interface NewConsent {
  accountId: string;
  phoneNumber: string;
  channels: wire.ChannelValue[];
  source: wire.ConsentSourceValue;
  evidence: Record<string, unknown> | null;
  capturedAt: Date;
  idempotencyKey?: string | undefined;
  fingerprint?: string;
}

/** Inserts a granted consent and its `consent.granted` event on the caller's transaction. */
export async function insertConsent(
  ctx: MessagingContext,
  client: PoolClient,
  consent: NewConsent,
): Promise<messaging.Consent> {
  const { rows } = await client.query<ConsentRow>(
    `INSERT INTO messaging.consents AS c
       (id, account_id, phone_number, channels, source, evidence, captured_at, status,
        idempotency_key, request_fingerprint)
     VALUES ($1, $2, $3, $4, $5, $6, $7, 'granted', $8, $9)
     RETURNING ${consentColumns}`,
    [
      newId("cns"),
      consent.accountId,
      consent.phoneNumber,
      consent.channels,
      consent.source,
      consent.evidence === null ? null : JSON.stringify(consent.evidence),
      consent.capturedAt,
      consent.idempotencyKey ?? null,
      consent.fingerprint ?? null,
    ],
  );
  const row = rows[0] as ConsentRow;
  const created = toConsent(row);
  await ctx.outbox.append(client, {
    type: "consent.granted",
    accountId: consent.accountId,
    resourceId: created.id,
    data: consentEventData(row),
  });
  return created;
}

function parseEvidence(json: string, errors: { add(pointer: string, detail: string): unknown }) {
  if (json === "") return null;
  if (Buffer.byteLength(json, "utf8") > maxEvidenceBytes) {
    errors.add("#/evidence", `must be at most ${maxEvidenceBytes} bytes of JSON`);
    return null;
  }
  try {
    const value = JSON.parse(json) as unknown;
    if (typeof value === "object" && value !== null && !Array.isArray(value)) {
      return value as Record<string, unknown>;
    }
  } catch {
    // reported below
  }
  errors.add("#/evidence", "must be a JSON object");
  return null;
}

export async function getConsent(
  ctx: MessagingContext,
  request: messaging.GetConsentRequest,
): Promise<messaging.Consent> {
  requireAccount(request.accountId).throwIfAny();
  const { rows } = await ctx.pool.query<ConsentRow>(
    `SELECT ${consentColumns} FROM messaging.consents c WHERE c.id = $1 AND c.account_id = $2`,
    [request.consentId, request.accountId],
  );
  if (!rows[0]) throw notFound("the consent");
  return toConsent(rows[0]);
}

/** ListConsents: newest first; optionally one phone number's and/or one status's. */
export async function listConsents(
  ctx: MessagingContext,
  request: messaging.ListConsentsRequest,
): Promise<messaging.ListConsentsResponse> {
  const errors = requireAccount(request.accountId);
  if (request.phoneNumber !== undefined && !e164Pattern.test(request.phoneNumber)) {
    errors.add("#/query/phone_number", "must be an E.164 number such as +14155550123");
  }
  const status = request.status && wire.consentStatus.spell(request.status);
  if (request.status !== undefined && status === undefined) {
    errors.add("#/query/status", "must be granted or revoked");
  }
  errors.throwIfAny();
  const limit = pageLimit(request.limit);
  const binding = `consents:${request.accountId}:${request.phoneNumber ?? ""}:${status ?? ""}`;
  const values: unknown[] = [request.accountId, limit + 1];
  const where = ["c.account_id = $1"];
  const add = (clause: string, value: unknown) => {
    values.push(value);
    where.push(clause.replace("?", `$${values.length}`));
  };
  if (request.phoneNumber !== undefined) add("c.phone_number = ?", request.phoneNumber);
  if (status !== undefined) add("c.status = ?", status);
  const after = cursorId(request.cursor, binding);
  if (after) add("c.id < ?", after);
  const { rows } = await ctx.pool.query<ConsentRow>(
    `SELECT ${consentColumns} FROM messaging.consents c WHERE ${where.join(" AND ")}
      ORDER BY c.id DESC LIMIT $2`,
    values,
  );
  const page = idPage(rows, limit, binding, toConsent);
  return { consents: page.items, nextCursor: page.nextCursor, hasMore: page.hasMore };
}
