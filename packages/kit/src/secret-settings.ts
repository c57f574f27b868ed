import { z } from "zod";
import { ConfigError, env } from "./config.js";

/**
 * The development key-encryption secret: public, so refused in production (docs/architecture.md
 * rule 6) and by a gateway listening beyond loopback; the embedded mode and the mesh supervisor
 * generate a secret into the data dir instead, and re-seal what was sealed under this one.
 */
export const DEVELOPMENT_SIGNING_KEY_SECRET = "switchboard-development-signing-key-secret";

/** The variables every process that seals keys reads: NODE_ENV and SIGNING_KEY_SECRET. */
export const secretSettings = {
  NODE_ENV: env
    .nodeEnv()
    .describe("`production` refuses the development defaults of secrets and the carrier"),
  SIGNING_KEY_SECRET: z
    .string()
    .min(32, "must be at least 32 characters")
    .optional()
    .describe(
      "encrypts signing keys at rest (at least 32 characters); a development default outside production, refused when the process listens beyond loopback (HOST, <NAME>_GRPC_HOST)",
    ),
};

/** Adds "is required in production" for each named variable left unset under NODE_ENV=production. */
export function requireInProduction(
  value: Record<string, unknown> & { NODE_ENV: string },
  ctx: z.RefinementCtx,
  names: readonly string[] = ["SIGNING_KEY_SECRET"],
): void {
  if (value.NODE_ENV !== "production") return;
  for (const name of names) {
    if (!value[name]) {
      ctx.addIssue({ code: "custom", path: [name], message: "is required in production" });
    }
  }
}

/** Whether a listen address is reachable from this host only. */
export const isLoopbackHost = (host: string): boolean =>
  host === "localhost" || host === "::1" || /^127(\.\d{1,3}){3}$/.test(host);

const beyondLoopback = (hostVariable: string, host: string) =>
  `is required when ${hostVariable} (${host}) is not a loopback address: the development default is public`;

/**
 * Adds "is required when … is not a loopback address" for an unset SIGNING_KEY_SECRET: the
 * development default is public, so a process others can reach must not seal with it.
 */
export function requireUnlessLoopback(
  value: { SIGNING_KEY_SECRET?: string | undefined },
  hostVariable: string,
  host: string,
  ctx: z.RefinementCtx,
): void {
  if (value.SIGNING_KEY_SECRET || isLoopbackHost(host)) return;
  ctx.addIssue({
    code: "custom",
    path: ["SIGNING_KEY_SECRET"],
    message: beyondLoopback(hostVariable, host),
  });
}

/**
 * The same for a service's own process, whose listen host is a process setting: refused when
 * its settings read SIGNING_KEY_SECRET (it seals keys), none is set and the host is not loopback.
 */
export function refuseDevelopmentSecretBeyondLoopback(
  settings: z.ZodType,
  environment: NodeJS.ProcessEnv,
  hostVariable: string,
  host: string,
): void {
  if (environment.SIGNING_KEY_SECRET || isLoopbackHost(host)) return;
  const input = z.toJSONSchema(settings, { io: "input", unrepresentable: "any" }) as {
    properties?: object;
  };
  if (!("SIGNING_KEY_SECRET" in (input.properties ?? {}))) return;
  throw new ConfigError(
    `invalid configuration:\n  SIGNING_KEY_SECRET: ${beyondLoopback(hostVariable, host)}`,
  );
}

/** The key-encryption secret of settings (or an environment): the development one outside production. */
export function signingKeySecretOf(value: {
  NODE_ENV?: string;
  SIGNING_KEY_SECRET?: string;
}): string {
  if (value.SIGNING_KEY_SECRET) return value.SIGNING_KEY_SECRET;
  if (value.NODE_ENV === "production") {
    throw new Error("SIGNING_KEY_SECRET is required in production");
  }
  return DEVELOPMENT_SIGNING_KEY_SECRET;
}
