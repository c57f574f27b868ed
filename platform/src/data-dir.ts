import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync, existsSync } from "node:fs";
import { join, resolve } from "node:path";

export const dataDirFrom = (env: NodeJS.ProcessEnv = process.env): string =>
  resolve(env.DATA_DIR ?? ".switchboard");

export interface BootstrapCredentials {
  accountId: string;
  clientId: string;
  clientSecret: string;
  /** The operator supplied the secret (BOOTSTRAP_CLIENT_SECRET): it is never printed. */
  fromEnvironment?: boolean;
}

/** The platform's own account (BOOTSTRAP_ACCOUNT, as the gateway reads it): its credentials administer. */
export const bootstrapAccountOf = (env: NodeJS.ProcessEnv): string =>
  env.BOOTSTRAP_ACCOUNT ?? "acct_default";

/**
 * The embedded mode's bootstrap client: taken from the environment when set, otherwise
 * generated on first start and kept (mode 0600) so a restart keeps the same credentials.
 */
export function bootstrapCredentials(
  dataDir: string,
  env: NodeJS.ProcessEnv,
): BootstrapCredentials {
  const accountId = bootstrapAccountOf(env);
  if (env.BOOTSTRAP_CLIENT_ID && env.BOOTSTRAP_CLIENT_SECRET) {
    return {
      accountId,
      clientId: env.BOOTSTRAP_CLIENT_ID,
      clientSecret: env.BOOTSTRAP_CLIENT_SECRET,
      fromEnvironment: true,
    };
  }
  const file = join(dataDir, "bootstrap.json");
  if (existsSync(file))
    return { ...(JSON.parse(readFileSync(file, "utf8")) as BootstrapCredentials), accountId };
  const generated = {
    accountId,
    clientId: "cli_bootstrap",
    clientSecret: `sbcs_${randomBytes(32).toString("base64url")}`,
  };
  writeFileSync(file, JSON.stringify(generated, null, 2), { mode: 0o600 });
  return generated;
}

/** Where the running embedded platform can be reached, for `npx switchboard admin`. */
export interface RuntimeInfo {
  databaseUrl: string;
  gatewayUrl: string;
  pid: number;
}

export const runtimeFile = (dataDir: string) => join(dataDir, "runtime.json");

export function writeRuntime(dataDir: string, info: RuntimeInfo): void {
  writeFileSync(runtimeFile(dataDir), JSON.stringify(info, null, 2), { mode: 0o600 });
}

export function readRuntime(dataDir: string): RuntimeInfo | undefined {
  try {
    return JSON.parse(readFileSync(runtimeFile(dataDir), "utf8")) as RuntimeInfo;
  } catch {
    return undefined;
  }
}

export const ensureDir = (dir: string) => mkdirSync(dir, { recursive: true, mode: 0o700 });

/** The embedded mode's INTERNAL_SECRET: generated on first start and kept (mode 0600). */
export function internalSecretOf(dataDir: string): string {
  const file = join(dataDir, "internal-secret");
  if (existsSync(file)) return readFileSync(file, "utf8").trim();
  const secret = randomBytes(32).toString("base64url");
  writeFileSync(file, secret, { mode: 0o600 });
  return secret;
}
