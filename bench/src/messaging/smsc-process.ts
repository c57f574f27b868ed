import { startTestSmsc, type TestSmscOptions } from "@switchboard/test-smsc";

/**
 * The test SMSC of `npm run bench:messages`, in a process of its own: the SMSC is the network,
 * so the benchmark reads its CPU time (/proc/<pid>/stat) to leave it out of the platform's.
 * Forked with its options as JSON in argv[2]; on IPC it sends `{ host, port }` once listening,
 * answers "records" with what it accepted and receipted (SmscRecords), and exits on "stop".
 */
export interface SmscRecords {
  submits: { id: string; from: string; to: string; text: string; at: number }[];
  throttled: number;
  refused: number;
  /** Receipt attempts by result. */
  receiptAttempts: Record<string, number>;
}

const options = JSON.parse(process.argv[2] ?? "{}") as TestSmscOptions;
const smsc = await startTestSmsc({ ...options, port: 0 });
process.send?.({ host: smsc.host, port: smsc.port });

const countBy = <T>(list: readonly T[], key: (item: T) => string) => {
  const counts: Record<string, number> = {};
  for (const item of list) counts[key(item)] = (counts[key(item)] ?? 0) + 1;
  return counts;
};

process.on("message", (command) => {
  if (command === "records") {
    const records: SmscRecords = {
      submits: smsc.submits.map((s) => ({
        id: s.messageId,
        from: s.source,
        to: s.destination,
        text: s.text,
        at: s.at,
      })),
      throttled: smsc.throttled.length,
      refused: smsc.refused.length,
      receiptAttempts: countBy(smsc.receipts, (r) => r.result),
    };
    process.send?.(records);
  } else if (command === "stop") {
    void smsc.stop().then(() => process.exit(0));
  }
});
