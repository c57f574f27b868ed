import type { AnswerCodec, KeyedOperation } from "@switchboard/kit";

/** A state change of the inventory run once per Idempotency-Key (kit runOnce). */
export const keyed = <T>(
  operation: string,
  request: { accountId: string },
  key: string | undefined,
  codec: AnswerCodec<T>,
): KeyedOperation<T> => ({
  schema: "inventory",
  operation,
  accountId: request.accountId,
  key,
  request,
  codec,
});
