/**
 * The test SMSC of `npm run bench:messages`, in a process of its own: the SMSC is the network,
 * so the benchmark reads its CPU time (/proc/<pid>/stat) to leave it out of the platform's.
 * Forked with its options as JSON in argv[2]; on IPC it sends `{ host, port }` once listening,
 * answers "records" with what it accepted and receipted, and exits on "stop".
 */
import { startTestSmsc } from "@switchboard/test-smsc";

const smsc = await startTestSmsc({ ...JSON.parse(process.argv[2]), port: 0 });
process.send({ host: smsc.host, port: smsc.port });

const countBy = (list, key) => {
  const counts = {};
  for (const item of list) counts[item[key]] = (counts[item[key]] ?? 0) + 1;
  return counts;
};

process.on("message", async (command) => {
  if (command === "records") {
    process.send({
      submits: smsc.submits.map((s) => ({
        id: s.messageId,
        from: s.source,
        to: s.destination,
        text: s.text,
        at: s.at,
      })),
      throttled: smsc.throttled.length,
      refused: smsc.refused.length,
      receiptAttempts: countBy(smsc.receipts, "result"),
    });
  } else if (command === "stop") {
    await smsc.stop();
    process.exit(0);
  }
});
