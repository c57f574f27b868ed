import { z } from "zod";

const int = (fallback: number, min: number, max: number) =>
  z.coerce.number().int().min(min).max(max).default(fallback);

/** The SMSC connection (docs/api.md "Carriers"), read when the messaging carrier is `smpp`. */
export const smppSettings = {
  SMPP_HOST: z.string().min(1).optional().describe("smpp: the SMSC's host (required with smpp)"),
  SMPP_PORT: int(2775, 1, 65_535).describe("smpp: the SMSC's port"),
  SMPP_SYSTEM_ID: z
    .string()
    .max(15)
    .optional()
    .describe("smpp: the ESME's system_id (required with smpp)"),
  SMPP_PASSWORD: z
    .string()
    .max(8)
    .optional()
    .describe("smpp: the bind password (at most 8 characters, as SMPP 3.4 allows)"),
  SMPP_SYSTEM_TYPE: z.string().max(12).default("").describe("smpp: the bind's system_type"),
  SMPP_TLS: z
    .enum(["true", "false"])
    .default("false")
    .describe("smpp: connect over TLS (the SMSC's certificate is verified against the system CAs)"),
  SMPP_WINDOW: int(10, 1, 1_000).describe("smpp: PDUs outstanding on the bind at once"),
  SMPP_THROUGHPUT: z.coerce
    .number()
    .positive()
    .max(100_000)
    .default(50)
    .describe(
      "smpp: submit_sm per second, shared by every messaging replica (a Redis token bucket)",
    ),
  SMPP_ENQUIRE_LINK_MS: int(30_000, 100, 600_000).describe("smpp: enquire_link period"),
  SMPP_RESPONSE_TIMEOUT_MS: int(10_000, 100, 600_000).describe(
    "smpp: how long a request waits for its response before the bind is counted lost and dropped (a submit_sm unanswered by then fails its message `outcome-unknown`, never sent again)",
  ),
  SMPP_BIND_RETRY_MS: int(1_000, 10, 600_000).describe("smpp: first delay before binding again"),
  SMPP_BIND_RETRY_MAX_MS: int(60_000, 10, 3_600_000).describe(
    "smpp: longest delay between bind tries (exponential backoff with jitter)",
  ),
};

export interface SmppConfig {
  host: string;
  port: number;
  systemId: string;
  password: string;
  systemType: string;
  tls: boolean;
  window: number;
  throughput: number;
  enquireLinkMs: number;
  responseTimeoutMs: number;
  bindRetryMs: number;
  bindRetryMaxMs: number;
}

type SmppValues = z.infer<z.ZodObject<typeof smppSettings>>;

/** The SMSC connection, with every variable the `smpp` carrier cannot do without required. */
export function smppConfigOf(value: SmppValues, ctx?: z.RefinementCtx): SmppConfig {
  for (const name of ["SMPP_HOST", "SMPP_SYSTEM_ID", "SMPP_PASSWORD"] as const) {
    if (value[name] === undefined) {
      ctx?.addIssue({ code: "custom", path: [name], message: "is required with the smpp carrier" });
    }
  }
  return {
    host: value.SMPP_HOST ?? "",
    port: value.SMPP_PORT,
    systemId: value.SMPP_SYSTEM_ID ?? "",
    password: value.SMPP_PASSWORD ?? "",
    systemType: value.SMPP_SYSTEM_TYPE,
    tls: value.SMPP_TLS === "true",
    window: value.SMPP_WINDOW,
    throughput: value.SMPP_THROUGHPUT,
    enquireLinkMs: value.SMPP_ENQUIRE_LINK_MS,
    responseTimeoutMs: value.SMPP_RESPONSE_TIMEOUT_MS,
    bindRetryMs: value.SMPP_BIND_RETRY_MS,
    bindRetryMaxMs: value.SMPP_BIND_RETRY_MAX_MS,
  };
}
