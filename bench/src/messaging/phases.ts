import os from "node:os";
import { roundTripsPerCall, type RoundTrips } from "../call-control/pg-round-trips.js";
import { verify } from "./checks.js";
import { firstAcceptToLastDelivery, relayed, waitForDrain, type DrainSample } from "./drain.js";
import { load, type LoadInput } from "./load.js";
import { atRest, commitCounter, cpuNow, spent } from "./measures.js";
import type { Carrier, Network } from "./networks.js";
import type { Observer } from "./observer.js";
import type { CarrierRow, ServiceAlone } from "./report.js";
import { settings } from "./settings.js";
import { round, summarize } from "./stats.js";

/** What every load of a carrier's run shares (its count and label apart). */
export type LoadCommon = Omit<LoadInput, "count" | "label">;

/**
 * A carrier's phases, one after the other: the warm-up, the messaging service alone (sandbox
 * run only), the platform at rest, then the measured run and its whole life until the last
 * delivery; the row of the report. `roundTrips` reads the platform's statements so far.
 */
export async function phases(
  carrier: Carrier,
  network: Network,
  db: Observer,
  common: LoadCommon,
  roundTrips: () => RoundTrips,
): Promise<CarrierRow> {
  const ids: string[] = [];
  console.log(`warm-up: ${settings.warmup} sends`);
  const warm = await load({ ...common, count: settings.warmup, label: "warm" });
  ids.push(...warm.ids);
  await waitForDrain(db, ids.length, () => undefined);
  let serviceAlone: ServiceAlone | undefined;
  if (carrier === "sandbox" && settings.serviceRequests > 0) {
    const direct = await runServiceAlone(common);
    serviceAlone = direct.summary;
    ids.push(...direct.ids);
    await waitForDrain(db, ids.length, () => undefined);
  }
  const idle = await atRest(db, network);

  console.log(`measuring: ${settings.requests} sends, ${settings.concurrency} in flight`);
  const loadavgBefore = os.loadavg()[0]!;
  const commits = await commitCounter(db, idle);
  const start = cpuNow(network);
  const statementsAtStart = roundTrips();
  const measured = await load({ ...common, count: settings.requests, label: "run" });
  const accepting = cpuNow(network);
  const loadavgAccepting = os.loadavg()[0]!;
  const accepted = measured.ids.length;
  ids.push(...measured.ids);
  const latency = summarize(measured.latencies);
  const acceptedPerSecond = round(accepted / (measured.elapsedMs / 1000));
  console.log(
    `accepted ${accepted}/${settings.requests} in ${round(measured.elapsedMs)} ms: ${acceptedPerSecond}/s, p50 ${latency.p50} ms, p99 ${latency.p99} ms`,
  );

  const timeline: DrainSample[] = [];
  const drain = await waitForDrain(db, ids.length, (sample) => timeline.push(sample));
  const end = cpuNow(network);
  await relayed(db);
  const statements = roundTripsPerCall(statementsAtStart, roundTrips(), accepted);
  const committed = await commits.since(end.at);
  const lifeMs = await firstAcceptToLastDelivery(db, measured.ids);
  const checks = await verify(db, ids, network);
  const accept = spent(start, accepting, measured.generatorCpuMs);
  const delivery = spent(accepting, end);
  const whole = spent(start, end, measured.generatorCpuMs);
  const perMessage = (ms: number) => Math.round((ms / Math.max(1, accepted)) * 1000) / 1000;
  const paceCapacity = settings.senders * settings.senderRate;
  const row: CarrierRow = {
    send: {
      requests: settings.requests,
      statuses: measured.statuses,
      accepted,
      elapsed_ms: round(measured.elapsedMs),
      accepted_per_second: acceptedPerSecond,
      latency_ms: latency,
      goal: { accepted_per_second: 1000, p99_ms: 50 },
      goal_met: acceptedPerSecond >= 1000 && latency.p99 < 50,
    },
    lifecycle: {
      drained: drain.drained,
      first_accept_to_last_delivery_ms: lifeMs,
      delivered_per_second: round(accepted / (lifeMs / 1000)),
      drain_ms_after_last_accept: end.at - accepting.at,
      pace_capacity_per_second: paceCapacity,
      expected_ms_at_pace: Math.round((accepted / paceCapacity) * 1000),
      timeline,
    },
    cpu: {
      window_ms: whole.ms,
      ms_per_message: perMessage(whole.served),
      accepting_ms_per_message: perMessage(accept.served),
      delivering_ms_per_message: perMessage(delivery.served),
      platform_process_ms_per_message: perMessage(whole.platform),
      rest_ms_per_message: perMessage(whole.rest),
      left_out: {
        load_generator_ms: round(whole.generatorMs),
        network_ms: round(whole.network),
        network_ms_per_message: perMessage(whole.network),
      },
      platform_process_cores_while_accepting: round(accept.platform / accept.ms),
      at_rest_share_ms_per_message: idle && perMessage((idle.cpu_ms_per_second * whole.ms) / 1000),
      idle,
    },
    postgres: {
      ...committed,
      commits_per_message: round(committed.commits / Math.max(1, accepted)),
      // Statements the platform sent (each a round trip) from the load's start until the last
      // delivery and every event relayed, per accepted message, and by kind.
      round_trips_per_message: statements.per_call,
      round_trips_by_kind: statements.by_kind.map((k) => ({
        kind: k.kind,
        per_message: k.per_call,
      })),
      at_rest_share_per_message:
        idle && round((idle.commits_per_second * whole.ms) / 1000 / Math.max(1, accepted)),
    },
    checks,
    load_average_1m: { before: round(loadavgBefore), after_accepting: round(loadavgAccepting) },
  };
  console.log(
    `${carrier}: delivered ${accepted} in ${lifeMs} ms from the first accept (${row.lifecycle.delivered_per_second}/s), ${row.cpu.ms_per_message} cpu-ms, ${row.postgres.commits_per_message} commits and ${row.postgres.round_trips_per_message} PostgreSQL round trips per message; lost ${checks.lost}, duplicates ${checks.duplicates}`,
  );
  return serviceAlone ? { ...row, service_alone: serviceAlone } : row;
}

/** The messaging service alone: the same sends over gRPC, without the gateway's policies. */
async function runServiceAlone(
  common: LoadCommon,
): Promise<{ summary: ServiceAlone; ids: string[] }> {
  console.log(`service alone: ${settings.serviceRequests} sends over gRPC`);
  const cpuBefore = process.cpuUsage();
  const direct = await load({
    ...common,
    mode: "service",
    count: settings.serviceRequests,
    label: "svc",
  });
  const cpu = process.cpuUsage(cpuBefore);
  const latency = summarize(direct.latencies);
  const summary: ServiceAlone = {
    requests: settings.serviceRequests,
    statuses: direct.statuses,
    accepted: direct.ids.length,
    elapsed_ms: round(direct.elapsedMs),
    accepted_per_second: round(direct.ids.length / (direct.elapsedMs / 1000)),
    latency_ms: latency,
    process_cpu_ms_per_accepted: round(
      (cpu.user + cpu.system) / 1000 / Math.max(1, direct.ids.length),
    ),
  };
  console.log(
    `service alone: ${summary.accepted_per_second}/s, p50 ${latency.p50} ms, p99 ${latency.p99} ms`,
  );
  return { summary, ids: direct.ids };
}
