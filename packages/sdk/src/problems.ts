import type { components } from "./schema.js";

/** An RFC 9457 problem the API answered (the document's Problem schema). */
export type ProblemDetails = components["schemas"]["Problem"];

export class SwitchboardProblem extends Error {
  override readonly name = "SwitchboardProblem";
  constructor(
    readonly problem: ProblemDetails,
    readonly response: Response,
  ) {
    super(`${problem.status} ${problem.code}: ${problem.detail}`);
  }
  get status(): number {
    return this.problem.status;
  }
  /** The kind, e.g. `number-unavailable` (the last segment of `type`). */
  get kind(): string {
    return this.problem.type.slice(this.problem.type.lastIndexOf("/") + 1);
  }
}

/** The data of an openapi-fetch result, or the problem it carries thrown as SwitchboardProblem. */
export function unwrap<D>(result: { data?: D; error?: unknown; response: Response }): D {
  if (result.error !== undefined || !result.response.ok) {
    const error = result.error as Partial<ProblemDetails> | undefined;
    throw new SwitchboardProblem(
      {
        type: error?.type ?? "about:blank",
        title: error?.title ?? result.response.statusText,
        status: error?.status ?? result.response.status,
        code: error?.code ?? "UNKNOWN",
        detail: error?.detail ?? result.response.statusText,
        instance: error?.instance ?? "",
        ...(error ?? {}),
      },
      result.response,
    );
  }
  return result.data as D;
}
