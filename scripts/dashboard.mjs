#!/usr/bin/env node
// The Grafana dashboard, built with the Grafana Foundation SDK: `node scripts/dashboard.mjs`
// writes charts/switchboard/files/dashboard.json (shipped by the chart as a ConfigMap the Grafana
// sidecar loads). test/monitoring checks the file is what this builds and that every query parses
// in a real Prometheus and reads only series the processes export. Queries select
// `job="switchboard"`, as the alerts do (charts/switchboard/files/prometheus-rules.yaml).
import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  DashboardBuilder,
  DatasourceVariableBuilder,
  RowBuilder,
} from "@grafana/grafana-foundation-sdk/dashboard";
import { DataqueryBuilder } from "@grafana/grafana-foundation-sdk/prometheus";
import { PanelBuilder as StatBuilder } from "@grafana/grafana-foundation-sdk/stat";
import { PanelBuilder as TimeseriesBuilder } from "@grafana/grafana-foundation-sdk/timeseries";

const datasource = { type: "prometheus", uid: "${datasource}" };
const query = (expr, legend) =>
  new DataqueryBuilder()
    .expr(expr)
    .legendFormat(legend ?? "__auto")
    .datasource(datasource);
const series = (title, unit, targets, width = 12) => {
  const panel = new TimeseriesBuilder()
    .title(title)
    .unit(unit)
    .datasource(datasource)
    .span(width)
    .height(8);
  for (const [expr, legend] of targets) panel.withTarget(query(expr, legend));
  return panel;
};

export function buildDashboard() {
  return new DashboardBuilder("Switchboard")
    .uid("switchboard-overview")
    .tags(["switchboard"])
    .description(
      "Requests, errors and latency by route, gRPC by method, queues, webhooks, calls and messages.",
    )
    .refresh("30s")
    .time({ from: "now-3h", to: "now" })
    .timezone("browser")
    .withVariable(
      new DatasourceVariableBuilder("datasource").label("Prometheus").type("prometheus"),
    )
    .withRow(new RowBuilder("Gateway"))
    .withPanel(
      series("Requests by route", "reqps", [
        [
          'sum by (route) (rate(http_server_requests_total{job="switchboard"}[$__rate_interval]))',
          "{{route}}",
        ],
      ]),
    )
    .withPanel(
      series("Errors by route", "reqps", [
        [
          'sum by (route) (rate(http_server_requests_total{job="switchboard",status=~"5.."}[$__rate_interval]))',
          "5xx {{route}}",
        ],
        [
          'sum by (route) (rate(http_server_requests_total{job="switchboard",status=~"4.."}[$__rate_interval]))',
          "4xx {{route}}",
        ],
      ]),
    )
    .withPanel(
      series("Latency p99 by route", "s", [
        [
          'histogram_quantile(0.99, sum by (route, le) (rate(http_server_request_duration_seconds_bucket{job="switchboard"}[$__rate_interval])))',
          "{{route}}",
        ],
      ]),
    )
    .withPanel(
      series("Availability and latency SLIs", "percentunit", [
        ["1 - switchboard:gateway_errors:ratio_rate5m", "not 5xx (SLO 99.9 %)"],
        ["1 - switchboard:gateway_slow:ratio_rate5m", "within 0.5 s (SLO 99 %)"],
      ]),
    )
    .withRow(new RowBuilder("Services"))
    .withPanel(
      series("gRPC calls by method", "reqps", [
        [
          'sum by (service, method, code) (rate(grpc_server_handled_total{job="switchboard"}[$__rate_interval]))',
          "{{service}}/{{method}} {{code}}",
        ],
      ]),
    )
    .withPanel(
      series("gRPC latency p99 by method", "s", [
        [
          'histogram_quantile(0.99, sum by (service, method, le) (rate(grpc_server_handling_seconds_bucket{job="switchboard"}[$__rate_interval])))',
          "{{service}}/{{method}}",
        ],
      ]),
    )
    .withPanel(
      series("Components up", "short", [['up{job="switchboard"}', "{{component}} {{instance}}"]]),
    )
    .withPanel(
      series("Pool connections waiting", "short", [
        ['max by (pool) (db_pool_connections{job="switchboard",state="waiting"})', "{{pool}}"],
      ]),
    )
    .withRow(new RowBuilder("Queues and webhooks"))
    .withPanel(
      series("Queue depth", "short", [
        [
          'sum by (queue, state) (max by (queue, state, instance) (queue_jobs{job="switchboard"}))',
          "{{queue}} {{state}}",
        ],
      ]),
    )
    .withPanel(
      series("Oldest waiting job", "s", [
        ['max by (queue) (queue_oldest_waiting_seconds{job="switchboard"})', "{{queue}}"],
      ]),
    )
    .withPanel(
      series("Webhook attempts by outcome", "reqps", [
        [
          'sum by (outcome) (rate(webhook_deliveries_total{job="switchboard"}[$__rate_interval]))',
          "{{outcome}}",
        ],
      ]),
    )
    .withPanel(
      series("Usage records not handed off", "short", [
        ['sum by (instance) (usage_records_unhanded{job="switchboard"})', "{{instance}}"],
      ]),
    )
    .withRow(new RowBuilder("Calls and messages"))
    .withPanel(
      new StatBuilder()
        .title("Calls live")
        .datasource(datasource)
        .span(6)
        .height(8)
        .withTarget(query('sum(calls_live{job="switchboard"})', "live")),
    )
    .withPanel(
      series(
        "Messages by status",
        "reqps",
        [
          [
            'sum by (status) (rate(messages_status_changes_total{job="switchboard"}[$__rate_interval]))',
            "{{status}}",
          ],
        ],
        18,
      ),
    )
    .build();
}

export const dashboardFile = join(
  dirname(fileURLToPath(import.meta.url)),
  "..",
  "charts",
  "switchboard",
  "files",
  "dashboard.json",
);
export const renderDashboard = () => `${JSON.stringify(buildDashboard(), null, 2)}\n`;

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(dashboardFile, renderDashboard());
  process.stdout.write(`wrote ${dashboardFile}\n`);
}
