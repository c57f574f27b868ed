import { randomBytes } from "node:crypto";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { IDeployment } from "kubernetes-models/apps/v1";
import type { IJob } from "kubernetes-models/batch/v1";
import {
  clientCredentialsToken,
  createRealTestDatabase,
  type TestDatabase,
} from "@switchboard/kit/testing";
import { eventually } from "@switchboard/test-support/waiting";
import { runInstallCommands, shellBlocks } from "../chart/support/install-blocks.js";
import { ofKind, parseObjects } from "../chart/support/render.js";
import { freePort, issueGrpcTlsFiles } from "../chart/support/service-process.js";
import { renderChart, chartDir } from "../../scripts/helm-render.mjs";
import { buildImage } from "./support/build-image.js";
import {
  createPodmanSecret,
  forward,
  playablePods,
  podAddress,
  podman,
  type PlayedPod,
  waitReady,
} from "./support/kube-play.js";

/**
 * The rendered chart run for real: the image scripts/build-image.sh builds, `helm template` of
 * the chart, its pods under `podman kube play` on a podman network (one pod per component, named
 * after its Service), the Secrets made with the keys of the chart README's own install commands,
 * and the host probing each pod's readiness as the rendered probe says (podman 4.3 runs no
 * readiness probe). Default values, and ci/production-values.yaml (gRPC mutual TLS on).
 */
const hasPodman = spawnSync("podman", ["--version"], { stdio: "ignore" }).status === 0;
const inCi = Boolean(process.env.CI) && process.env.CI !== "false";
const image = "localhost/switchboard:kube-play-test";

const valueSets = [
  { name: "values.yaml", files: [] as string[] },
  { name: "ci/production-values.yaml", files: [join(chartDir, "ci", "production-values.yaml")] },
];

/**
 * A request on a connection of its own, as the kubelet probes: pod addresses are reused by the
 * next network, where a kept-alive connection to the last pod with that address would be reset.
 */
const fetchOnce = (url: string, init: RequestInit = {}) =>
  fetch(url, {
    ...init,
    headers: { ...(init.headers as Record<string, string>), connection: "close" },
  });

/** The keys the chart README's install block creates (switchboard-keys), by key. */
function documentedKeys(): Record<string, string> {
  const readme = readFileSync(join(chartDir, "README.md"), "utf8");
  const { secrets } = runInstallCommands(shellBlocks(readme)[0]!);
  const keys = secrets.find((secret) => secret.metadata!.name === "switchboard-keys")!;
  return Object.fromEntries(
    Object.entries(keys.data!).map(([key, value]) => [
      key,
      Buffer.from(value, "base64").toString(),
    ]),
  );
}

describe.skipIf(!hasPodman && !inCi)("the chart's pods under podman kube play", () => {
  beforeAll(async () => {
    expect(hasPodman, "podman is required in CI (.ci/run installs it)").toBe(true);
    await buildImage(image);
  }, 1_800_000);

  describe.each(valueSets)("rendered with $name", ({ files }) => {
    const network = `sbkube-${randomBytes(3).toString("hex")}`;
    const closers: (() => Promise<unknown>)[] = [];
    let database: TestDatabase;
    let pods: PlayedPod[] = [];
    let objects: ReturnType<typeof parseObjects> = [];
    let gatewayUrl = "";
    let databaseUrl = "";
    const bootstrap = { id: "cli_kube", secret: `sbcs_${randomBytes(24).toString("base64url")}` };

    beforeAll(async () => {
      database = await createRealTestDatabase("kubeplay");
      closers.push(() => database.drop());
      await podman("network", "create", network);
      closers.push(() => podman("network", "rm", "-f", network));
      const gateway = await podman(
        "network",
        "inspect",
        network,
        "--format",
        "{{range .Subnets}}{{.Gateway}}{{end}}",
      );
      const [postgresPort, redisPort] = [await freePort(), await freePort()];
      const url = new URL(database.url);
      url.host = `${gateway}:${postgresPort}`;
      databaseUrl = url.toString();
      const prefix = `sbkube${randomBytes(3).toString("hex")}`;
      objects = parseObjects(
        renderChart({
          valuesFiles: files,
          set: [
            `image.repository=localhost/switchboard`,
            `image.tag=kube-play-test`,
            "image.digest=",
            "ingress.enabled=false",
            "inventorySeed.enabled=true",
            `env.REDIS_QUEUE_PREFIX=${prefix}`,
          ],
        }),
      );
      // Every Secret the pods refer to, filled as the install docs say (the keys from their
      // own commands), PostgreSQL and Redis being this machine's, reached through the network.
      const keys = documentedKeys();
      const byVariable: Record<string, string> = {
        DATABASE_URL: databaseUrl,
        REDIS_URL: `redis://${gateway}:${redisPort}`,
        SIGNING_KEY_SECRET: keys["signing-key-secret"]!,
        INTERNAL_SECRET: keys["internal-secret"]!,
        BOOTSTRAP_CLIENT_ID: bootstrap.id,
        BOOTSTRAP_CLIENT_SECRET: bootstrap.secret,
      };
      const secrets = new Map<string, Record<string, string>>();
      for (const deployment of ofKind<IDeployment>(objects, "Deployment")) {
        for (const variable of deployment.spec!.template.spec!.containers[0]!.env ?? []) {
          const ref = variable.valueFrom?.secretKeyRef;
          if (!ref || byVariable[variable.name] === undefined) continue;
          const values = secrets.get(ref.name!) ?? {};
          values[ref.key] = byVariable[variable.name]!;
          secrets.set(ref.name!, values);
        }
      }
      for (const [name, values] of secrets) {
        await createPodmanSecret(name, values);
        closers.push(() => podman("secret", "rm", name).catch(() => undefined));
      }
      const names = ofKind<IDeployment>(objects, "Deployment").map((d) => d.metadata.name);
      const tls = issueGrpcTlsFiles(names);
      const played = playablePods(objects, { "switchboard-grpc-tls": tls.dir });
      pods = played.pods;
      const manifest = join(mkdtempSync(join(tmpdir(), "sb-kube-")), "pods.yaml");
      writeFileSync(manifest, played.manifest);
      await podman("kube", "play", "--network", network, manifest);
      closers.push(() => podman("kube", "down", manifest).catch(() => undefined));
      // The bridge exists now: the pods retry PostgreSQL meanwhile (STARTUP_WAIT_MS).
      for (const [port, target] of [
        [postgresPort, 5432],
        [redisPort, 6379],
      ] as const) {
        const forwarder = await forward(gateway, port, target);
        closers.unshift(() => forwarder.close());
      }
      const gatewayPod = pods.find((pod) => pod.component === "gateway")!;
      gatewayUrl = `http://${await podAddress(gatewayPod.name)}:8080`;
    }, 300_000);

    afterAll(async () => {
      for (const close of closers.reverse()) await close().catch(() => undefined);
    }, 120_000);

    it("every pod becomes Ready by its rendered readiness probe within its startup budget", async () => {
      expect(pods.length).toBeGreaterThanOrEqual(6);
      const statuses = await Promise.all(
        pods.map(async (pod) => {
          const address = await podAddress(pod.name);
          const ready = await waitReady(pod, address, pod.startupBudgetMs);
          const status = ready ? "Ready" : "NotReady";
          return [pod.name, status] as const;
        }),
      );
      expect(Object.fromEntries(statuses)).toEqual(
        Object.fromEntries(pods.map((pod) => [pod.name, "Ready"])),
      );
    }, 200_000);

    it("the seed Job loads numbers, and the gateway serves them to the bootstrap client", async () => {
      const [job] = ofKind<IJob>(objects, "Job");
      const container = job!.spec!.template.spec!.containers[0]!;
      await podman(
        "run",
        "--rm",
        "--network",
        network,
        "--read-only",
        "--user",
        "1000",
        "-e",
        `DATABASE_URL=${databaseUrl}`,
        container.image!,
        ...container.args!,
      );
      const gatewayPod = pods.find((pod) => pod.component === "gateway")!.name;
      const token = await clientCredentialsToken(
        (init) => fetchOnce(`${gatewayUrl}/oauth/token`, init),
        bootstrap,
      ).catch(async (error: unknown) => {
        const logs = await podman("logs", "--tail", "20", `${gatewayPod}-gateway`);
        throw new Error(`no token from ${gatewayUrl}: ${String(error)}\n${logs}`);
      });
      // The first search after a bulk load can outlast the gateway's 5 s deadline on a busy
      // machine (504): a client retries it, and so does this one, for up to 30 s.
      const search = await eventually(
        async () => {
          const response = await fetchOnce(`${gatewayUrl}/v1/api/numbers/search?limit=5`, {
            headers: { authorization: `Bearer ${token}` },
          });
          return { status: response.status, body: (await response.json()) as { data?: unknown[] } };
        },
        ({ status }) => status !== 504,
        30_000,
      );
      expect(search.status, JSON.stringify(search.body)).toBe(200);
      expect(search.body.data).toHaveLength(5);
    }, 120_000);
  });
});
