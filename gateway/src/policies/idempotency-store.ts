import { randomUUID } from "node:crypto";
import { plannedEachTime, type Queryable } from "@switchboard/kit";
import type { ResponseSealer } from "./response-sealing.js";

/** What a replay sends back: the status, body and allow-listed headers of the first reply. */
export interface StoredResponse {
  status: number;
  mediaType: string | null;
  /** The body exactly as it was sent; null for a reply without one. */
  body: string | null;
  headers: Record<string, string>;
}

/** A claim's response to keep, under the lease that claimed it. */
export interface Completion {
  accountId: string;
  key: string;
  leaseId: string;
  response: StoredResponse;
}

export type ClaimOutcome =
  /** This request owns the key and runs the operation under `leaseId`. */
  | { kind: "claimed"; leaseId: string; takeover: boolean }
  | { kind: "completed"; fingerprint: Buffer; response: StoredResponse }
  /** `leaseLeftSeconds`: when the key frees if its holder died (the lease runs out). */
  | { kind: "in-progress"; fingerprint: Buffer; leaseLeftSeconds: number }
  /**
   * A concurrent claim committed between the insert and the read, or (with `takeOver: false`)
   * the row is dead and must be taken over: ask again.
   */
  | { kind: "retry" };

export interface IdempotencyStoreOptions {
  /** How long a key is honoured from its first use (docs/api.md: 24 h). */
  windowSeconds: number;
  /** How long an in-progress claim lives without renewal before a retry may take it over. */
  leaseSeconds: number;
  /** Seals stored bodies at rest (some hold secrets shown once). */
  sealer: ResponseSealer;
}

const COLUMNS = `state, fingerprint, response_status, response_media_type, response_body, response_headers`;

/**
 * Claims a new key in one statement: the INSERT wins for exactly one of any number of concurrent
 * requests; everyone else reads the row as it stands (with the database's view of whether its
 * window or lease has run out). ON CONFLICT DO NOTHING takes no lock and writes nothing on a
 * conflict, so a replay or a waiting poll costs a read, not a commit. Time is the database's
 * `now()`: one clock for every replica.
 */
const CLAIM = `
WITH claimed AS (
  INSERT INTO gateway.idempotency_keys
    (account_id, idempotency_key, fingerprint, state, lease_id, lease_expires_at, created_at, expires_at)
  VALUES ($1, $2, $3, 'in_progress', $4, now() + $5::float8 * interval '1 second', now(),
          now() + $6::float8 * interval '1 second')
  ON CONFLICT (account_id, idempotency_key) DO NOTHING
  RETURNING true AS owned, ${COLUMNS}, false AS expired, false AS lapsed, $5::float8 AS lease_left
)
SELECT * FROM claimed
UNION ALL
SELECT false, ${COLUMNS}, expires_at <= now(), coalesce(lease_expires_at <= now(), false),
       greatest(0, coalesce(extract(epoch FROM lease_expires_at - now())::float8, 0))
  FROM gateway.idempotency_keys
 WHERE account_id = $1 AND idempotency_key = $2 AND NOT EXISTS (SELECT 1 FROM claimed)`;

/**
 * Takes over a dead row, atomically (one of any number of concurrent retries wins): a key past
 * its window starts a new one whatever its body; an in-progress claim whose lease ran out (its
 * gateway died) is taken over by a request with the same fingerprint, keeping its window.
 */
const TAKE_OVER = `
UPDATE gateway.idempotency_keys AS k SET
  fingerprint = $3, state = 'in_progress', lease_id = $4,
  lease_expires_at = now() + $5::float8 * interval '1 second',
  created_at = CASE WHEN k.expires_at <= now() THEN now() ELSE k.created_at END,
  expires_at = CASE WHEN k.expires_at <= now() THEN now() + $6::float8 * interval '1 second' ELSE k.expires_at END,
  response_status = NULL, response_media_type = NULL, response_body = NULL,
  response_headers = '{}', completed_at = NULL
WHERE k.account_id = $1 AND k.idempotency_key = $2
  AND ((k.expires_at <= now() AND (k.state = 'completed' OR k.lease_expires_at <= now()))
    OR (k.state = 'in_progress' AND k.lease_expires_at <= now() AND k.fingerprint = $3))
RETURNING k.created_at < now() AS takeover`;

interface ClaimRow {
  owned: boolean;
  /** The key's window has run out. */
  expired: boolean;
  /** The in-progress claim's lease has run out. */
  lapsed: boolean;
  /** Seconds until the in-progress claim's lease runs out (when a retry may take it over). */
  lease_left: number;
  state: "in_progress" | "completed";
  fingerprint: Buffer;
  response_status: number | null;
  response_media_type: string | null;
  response_body: string | null;
  response_headers: Record<string, string> | null;
}

/** The Idempotency-Key store in PostgreSQL (schema `gateway`), durable across replicas. */
export class IdempotencyStore {
  /**
   * `claimDb` (default `db`) takes the claims. With deferred claim commits it is a pool whose
   * commits do not wait for the WAL flush; completions, releases and renewals always do.
   */
  constructor(
    private readonly db: Queryable,
    readonly options: IdempotencyStoreOptions,
    private readonly claimDb: Queryable = db,
  ) {}

  /**
   * Claims the key, or reads it as it stands. `takeOver: false` never writes over a dead row
   * (it answers `retry`): for a claim made before the request is known to be admitted.
   */
  async claim(
    accountId: string,
    key: string,
    fingerprint: Buffer,
    options: { takeOver?: boolean } = {},
  ): Promise<ClaimOutcome> {
    const leaseId = randomUUID();
    const { leaseSeconds, windowSeconds } = this.options;
    const params = [accountId, key, fingerprint, leaseId, leaseSeconds, windowSeconds];
    const row = (await this.claimDb.query<ClaimRow>(CLAIM, params)).rows[0];
    if (!row) return { kind: "retry" };
    if (row.owned) return { kind: "claimed", leaseId, takeover: false };
    const dead =
      row.state === "completed"
        ? row.expired
        : row.lapsed && (row.expired || row.fingerprint.equals(fingerprint));
    if (dead) {
      if (options.takeOver === false) return { kind: "retry" };
      const taken = (await this.claimDb.query<{ takeover: boolean }>(TAKE_OVER, params)).rows[0];
      return taken ? { kind: "claimed", leaseId, takeover: taken.takeover } : { kind: "retry" };
    }
    if (row.state === "in_progress") {
      return {
        kind: "in-progress",
        fingerprint: row.fingerprint,
        leaseLeftSeconds: Number(row.lease_left),
      };
    }
    return {
      kind: "completed",
      fingerprint: row.fingerprint,
      response: {
        status: row.response_status ?? 500,
        mediaType: row.response_media_type,
        body:
          row.response_body === null
            ? null
            : this.options.sealer.open(row.response_body, accountId, key),
        headers: row.response_headers ?? {},
      },
    };
  }

  /** Stores the response to replay; false when the lease was lost (taken over meanwhile). */
  async complete(
    accountId: string,
    key: string,
    leaseId: string,
    response: StoredResponse,
  ): Promise<boolean> {
    const [kept] = await this.completeAll([{ accountId, key, leaseId, response }]);
    return kept === true;
  }

  /**
   * Stores the responses of several claims in one statement (one commit); for each, in order,
   * false when its lease was lost.
   */
  async completeAll(completions: readonly Completion[]): Promise<boolean[]> {
    const { rows } = await this.db.query<{ lease_id: string }>(
      this.completionStatement(completions),
    );
    const kept = new Set(rows.map((row) => row.lease_id));
    return completions.map((c) => kept.has(c.leaseId));
  }

  /**
   * The statement that stores the responses of several claims, returning the lease id of each
   * one kept (a claim taken over meanwhile is not): for the reply committer, which sends it
   * with the replies' records.
   */
  completionStatement(completions: readonly Completion[]): { text: string; values: unknown[] } {
    const { sealer } = this.options;
    // Planned for its batch each time: a generic plan, sized for a hundred completions, may scan
    // the keys instead of looking up the one or two a batch holds.
    return plannedEachTime(
      `UPDATE gateway.idempotency_keys AS k
          SET state = 'completed', response_status = c.status, response_media_type = c.media_type,
              response_body = c.body, response_headers = c.headers::jsonb, completed_at = now(),
              lease_id = NULL, lease_expires_at = NULL
         FROM unnest($1::text[], $2::text[], $3::uuid[], $4::smallint[], $5::text[], $6::text[],
                     $7::text[]) AS c (account_id, idempotency_key, lease_id, status, media_type,
                                       body, headers)
        WHERE k.account_id = c.account_id AND k.idempotency_key = c.idempotency_key
          AND k.lease_id = c.lease_id
    RETURNING c.lease_id`,
      [
        completions.map((c) => c.accountId),
        completions.map((c) => c.key),
        completions.map((c) => c.leaseId),
        completions.map((c) => c.response.status),
        completions.map((c) => c.response.mediaType),
        completions.map((c) =>
          c.response.body === null ? null : sealer.seal(c.response.body, c.accountId, c.key),
        ),
        completions.map((c) => JSON.stringify(c.response.headers)),
      ],
    );
  }

  /** Frees the key (the response is not kept): the next request with it runs again. */
  async release(accountId: string, key: string, leaseId: string): Promise<void> {
    await this.db.query(
      `DELETE FROM gateway.idempotency_keys WHERE account_id = $1 AND idempotency_key = $2 AND lease_id = $3`,
      [accountId, key, leaseId],
    );
  }

  /** Extends the lease of a claim still running; false when it was lost. */
  async renew(accountId: string, key: string, leaseId: string): Promise<boolean> {
    const result = await this.db.query(
      `UPDATE gateway.idempotency_keys SET lease_expires_at = now() + $4::float8 * interval '1 second'
        WHERE account_id = $1 AND idempotency_key = $2 AND lease_id = $3`,
      [accountId, key, leaseId, this.options.leaseSeconds],
    );
    return result.rowCount === 1;
  }

  /**
   * Deletes up to `batch` dead rows (past their window, and not held by a live lease); returns
   * how many. Replicas purging at once skip each other's rows. Claims never rely on it: a dead
   * row is overwritten by the next claim of its key.
   */
  async purge(batch = 1_000): Promise<number> {
    const result = await this.db.query(
      `DELETE FROM gateway.idempotency_keys k
        USING (SELECT account_id, idempotency_key FROM gateway.idempotency_keys
                WHERE expires_at <= now() AND (state = 'completed' OR lease_expires_at <= now())
                ORDER BY expires_at LIMIT $1 FOR UPDATE SKIP LOCKED) dead
        WHERE k.account_id = dead.account_id AND k.idempotency_key = dead.idempotency_key`,
      [batch],
    );
    return result.rowCount ?? 0;
  }
}
