import { Gauge } from "prom-client";
import { metricsRegistry } from "./registry.js";

const backlogs = new Set<() => number>();

new Gauge({
  name: "usage_records_unhanded",
  help: "Usage records this gateway committed to its record outbox and has not yet handed to the usage ledger",
  registers: [metricsRegistry],
  collect() {
    let total = 0;
    for (const read of backlogs) total += read();
    this.set(total);
  },
});

/** Reports a record relay's backlog in `usage_records_unhanded`; call the result to stop. */
export function trackRecordBacklog(read: () => number): () => void {
  backlogs.add(read);
  return () => void backlogs.delete(read);
}
