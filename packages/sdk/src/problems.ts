import type { components } from "./schema.js";

/** An RFC 9457 problem the API answered (the document's Problem schema). */
export type ProblemDetails = components["schemas"]["Problem"];

/** Node's util.inspect hook, by its registered symbol (no node: import, for browsers). */
const inspectSymbol = Symbol.for("nodejs.util.inspect.custom");

export class SwitchboardProblem extends Error {
  override readonly name = "SwitchboardProblem";
  readonly problem: ProblemDetails;
  /** The reply the problem came with (not enumerable: an uncaught problem prints briefly). */
  declare readonly response: Response;

  constructor(problem: ProblemDetails, response: Response) {
    super(`${problem.status} ${kindOf(problem)}: ${problem.detail}`);
    this.problem = problem;
    Object.defineProperty(this, "response", { value: response, enumerable: false });
  }
  get status(): number {
    return this.problem.status;
  }
  /** The kind, e.g. `number-unavailable`, `invalid-client`, `client-locked`. */
  get kind(): string {
    return kindOf(this.problem);
  }
  /** Seconds the reply's Retry-After asks to wait (a rate limit, a lockout, a 503). */
  get retryAfter(): number | undefined {
    return retryAfterSeconds(this.response.headers.get("retry-after"));
  }
  /** The request's id (X-Request-Id), for support. */
  get requestId(): string | undefined {
    return this.response.headers.get("x-request-id") ?? undefined;
  }

  override toString(): string {
    return `${this.name}: ${this.message}`;
  }

  [inspectSymbol](): string {
    const lines = [this.stack ?? this.toString()];
    for (const error of this.problem.errors ?? [])
      lines.push(`  at ${error.pointer}: ${error.detail}`);
    if (this.problem.instance) lines.push(`  instance: ${this.problem.instance}`);
    return lines.join("\n");
  }
}

/** The last segment of `type` (`{errors_url}/<kind>`), else the code in kebab case. */
function kindOf(problem: ProblemDetails): string {
  const type = problem.type;
  if (type && type !== "about:blank") return type.slice(type.lastIndexOf("/") + 1);
  return problem.code.toLowerCase().replaceAll("_", "-");
}

/** Seconds a Retry-After header asks for (delta-seconds or an HTTP date). */
export function retryAfterSeconds(value: string | null): number | undefined {
  if (value === null) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, (date - Date.now()) / 1000);
}

/** The problem a reply's body describes (problem+json), filled from the status if it is not one. */
export function problemFrom(body: unknown, response: Response): SwitchboardProblem {
  // A body that is not JSON (a proxy's HTML page) arrives as a string: it has no members.
  const error =
    typeof body === "object" && body !== null ? (body as Partial<ProblemDetails>) : undefined;
  return new SwitchboardProblem(
    {
      type: error?.type ?? "about:blank",
      title: error?.title ?? (response.statusText || `HTTP ${response.status}`),
      status: error?.status ?? response.status,
      code: error?.code ?? "UNKNOWN",
      detail: error?.detail ?? (response.statusText || `HTTP ${response.status}`),
      instance: error?.instance ?? "",
      ...(error ?? {}),
    },
    response,
  );
}

/** The data of an openapi-fetch result, or the problem it carries thrown as SwitchboardProblem. */
export function unwrap<D>(result: { data?: D; error?: unknown; response: Response }): D {
  if (result.error !== undefined || !result.response.ok) {
    throw problemFrom(result.error, result.response);
  }
  return result.data as D;
}
