import { ofKind, renderObjects } from "../../../test/chart/support/render.js";

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
