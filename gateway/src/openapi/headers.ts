export const rateLimitHeaderNames = [
  "X-RateLimit-Limit",
  "X-RateLimit-Remaining",
  "X-RateLimit-Reset",
  "X-RateLimit-Resource",
  "RateLimit-Policy",
  "RateLimit",
] as const;

interface HeaderDoc {
  description: string;
  /** Present on every response that lists the header (the contract tests check it). */
  required: boolean;
  schema: Record<string, unknown>;
}

const text = { type: "string" };
const seconds = { type: "integer", minimum: 0 };

/** `components.headers`: one definition per response header of the API. */
export const headerDocs: Record<string, HeaderDoc> = {
  "X-Request-Id": {
    description: "The request id (also in the problem's instance)",
    required: true,
    schema: text,
  },
  "API-Version": {
    description: "The API version that served the request (v1)",
    required: true,
    schema: text,
  },
  "X-RateLimit-Limit": {
    description: "Capacity of the token bucket this request was counted against",
    required: true,
    schema: { type: "integer", minimum: 1 },
  },
  "X-RateLimit-Remaining": {
    description: "Whole tokens left in the bucket",
    required: true,
    schema: seconds,
  },
  "X-RateLimit-Reset": {
    description: "Seconds until the bucket is full again",
    required: true,
    schema: seconds,
  },
  "X-RateLimit-Resource": {
    description: "The permission the request was counted against, or `public` (per client address)",
    required: true,
    schema: text,
  },
  "RateLimit-Policy": {
    description: 'IETF RateLimit-Policy: `"<resource>";q=<capacity>;w=<seconds to fill>`',
    required: true,
    schema: text,
  },
  RateLimit: {
    description: 'IETF RateLimit: `"<resource>";r=<remaining>;t=<seconds until full>`',
    required: true,
    schema: text,
  },
  "Retry-After": {
    description: "Seconds to wait before retrying",
    required: true,
    schema: seconds,
  },
  "WWW-Authenticate": {
    description: "The RFC 6750 (or Basic) challenge",
    required: true,
    schema: text,
  },
  Location: { description: "The created resource", required: true, schema: text },
  Link: {
    description: 'RFC 8288 link to the next page (rel="next"), when there is one',
    required: false,
    schema: text,
  },
  "Cache-Control": {
    description: "Caching rules (no-store for tokens)",
    required: true,
    schema: text,
  },
  "Idempotent-Replayed": {
    description:
      "`true` when the response is the stored response of an earlier request with this Idempotency-Key",
    required: false,
    schema: { type: "string", enum: ["true"] },
  },
};

/** Headers present on every reply of the given status. */
export function commonHeaders(status: number): string[] {
  const headers: string[] = ["X-Request-Id", "API-Version", ...rateLimitHeaderNames];
  if (status === 401 || status === 403) headers.push("WWW-Authenticate");
  if (status === 429 || status === 503) headers.push("Retry-After");
  return headers;
}

/**
 * A response's `headers`: references to the components, except names listed in `optional`,
 * which are inlined as not required (e.g. Retry-After only on some 409 kinds).
 */
export function responseHeader(names: string[], optional: string[] = []) {
  return Object.fromEntries(
    [...new Set([...names, ...optional])].map((name) => {
      const doc = headerDocs[name];
      if (!doc) throw new Error(`undocumented response header ${name}`);
      const inline = optional.includes(name) && !names.includes(name) && doc.required;
      return [
        name,
        inline ? { ...doc, required: false } : { $ref: `#/components/headers/${name}` },
      ];
    }),
  );
}

/** The header components a document references (unused ones would be lint warnings). */
export function headerComponents(document: unknown): Record<string, HeaderDoc> {
  const used = new Set(
    [...JSON.stringify(document).matchAll(/"#\/components\/headers\/([^"]+)"/g)].map(
      (m) => m[1] as string,
    ),
  );
  return Object.fromEntries(Object.entries(headerDocs).filter(([name]) => used.has(name)));
}
