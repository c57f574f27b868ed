import type { Network, NetworkChecks } from "./networks.js";
import type { Observer } from "./observer.js";

/** None lost, none sent twice (`verify`). */
export interface Checks extends NetworkChecks {
  accepted: number;
  stored: number;
  delivered: number;
  sent_events: number;
  unpublished_events: number;
  max_submits_by_one_number_in_a_second: number;
  max_submits_in_a_second: number;
  lost: number;
  duplicates: number;
  none_lost: boolean;
  none_sent_twice: boolean;
}

/**
 * None lost, none sent twice, over every send of the run (warm-up included): each accepted
 * message stored, delivered, handed to the network once and its events all relayed.
 */
export async function verify(db: Observer, ids: string[], network: Network): Promise<Checks> {
  const { rows } = await db.query<{
    stored: number;
    delivered: number;
    sent_events: number;
    unpublished_events: number;
  }>(
    `SELECT
       (SELECT count(*)::int FROM messaging.messages WHERE id = ANY($1)) AS stored,
       (SELECT count(*)::int FROM messaging.messages WHERE id = ANY($1) AND status = 'delivered') AS delivered,
       (SELECT count(*)::int FROM messaging.outbox WHERE resource_id = ANY($1) AND type = 'message.sent') AS sent_events,
       (SELECT count(*)::int FROM messaging.outbox WHERE resource_id = ANY($1) AND published_at IS NULL) AS unpublished_events`,
    [ids],
  );
  const c = rows[0]!;
  const sends = await network.sends(db, ids);
  const lost = ids.length - Math.min(c.stored, c.delivered, sends.messages_handed_over);
  const duplicates = sends.duplicates + Math.max(0, c.sent_events - ids.length);
  return {
    accepted: ids.length,
    ...c,
    ...sends.checks,
    ...busiestSeconds(sends.list),
    lost,
    duplicates,
    none_lost: lost === 0 && c.unpublished_events === 0,
    none_sent_twice: duplicates === 0 && c.sent_events === ids.length,
  };
}

/** The pace as the network saw it: the most submits in one clock second, per number and in all. */
function busiestSeconds(list: { from: string; at: number }[]) {
  const perNumber = new Map<string, number>();
  const perSecond = new Map<number, number>();
  const bump = <K>(map: Map<K, number>, key: K) => map.set(key, (map.get(key) ?? 0) + 1);
  for (const { from, at } of list) {
    const second = Math.floor(at / 1000);
    bump(perNumber, `${from} ${second}`);
    bump(perSecond, second);
  }
  const most = (map: Map<unknown, number>) =>
    [...map.values()].reduce((max, n) => Math.max(max, n), 0);
  return {
    max_submits_by_one_number_in_a_second: most(perNumber),
    max_submits_in_a_second: most(perSecond),
  };
}
