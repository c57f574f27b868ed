import type pg from "pg";
import { isId, newId } from "../ids.js";
import type { AppendEventInput } from "./append-event.js";
import { isEventType, type EventEnvelope } from "./envelope.js";
import { noteOutboxWrite } from "./outbox-signal.js";
import { outboxChannel, qualified } from "./outbox-sql.js";
import { injectTraceContext, sanitizeTraceCarrier } from "./trace-context.js";

/**
 * appendEvent for many events in one statement (a service recording thousands of facts a
 * second in batched transactions). The same rules: MUST run on the client of the caller's open
 * transaction; per-resource sequences come from the same upserted counters (gapless,
 * increasing; resources are locked in sorted order, so concurrent batches cannot deadlock on
 * them). Several events of one resource in one call get consecutive sequences in input order.
 * Returns the envelopes in input order.
 */
export async function appendEvents<TData>(
  client: pg.ClientBase,
  schema: string,
  inputs: readonly AppendEventInput<TData>[],
  options: { notify?: boolean } = {},
): Promise<EventEnvelope<TData>[]> {
  if (inputs.length === 0) return [];
  noteOutboxWrite(client, schema);
  const prepared = inputs.map((input) => {
    if (!isEventType(input.type))
      throw new Error(`invalid event type ${JSON.stringify(input.type)}`);
    if (!input.accountId) throw new Error("appendEvents needs an accountId per event");
    if (!input.resourceId) throw new Error("appendEvents needs a resourceId per event");
    const id = input.id ?? newId("evt");
    if (!isId(id, "evt")) throw new Error(`invalid event id ${JSON.stringify(id)}`);
    const data = JSON.stringify(input.data);
    if (data === undefined) throw new Error("event data must be JSON-serialisable");
    const trace = sanitizeTraceCarrier(input.traceCarrier) ?? injectTraceContext();
    return { input, id, data, trace };
  });
  // How many sequences each resource takes, claimed in sorted resource order.
  const counts = new Map<string, number>();
  for (const { input } of prepared)
    counts.set(input.resourceId, (counts.get(input.resourceId) ?? 0) + 1);
  const resources = [...counts.keys()].sort();
  const { rows: claimed } = await client.query<{
    resource_id: string;
    last_sequence: number | string;
  }>(
    `INSERT INTO ${qualified(schema, "outbox_sequences")} AS q (resource_id, last_sequence)
     SELECT r, n FROM unnest($1::text[], $2::bigint[]) AS c (r, n) ORDER BY r
     ON CONFLICT (resource_id) DO UPDATE SET last_sequence = q.last_sequence + excluded.last_sequence
     RETURNING resource_id, last_sequence`,
    [resources, resources.map((r) => counts.get(r)!)],
  );
  const next = new Map(
    claimed.map((row) => [
      row.resource_id,
      Number(row.last_sequence) - counts.get(row.resource_id)! + 1,
    ]),
  );
  const sequences = prepared.map(({ input }) => {
    const sequence = next.get(input.resourceId)!;
    next.set(input.resourceId, sequence + 1);
    return sequence;
  });
  const notify = options.notify ?? true;
  const { rows } = await client.query<{ id: string; occurred_at: Date }>(
    `INSERT INTO ${qualified(schema, "outbox")}
       (id, type, account_id, resource_id, sequence, data, trace_carrier)
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[],
                          $6::jsonb[], $7::jsonb[])
     RETURNING id, occurred_at${notify ? `, pg_notify('${outboxChannel(schema)}', '')` : ""}`,
    [
      prepared.map((p) => p.id),
      prepared.map((p) => p.input.type),
      prepared.map((p) => p.input.accountId),
      prepared.map((p) => p.input.resourceId),
      sequences,
      prepared.map((p) => p.data),
      prepared.map((p) => (p.trace ? JSON.stringify(p.trace) : null)),
    ],
  );
  const occurred = new Map(rows.map((row) => [row.id, row.occurred_at]));
  return prepared.map(({ input, id, data, trace }, index) => ({
    id,
    type: input.type,
    timestamp: occurred.get(id)!.toISOString(),
    account_id: input.accountId,
    resource_id: input.resourceId,
    sequence: sequences[index]!,
    data: JSON.parse(data) as TData,
    ...(trace ? { trace } : {}),
  }));
}
