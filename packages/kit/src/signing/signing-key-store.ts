import { importJWK, importPKCS8, type CryptoKey, type JWK } from "jose";
import type { Pool } from "../db.js";
import { assertSchemaName } from "../events/outbox-sql.js";
import type { Logger } from "../logger.js";
import { openPrivateKey } from "./key-encryption.js";
import {
  createKeyIfNone,
  isSigningAlgorithm,
  rotateKey,
  selectActiveKey,
  selectSigningKeys,
  type SigningAlgorithm,
  type SigningKeyInfo,
  type SigningKeyRecord,
  type SigningKeySpec,
} from "./signing-key-records.js";

export interface ActiveSigningKey {
  kid: string;
  purpose: string;
  alg: SigningAlgorithm;
  privateKey: CryptoKey;
}

/** A published verification key (RFC 7517). */
export type PublicJwk = JWK & { kid: string; alg: string; use: "sig" };

export interface SigningKeyStoreOptions {
  pool: Pool;
  /** The service's own schema holding `signing_keys` (see createSigningKeysTable). */
  schema: string;
  /** The service's SIGNING_KEY_SECRET: seals private keys at rest. */
  secret: string;
  /**
   * What this service signs. Each purpose always has an active key once `init`,
   * `activeKey` or `publicJwks` runs; other purposes are refused.
   */
  purposes: readonly string[];
  /** Algorithm per purpose; a purpose not named here signs with EdDSA (Ed25519). */
  algorithms?: Readonly<Record<string, SigningAlgorithm>>;
  logger?: Logger;
  /** Least time between two reloads of the public keys (unknown kid, JWKS). Default 5 s. */
  refreshIntervalMs?: number;
  /** How long a process signs with the active key it knows before re-checking. Default 60 s. */
  activeKeyTtlMs?: number;
}

const purposePattern = /^[a-z][a-z0-9-]{0,63}$/;

/**
 * Signing keys per purpose in `<schema>.signing_keys`: one active (signs), any number retired
 * (still verify, still published). Public keys are cached in memory and reloaded at most every
 * `refreshIntervalMs` when an unknown kid shows up; the active key is re-checked every
 * `activeKeyTtlMs` so a rotation by another replica is picked up. A key verifies only for its
 * own purpose and only when its alg is the one configured for that purpose.
 */
export class SigningKeyStore {
  readonly schema: string;
  readonly purposes: readonly string[];
  private readonly algorithms: ReadonlyMap<string, SigningAlgorithm>;
  private readonly refreshIntervalMs: number;
  private readonly activeKeyTtlMs: number;
  private records = new Map<string, SigningKeyRecord>();
  private loadedAt = Number.NEGATIVE_INFINITY;
  private loading: Promise<void> | undefined;
  private readonly verifyKeys = new Map<string, Promise<CryptoKey>>();
  private readonly signKeys = new Map<string, Promise<CryptoKey>>();
  private readonly active = new Map<string, { at: number; key: Promise<ActiveSigningKey> }>();

  constructor(private readonly options: SigningKeyStoreOptions) {
    if (options.secret.length === 0) throw new TypeError("the signing key secret is empty");
    this.schema = assertSchemaName(options.schema);
    if (options.purposes.length === 0) throw new TypeError("name at least one signing purpose");
    for (const purpose of options.purposes) {
      if (!purposePattern.test(purpose)) {
        throw new TypeError(`invalid signing purpose ${JSON.stringify(purpose)}: use [a-z0-9-]`);
      }
    }
    this.purposes = [...new Set(options.purposes)];
    const algorithms = options.algorithms ?? {};
    for (const [purpose, alg] of Object.entries(algorithms)) {
      if (!this.purposes.includes(purpose)) {
        throw new TypeError(`algorithm given for ${purpose}, which is not among the purposes`);
      }
      if (!isSigningAlgorithm(alg)) {
        throw new TypeError(`unsupported signing algorithm ${String(alg)} for ${purpose}`);
      }
    }
    this.algorithms = new Map(this.purposes.map((p) => [p, algorithms[p] ?? "EdDSA"]));
    this.refreshIntervalMs = options.refreshIntervalMs ?? 5_000;
    this.activeKeyTtlMs = options.activeKeyTtlMs ?? 60_000;
  }

  /** The algorithm `purpose` signs with; throws for a purpose this store does not serve. */
  algorithm(purpose: string): SigningAlgorithm {
    const alg = this.algorithms.get(purpose);
    if (!alg) {
      throw new TypeError(
        `unknown signing purpose ${JSON.stringify(purpose)} (this store serves ${this.purposes.join(", ")})`,
      );
    }
    return alg;
  }

  /** Ensures every purpose has an active key and that it decrypts (fails fast at boot). */
  async init(): Promise<void> {
    for (const purpose of this.purposes) await this.activeKey(purpose);
  }

  /** The key to sign with now; creates the purpose's first key when there is none. */
  activeKey(purpose: string): Promise<ActiveSigningKey> {
    const cached = this.active.get(purpose);
    if (cached && Date.now() - cached.at < this.activeKeyTtlMs) return cached.key;
    let key: Promise<ActiveSigningKey>;
    try {
      key = this.loadActive(purpose, this.algorithm(purpose));
    } catch (error) {
      return Promise.reject(error);
    }
    this.active.set(purpose, { at: Date.now(), key });
    key.catch(() => {
      if (this.active.get(purpose)?.key === key) this.active.delete(purpose);
    });
    return key;
  }

  /** The verification key `kid` of `purpose`, or undefined when no such key exists. */
  async publicKey(purpose: string, kid: string): Promise<CryptoKey | undefined> {
    const alg = this.algorithms.get(purpose);
    if (!alg) return undefined;
    let record = this.records.get(kid);
    if (!record && Date.now() - this.loadedAt >= this.refreshIntervalMs) {
      await this.reload();
      record = this.records.get(kid);
    }
    if (!record || record.purpose !== purpose || record.alg !== alg) return undefined;
    let key = this.verifyKeys.get(kid);
    if (!key) {
      key = importJWK(record.publicJwk, alg) as Promise<CryptoKey>;
      this.verifyKeys.set(kid, key);
      key.catch(() => this.verifyKeys.delete(kid));
    }
    return key;
  }

  /** Retires the active key of `purpose` and activates a new one; both stay published. */
  async rotate(purpose: string): Promise<SigningKeyInfo> {
    const alg = this.algorithm(purpose);
    const created = await rotateKey(this.options.pool, this.spec(purpose, alg));
    const privateKey = importPKCS8(created.privateKeyPem, alg);
    const { kid } = created.record;
    this.signKeys.set(kid, privateKey);
    const key = privateKey.then((k): ActiveSigningKey => ({ kid, purpose, alg, privateKey: k }));
    this.active.set(purpose, { at: Date.now(), key });
    await this.reload();
    this.options.logger?.info({ kid, purpose, alg, schema: this.schema }, "signing key rotated");
    return info(created.record);
  }

  /** Every published key of the schema, active first then newest first: the JWKS document. */
  async publicJwks(): Promise<{ keys: PublicJwk[] }> {
    for (const purpose of this.purposes) {
      if (![...this.records.values()].some((r) => r.purpose === purpose)) {
        await this.activeKey(purpose);
      }
    }
    if (Date.now() - this.loadedAt >= this.refreshIntervalMs) await this.reload();
    const ordered = [...this.records.values()].sort(
      (a, b) => Number(b.status === "active") - Number(a.status === "active"),
    );
    return {
      keys: ordered.map((r) => ({ ...r.publicJwk, kid: r.kid, alg: r.alg, use: "sig" as const })),
    };
  }

  /** Every key, newest first, straight from the database (administration). */
  async list(purpose?: string): Promise<SigningKeyInfo[]> {
    const all = await selectSigningKeys(this.options.pool, this.schema);
    return all.filter((r) => purpose === undefined || r.purpose === purpose).map(info);
  }

  private spec(purpose: string, alg: SigningAlgorithm): SigningKeySpec {
    return { schema: this.schema, purpose, alg, secret: this.options.secret };
  }

  private async loadActive(purpose: string, alg: SigningAlgorithm): Promise<ActiveSigningKey> {
    const { pool, secret, logger } = this.options;
    let sealed = await selectActiveKey(pool, this.schema, purpose);
    if (!sealed) {
      const created = await createKeyIfNone(pool, this.spec(purpose, alg));
      if (created) {
        const { kid } = created.record;
        logger?.info({ kid, purpose, alg, schema: this.schema }, "signing key created");
        this.signKeys.set(kid, importPKCS8(created.privateKeyPem, alg));
      }
      sealed = created?.record ?? (await selectActiveKey(pool, this.schema, purpose));
      if (!sealed) throw new Error(`no active signing key for ${purpose} in ${this.schema}`);
      await this.reload();
    }
    const { kid, privateKeyEncrypted } = sealed;
    if (sealed.alg !== alg) {
      throw new Error(
        `the active ${purpose} key ${kid} in ${this.schema} is ${sealed.alg}, but ${purpose} signs with ${alg}: rotate the key`,
      );
    }
    let privateKey = this.signKeys.get(kid);
    if (!privateKey) {
      privateKey = openPrivateKey(privateKeyEncrypted, secret, { kid, purpose, alg }).then((pem) =>
        importPKCS8(pem, alg),
      );
      this.signKeys.set(kid, privateKey);
      privateKey.catch(() => this.signKeys.delete(kid));
    }
    return { kid, purpose, alg, privateKey: await privateKey };
  }

  /** Reloads the public key records; concurrent callers share one query. */
  private reload(): Promise<void> {
    this.loading ??= selectSigningKeys(this.options.pool, this.schema)
      .then((rows) => {
        this.records = new Map(rows.map((r) => [r.kid, r]));
        this.loadedAt = Date.now();
      })
      .finally(() => {
        this.loading = undefined;
      });
    return this.loading;
  }
}

const info = (r: SigningKeyInfo): SigningKeyInfo => ({
  kid: r.kid,
  purpose: r.purpose,
  alg: r.alg,
  status: r.status,
  createdAt: r.createdAt,
  retiredAt: r.retiredAt,
});
