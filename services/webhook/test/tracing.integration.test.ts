import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { setTracePropagator, type TraceCarrier, type TracedJobInfo } from "@switchboard/kit";
import type { webhook } from "@switchboard/proto";
import { requireTestRedis } from "@switchboard/kit/events/testing";
import { account, startHarness, waitFor, type Harness } from "./support/harness.js";
import { startReceiver, type Receiver } from "@switchboard/test-support/fixtures/webhook-receiver";

// npm test needs Redis (README): a Redis that is down fails this suite, never skips it.
await requireTestRedis();

/**
 * Trace context across the queue: the event's carrier (recorded with the state change) rides
 * the fan-out job and every delivery job; the delivery runs linked to it (fan-out: links, not
 * children). A recording propagator stands in for OpenTelemetry (the kit's trace seam).
 */
describe("trace context from the event to its deliveries", () => {
  const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
  const runs: { carrier: TraceCarrier | undefined; job: TracedJobInfo }[] = [];
  let h: Harness;
  let receiver: Receiver;
  beforeAll(async () => {
    setTracePropagator({
      inject: (carrier) => {
        carrier.traceparent = traceparent;
      },
      run: (carrier, job, work) => {
        runs.push({ carrier, job });
        return work();
      },
    });
    h = await startHarness();
    receiver = await startReceiver();
  });
  afterAll(async () => {
    setTracePropagator(null);
    await receiver?.close();
    await h?.stop();
  });

  it("each delivery job carries the request's trace as a link", async () => {
    const subs = (await Promise.all(
      [["number.*"], ["*"]].map((events) =>
        h.call(h.client.createSubscription, { accountId: account, url: receiver.url, events }),
      ),
    )) as webhook.CreateSubscriptionResponse[];
    const id = await h.emit({ type: "number.held" });
    await waitFor(
      () => receiver.received.filter((r) => r.headers["webhook-id"] === id).length === 2,
      10_000,
      "two deliveries",
    );
    const deliveries = runs.filter(
      (r) => r.job.queue === "webhook.deliveries" && r.job.jobName === "number.held",
    );
    expect(deliveries).toHaveLength(2);
    for (const run of deliveries) {
      expect(run.carrier).toEqual({ traceparent });
      expect(run.job.link).toBe(true);
    }
    const fanOut = runs.find((r) => r.job.queue === "events.webhook" && r.job.jobId === id);
    expect(fanOut).toMatchObject({ carrier: { traceparent }, job: { link: true } });
    expect(subs).toHaveLength(2);
    // Outgoing requests carry no internal trace headers.
    expect(receiver.received.every((r) => r.headers.traceparent === undefined)).toBe(true);
  });
});
