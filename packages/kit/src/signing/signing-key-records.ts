import type { wire } from "@switchboard/proto";
import { exportJWK, exportPKCS8, generateKeyPair, type JWK } from "jose";
import { withTransaction, type Pool, type PoolClient, type Queryable } from "../db.js";
import { qualified } from "../events/outbox-sql.js";
import { newId } from "../ids.js";
import { sealPrivateKey } from "./key-encryption.js";

/**
 * SQL over `<schema>.signing_keys` (see createSigningKeysTable). Private keys leave this
 * module only sealed or as PEM.
 */

/** EdDSA signs with Ed25519, ES256 with ECDSA over P-256 (RFC 7518 §3.4). */
export const signingAlgorithms = ["EdDSA", "ES256"] as const;
export type SigningAlgorithm = (typeof signingAlgorithms)[number];

export const isSigningAlgorithm = (value: unknown): value is SigningAlgorithm =>
  (signingAlgorithms as readonly unknown[]).includes(value);

export interface SigningKeyInfo {
  kid: string;
  purpose: string;
  alg: string;
  status: wire.KeyStatusValue;
  createdAt: Date;
  retiredAt: Date | null;
}

export interface SigningKeyRecord extends SigningKeyInfo {
  publicJwk: JWK;
}

export interface SealedSigningKey extends SigningKeyRecord {
  privateKeyEncrypted: string;
}

/** Which key to create: where, for what, how, sealed under which secret. */
export interface SigningKeySpec {
  schema: string;
  purpose: string;
  alg: SigningAlgorithm;
  secret: string;
}

/** A newly generated key pair: the sealed row as stored, and its private key as PEM. */
export interface CreatedKey {
  record: SealedSigningKey;
  privateKeyPem: string;
}

interface Row {
  kid: string;
  purpose: string;
  alg: string;
  status: wire.KeyStatusValue;
  created_at: Date;
  retired_at: Date | null;
  public_jwk: JWK;
  private_key_encrypted?: string;
}

const publicColumns = "kid, purpose, alg, status, created_at, retired_at, public_jwk";
const table = (schema: string) => qualified(schema, "signing_keys");

const toRecord = (row: Row): SigningKeyRecord => ({
  kid: row.kid,
  purpose: row.purpose,
  alg: row.alg,
  status: row.status,
  createdAt: row.created_at,
  retiredAt: row.retired_at,
  publicJwk: row.public_jwk,
});

/** Every key of the schema, newest first, without private parts. */
export async function selectSigningKeys(
  db: Queryable,
  schema: string,
): Promise<SigningKeyRecord[]> {
  const { rows } = await db.query<Row>(
    `SELECT ${publicColumns} FROM ${table(schema)} ORDER BY created_at DESC, kid DESC`,
  );
  return rows.map(toRecord);
}

/** The active key of `purpose`, sealed, or undefined when there is none. */
export async function selectActiveKey(
  db: Queryable,
  schema: string,
  purpose: string,
): Promise<SealedSigningKey | undefined> {
  const { rows } = await db.query<Row>(
    `SELECT ${publicColumns}, private_key_encrypted FROM ${table(schema)}
      WHERE purpose = $1 AND status = 'active'`,
    [purpose],
  );
  const row = rows[0];
  return row && { ...toRecord(row), privateKeyEncrypted: row.private_key_encrypted ?? "" };
}

interface GeneratedKey {
  kid: string;
  purpose: string;
  alg: SigningAlgorithm;
  publicJwk: JWK;
  sealed: string;
  privateKeyPem: string;
}

/** The public members of an OKP (Ed25519) or EC (P-256) JWK; never `d`. */
function publicMembers(jwk: JWK): JWK {
  const { kty, crv, x, y } = jwk;
  return { kty, crv, x, ...(y === undefined ? {} : { y }) };
}

/** Generates and seals a key pair outside any transaction (scrypt takes a while). */
async function generateKey(spec: SigningKeySpec): Promise<GeneratedKey> {
  const { purpose, alg, secret } = spec;
  const { publicKey, privateKey } =
    alg === "EdDSA"
      ? await generateKeyPair("EdDSA", { crv: "Ed25519", extractable: true })
      : await generateKeyPair("ES256", { extractable: true });
  const kid = newId("key");
  const privateKeyPem = await exportPKCS8(privateKey);
  const sealed = await sealPrivateKey(privateKeyPem, secret, { kid, purpose, alg });
  const publicJwk = publicMembers(await exportJWK(publicKey));
  return { kid, purpose, alg, publicJwk, sealed, privateKeyPem };
}

async function insertKey(
  client: PoolClient,
  schema: string,
  key: GeneratedKey,
): Promise<CreatedKey> {
  const { rows } = await client.query<Row>(
    `INSERT INTO ${table(schema)}
       (kid, purpose, alg, public_jwk, private_key_encrypted, status)
     VALUES ($1, $2, $3, $4, $5, 'active')
     RETURNING ${publicColumns}`,
    [key.kid, key.purpose, key.alg, JSON.stringify(key.publicJwk), key.sealed],
  );
  const record = { ...toRecord(rows[0] as Row), privateKeyEncrypted: key.sealed };
  return { record, privateKeyPem: key.privateKeyPem };
}

/** Serializes key changes of one purpose in one schema across connections and replicas. */
const lockPurpose = (client: PoolClient, schema: string, purpose: string) =>
  client.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [
    `switchboard:signing-keys:${schema}:${purpose}`,
  ]);

const isUniqueViolation = (error: unknown): boolean =>
  typeof error === "object" && error !== null && (error as { code?: unknown }).code === "23505";

/** Creates an active key for the spec's purpose unless one exists; `undefined` when one did. */
export async function createKeyIfNone(
  pool: Pool,
  spec: SigningKeySpec,
): Promise<CreatedKey | undefined> {
  const { schema, purpose } = spec;
  if (await selectActiveKey(pool, schema, purpose)) return undefined;
  const key = await generateKey(spec);
  try {
    return await withTransaction(pool, async (client) => {
      await lockPurpose(client, schema, purpose);
      if (await selectActiveKey(client, schema, purpose)) return undefined;
      return insertKey(client, schema, key);
    });
  } catch (error) {
    // A creator that does not take the same lock (another version) got there first: the
    // unique index on the active key kept it to one, and that one is the key.
    if (isUniqueViolation(error)) return undefined;
    throw error;
  }
}

/** Retires the active key of the purpose (kept and still published) and activates a new one. */
export async function rotateKey(pool: Pool, spec: SigningKeySpec): Promise<CreatedKey> {
  const { schema, purpose } = spec;
  const key = await generateKey(spec);
  return withTransaction(pool, async (client) => {
    await lockPurpose(client, schema, purpose);
    await client.query(
      `UPDATE ${table(schema)} SET status = 'retired', retired_at = now()
        WHERE purpose = $1 AND status = 'active'`,
      [purpose],
    );
    return insertKey(client, schema, key);
  });
}
