import type pg from "pg";
import { isId, newId } from "../ids.js";
import { isEventType, type EventEnvelope } from "./envelope.js";
import { noteOutboxWrite } from "./outbox-signal.js";
import { outboxChannel, qualified } from "./outbox-sql.js";
import { injectTraceContext, sanitizeTraceCarrier, type TraceCarrier } from "./trace-context.js";

export interface AppendEventInput<TData> {
  /** Dotted event type, e.g. `number.held`. */
  type: string;
  accountId: string;
  /** The resource the event is about (its id); `sequence` is counted per resource. */
  resourceId: string;
  /** JSON-serialisable payload (the webhook `data`). */
  data: TData;
  /** Explicit trace context; by default the active one, through the installed propagator. */
  traceCarrier?: TraceCarrier;
  /** A pre-allocated `evt_` id (default: a new one). */
  id?: string;
}

export interface AppendEventOptions {
  /**
   * NOTIFY the relay on commit for a low-latency wake-up (default true). PostgreSQL takes a
   * global lock while committing a notifying transaction; a service appending thousands of
   * events a second may turn this off and rely on the relay's polling.
   */
  notify?: boolean;
}

/**
 * Records an event in `<schema>.outbox`. MUST run on the client of the caller's open
 * transaction, so the state change and its event commit (or roll back) together.
 *
 * Sequence: the per-resource counter row in `<schema>.outbox_sequences` is upserted with
 * `INSERT … ON CONFLICT DO UPDATE SET last_sequence = last_sequence + 1 RETURNING`. The upsert
 * row-locks the counter until the caller's transaction ends, so concurrent appends for one
 * resource queue behind each other (READ COMMITTED re-reads the committed value), a rolled-back
 * append gives its number back, and sequences stay gapless and increasing. Appends for
 * different resources never contend. Under REPEATABLE READ / SERIALIZABLE a concurrent append
 * for the same resource fails with a serialization error; retry the transaction. A transaction
 * that appends for several resources should append in a stable order (as it locks its rows).
 */
export async function appendEvent<TData>(
  client: pg.ClientBase,
  schema: string,
  input: AppendEventInput<TData>,
  options: AppendEventOptions = {},
): Promise<EventEnvelope<TData>> {
  const statement = appendEventStatement(schema, input, options);
  noteOutboxWrite(client, schema);
  const { rows } = await client.query<{ sequence: number | string; occurred_at: Date }>(
    statement.text,
    statement.values,
  );
  const row = rows[0];
  if (!row) throw new Error("appendEvent: the outbox insert returned no row");
  const { id, type, accountId, resourceId, data, trace } = statement.event;
  return {
    id,
    type,
    timestamp: row.occurred_at.toISOString(),
    account_id: accountId,
    resource_id: resourceId,
    sequence: Number(row.sequence),
    data: JSON.parse(data) as TData,
    ...(trace ? { trace } : {}),
  };
}

/**
 * The statement appendEvent sends (validated input, its sequence upsert and outbox insert), for
 * a caller that sends it itself — e.g. together with its transaction's COMMIT, to save a round
 * trip when nothing waits for the event's sequence. The caller must call noteOutboxWrite on the
 * transaction's client, and send it inside that transaction.
 */
export function appendEventStatement<TData>(
  schema: string,
  input: AppendEventInput<TData>,
  options: AppendEventOptions = {},
): {
  text: string;
  values: unknown[];
  event: {
    id: string;
    type: string;
    accountId: string;
    resourceId: string;
    data: string;
    trace: TraceCarrier | undefined;
  };
} {
  if (!isEventType(input.type)) throw new Error(`invalid event type ${JSON.stringify(input.type)}`);
  if (!input.accountId) throw new Error("appendEvent needs an accountId");
  if (!input.resourceId) throw new Error("appendEvent needs a resourceId");
  const id = input.id ?? newId("evt");
  if (!isId(id, "evt")) throw new Error(`invalid event id ${JSON.stringify(id)}`);
  const data = JSON.stringify(input.data);
  if (data === undefined) throw new Error("event data must be JSON-serialisable");
  const trace = sanitizeTraceCarrier(input.traceCarrier) ?? injectTraceContext();
  const notify = options.notify ?? true;
  return {
    text: `WITH next AS (
       INSERT INTO ${qualified(schema, "outbox_sequences")} AS q (resource_id, last_sequence)
       VALUES ($3, 1)
       ON CONFLICT (resource_id) DO UPDATE SET last_sequence = q.last_sequence + 1
       RETURNING last_sequence
     ), event AS (
       INSERT INTO ${qualified(schema, "outbox")}
         (id, type, account_id, resource_id, sequence, data, trace_carrier)
       SELECT $1, $2, $4, $3, next.last_sequence, $5::jsonb, $6::jsonb FROM next
       RETURNING sequence, occurred_at
     )
     SELECT event.sequence, event.occurred_at${notify ? ", pg_notify($7, '')" : ""} FROM event`,
    values: [
      id,
      input.type,
      input.resourceId,
      input.accountId,
      data,
      trace ? JSON.stringify(trace) : null,
      ...(notify ? [outboxChannel(schema)] : []),
    ],
    event: {
      id,
      type: input.type,
      accountId: input.accountId,
      resourceId: input.resourceId,
      data,
      trace,
    },
  };
}

/**
 * appendEventStatement's writes as common table expressions of the caller's own statement, for
 * an event about the row another CTE of that statement returns (`source`, at most one row): the
 * event's account, resource and data are SQL expressions over that row (`source.…`), so a state
 * change and its event travel as ONE statement, and the event is appended only when the change
 * returned its row (a guarded UPDATE that did not apply appends nothing). `param` adds a value
 * to the caller's statement and returns its placeholder. Returns `<name>_sequence AS (…),
 * <name> AS (…)`; the caller must call noteOutboxWrite on the transaction's client.
 */
export function appendEventCtes(
  schema: string,
  input: {
    /** The CTE the event is about. */
    source: string;
    type: string;
    /** SQL expressions over `source`. */
    accountId: string;
    resourceId: string;
    data: string;
    traceCarrier?: TraceCarrier;
    id?: string;
  },
  param: (value: unknown) => string,
  name = "event",
): string {
  if (!isEventType(input.type)) throw new Error(`invalid event type ${JSON.stringify(input.type)}`);
  if (!/^[a-z_][a-z0-9_]*$/.test(input.source) || !/^[a-z_][a-z0-9_]*$/.test(name))
    throw new Error("appendEventCtes: the source and the name must be plain SQL names");
  const id = input.id ?? newId("evt");
  if (!isId(id, "evt")) throw new Error(`invalid event id ${JSON.stringify(id)}`);
  const trace = sanitizeTraceCarrier(input.traceCarrier) ?? injectTraceContext();
  const { source } = input;
  return `${name}_sequence AS (
       INSERT INTO ${qualified(schema, "outbox_sequences")} AS q (resource_id, last_sequence)
       SELECT ${input.resourceId}, 1 FROM ${source}
       ON CONFLICT (resource_id) DO UPDATE SET last_sequence = q.last_sequence + 1
       RETURNING last_sequence
     ), ${name} AS (
       INSERT INTO ${qualified(schema, "outbox")}
         (id, type, account_id, resource_id, sequence, data, trace_carrier)
       SELECT ${param(id)}, ${param(input.type)}, ${input.accountId}, ${input.resourceId},
              ${name}_sequence.last_sequence, ${input.data}, ${param(trace ? JSON.stringify(trace) : null)}::jsonb
         FROM ${source}, ${name}_sequence
       RETURNING sequence
     )`;
}
