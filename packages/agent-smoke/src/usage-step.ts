import { wire, type usage } from "@switchboard/proto";
import type { RecordVerifier } from "./ports.js";
import type { ExpectedRecord, SmokeState } from "./smoke-state.js";
import { StepFailure, StepSkipped } from "./step-scope.js";
import type { StepSpec } from "./step-runner.js";

const label = (e: ExpectedRecord) => `${e.kind} of ${e.resourceId}`;

const matches = (record: usage.UsageRecord, e: ExpectedRecord) =>
  Object.entries(e.attributes ?? {}).every(
    ([name, value]) => (record.attributes as Record<string, unknown> | undefined)?.[name] === value,
  );

/**
 * usage.records: the ledger holds the records of what the other steps did (number.held of the
 * hold, call.placed and call.completed of the calls, message.sent, webhook.delivered), and each
 * verifies against the record-signing keys the JWKS publishes. Records arrive through the queue
 * a moment after their facts, so it polls. It checks the steps that passed and is skipped only
 * when none of them did.
 */
export function usageStep(
  state: SmokeState,
  options: { budgetMs: number; verifyRecords: RecordVerifier },
): StepSpec {
  const ledger = state.backends.usage;
  return {
    name: "usage.records",
    after: [
      "numbers.hold",
      "calls.outbound",
      "calls.inbound",
      "messages.send",
      "webhooks.delivery",
    ],
    budgetMs: options.budgetMs,
    run: async (scope) => {
      const expected = [...state.records.values()].flat();
      if (expected.length === 0) throw new StepSkipped("no step that lands a usage record passed");
      const found = new Map<ExpectedRecord, usage.UsageRecord>();
      const missing = () => expected.filter((e) => !found.has(e));
      await scope.poll(
        "the usage records",
        async () => {
          scope.waitingFor = `the usage records ${missing().map(label).join(", ")}`;
          await Promise.all(
            missing().map(async (e) => {
              const { records } = await scope.rpc(ledger, (c) => c.listUsageEvents, {
                accountId: state.accountId,
                kind: wire.usageKind.of(e.kind),
                resourceId: e.resourceId,
                limit: 50,
                cursor: "",
              });
              const record = records.find((r) => matches(r, e));
              if (record) found.set(e, record);
            }),
          );
          return missing().length;
        },
        (left) => left === 0,
      );
      const { keys } = await scope.rpc(ledger, (c) => c.listSigningKeys, {});
      const verifies = options.verifyRecords(keys);
      for (const [e, record] of found) {
        if (!(await verifies(record))) {
          throw new StepFailure(`the ${label(e)} record ${record.id} does not verify`);
        }
      }
      const kinds = [...new Set(expected.map((e) => e.kind))].join(", ");
      return `${found.size} records found and verified (${kinds})`;
    },
  };
}
