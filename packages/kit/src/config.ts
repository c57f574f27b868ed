import { z } from "zod";

/**
 * Parses the environment against a zod schema once at boot. On failure it throws one error
 * that names every offending variable, so the process fails fast with a clear message.
 */
export function loadConfig<S extends z.ZodType>(
  schema: S,
  env: NodeJS.ProcessEnv = process.env,
): z.infer<S> {
  const parsed = schema.safeParse(env);
  if (parsed.success) return parsed.data;
  const lines = parsed.error.issues.map(
    (issue) => `  ${issue.path.join(".") || "(environment)"}: ${issue.message}`,
  );
  throw new ConfigError(`invalid configuration:\n${lines.join("\n")}`);
}

export class ConfigError extends Error {
  override readonly name = "ConfigError";
}

/** Common field helpers for environment schemas. */
export const env = {
  port: (fallback: number) => z.coerce.number().int().min(0).max(65535).default(fallback),
  url: () => z.string().url(),
  optionalUrl: () =>
    z
      .string()
      .url()
      .optional()
      .or(z.literal("").transform(() => undefined)),
  bool: (fallback: boolean) =>
    z
      .enum(["true", "false", "1", "0", ""])
      .default(fallback ? "true" : "false")
      .transform((v) => v === "true" || v === "1"),
  list: () =>
    z
      .string()
      .default("")
      .transform((v) =>
        v
          .split(",")
          .map((s) => s.trim())
          .filter(Boolean),
      ),
  nodeEnv: () => z.enum(["development", "test", "production"]).default("development"),
};

/**
 * The platform's public base URL (no trailing slash): PUBLIC_URL, or else the gateway's own
 * address on this machine (its PORT).
 */
export const publicBaseUrl = (publicUrl: string | undefined, gatewayPort: number): string =>
  (publicUrl ?? `http://localhost:${gatewayPort}`).replace(/\/$/, "");

/** DATABASE_URL as every process that needs PostgreSQL reads it (required, a postgres:// URL). */
export const databaseUrlSetting = z
  .string({ error: "DATABASE_URL is required (a postgres:// URL)" })
  .min(1, "DATABASE_URL is required (a postgres:// URL)");
