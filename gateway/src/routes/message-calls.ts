import type { HandlerContext } from "./route-spec.js";

export type MessagingCallContext = HandlerContext<unknown, unknown, unknown>;

/** Request options every messaging call forwards: deadline, request id, Idempotency-Key. */
export const messagingOptions = (deadlineMs: number) => (ctx: MessagingCallContext) => ({
  deadlineMs,
  requestId: ctx.requestId,
  idempotencyKey: ctx.idempotencyKey,
  principal: ctx.principal,
});

/** The caller's account (every messaging route needs a principal). */
export const accountOf = (ctx: MessagingCallContext): string => ctx.principal?.accountId ?? "";
