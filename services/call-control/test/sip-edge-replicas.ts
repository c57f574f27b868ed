import { testDatabaseKinds } from "@switchboard/kit/testing";
import {
  startSipEdge,
  type SipEdge,
  type SipEdgeOptions,
} from "@switchboard/test-support/sip-edge";
import { freeSipPort } from "@switchboard/test-support/sip-peers";
import { ofKind, renderObjects } from "../../../test/chart/support/render.js";
import type { RunningCallControl } from "../src/server.js";
import { startServiceHarness, type ServiceHarness } from "./harness.js";

const host = "127.0.0.1";
const postgres = testDatabaseKinds.find((kind) => kind.name === "postgres")!;

/** The edge's kamailio.cfg exactly as the chart ships it (sipEdge.enabled). */
export function chartEdgeConfig(): string {
  const objects = renderObjects({ set: ["sip.enabled=true", "sipEdge.enabled=true"] });
  const configMap = ofKind<{ data?: Record<string, string> }>(objects, "ConfigMap").find(
    (object) => object.metadata.name === "switchboard-sip-edge",
  );
  const config = configMap?.data?.["kamailio.cfg"];
  if (!config) throw new Error("the chart rendered no kamailio.cfg for the SIP edge");
  return config;
}

export interface EdgeWithReplicas {
  /** Replica A (the harness's own process) and the database. */
  h: ServiceHarness;
  b: RunningCallControl;
  edge: SipEdge;
  sipPortA: number;
  sipPortB: number;
  /** The edge's phones' port (UDP and TCP) and its port facing call-control. */
  phonePort: number;
  corePort: number;
}

/**
 * Two call-control replicas on one database (A and B, SIP on loopback, the edge's Path allowed)
 * behind the chart's SIP edge (real kamailio with `chartEdgeConfig`), whose dispatcher lists
 * both and probes them every second. `env`: the replicas' other settings (SIP_TRUNK_URI…);
 * `edge`: the edge's other options (flood control, TLS).
 */
export async function startEdgeWithReplicas(
  env: Record<string, string>,
  edge: Omit<SipEdgeOptions, "config" | "phonePort" | "corePort" | "replicas"> = {},
): Promise<EdgeWithReplicas> {
  const [sipPortA, sipPortB, phonePort, corePort] = [
    await freeSipPort(),
    await freeSipPort(),
    await freeSipPort(),
    await freeSipPort(),
  ];
  const common = {
    VOICE_CARRIER: "sip",
    SIP_DOMAIN: host,
    SIP_DIGEST_ALGORITHMS: "MD5",
    SIP_PATH_ALLOW: host,
    ...env,
  };
  const h = await startServiceHarness(postgres, { ...common, SIP_LISTEN: `${host}:${sipPortA}` });
  try {
    const b = await h.startReplica({ SIP_LISTEN: `${host}:${sipPortB}` });
    const started = await startSipEdge({
      probeSeconds: 1,
      ...edge,
      config: chartEdgeConfig(),
      phonePort,
      corePort,
      replicas: [
        { host, port: sipPortA },
        { host, port: sipPortB },
      ],
    });
    return { h, b, edge: started, sipPortA, sipPortB, phonePort, corePort };
  } catch (error) {
    await h.stop();
    throw error;
  }
}
