import { randomBytes } from "node:crypto";
import { spawnSync } from "node:child_process";
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
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
  playableDeployments,
  playPods,
  podAddress,
  podman,
  podOf,
  type PlayableDeployment,
  type PlayedPod,
} from "./support/kube-play.js";
import { KubeletStandIn, ServiceStandIn, servicePlans } from "./support/stand-ins.js";

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

/** Each value set, and the replicas it renders for the gateway and call-control. */
const valueSets = [
  { name: "values.yaml", files: [] as string[], replicas: { gateway: 2, "call-control": 2 } },
  {
    name: "ci/production-values.yaml",
    files: [join(chartDir, "ci", "production-values.yaml")],
    replicas: { gateway: 3, "call-control": 2 },
  },
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

  describe.each(valueSets)("rendered with $name", ({ files, replicas }) => {
    const network = `sbkube-${randomBytes(3).toString("hex")}`;
    const closers: (() => Promise<unknown>)[] = [];
    let database: TestDatabase;
    let deployments: PlayableDeployment[] = [];
    let configMaps: unknown[] = [];
    let pods: PlayedPod[] = [];
    let objects: ReturnType<typeof parseObjects> = [];
    let gatewayUrl = "";
    let databaseUrl = "";
    /** The number the walkthrough assigned to the account. */
    let assigned = "";
    const kubelet = new KubeletStandIn([]);
    const services: ServiceStandIn[] = [];
    const bootstrap = { id: "cli_kube", secret: `sbcs_${randomBytes(24).toString("base64url")}` };

    /** Plays `count` new pods of `deployment` and has the kubelet stand-in probe them. */
    async function scaleUp(deployment: PlayableDeployment, count: number): Promise<PlayedPod[]> {
      const added = Array.from({ length: count }, () =>
        podOf(deployment, `${deployment.name}-${randomBytes(3).toString("hex")}`),
      );
      pods.push(...added);
      await playPods(
        network,
        configMaps,
        added.map((pod) => deployment.pod(pod.name)),
      );
      return added;
    }

    beforeAll(async () => {
      database = await createRealTestDatabase("kubeplay");
      closers.push(() => database.drop());
      await podman("network", "create", network);
      closers.push(() => podman("network", "rm", "-f", network));
      const [gateway, bridge] = (
        await podman(
          "network",
          "inspect",
          network,
          "--format",
          "{{range .Subnets}}{{.Gateway}}{{end}} {{.NetworkInterface}}",
        )
      ).split(" ") as [string, string];
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
            // Rate-limit buckets of this run's own, not those of another release on this Redis.
            `env.REDIS_KEY_PREFIX=${prefix}:`,
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
      // Each Service gets an address of its own on the bridge, as a ClusterIP: the pods find
      // it under the Service's name (hostAliases), and its stand-in forwards to Ready pods.
      const plans = servicePlans(objects);
      const subnet = gateway.split(".").slice(0, 3).join(".");
      const serviceAddresses = Object.fromEntries(
        plans.map((plan, index) => [plan.name, `${subnet}.${200 + index}`]),
      );
      const names = ofKind<IDeployment>(objects, "Deployment").map((d) => d.metadata.name);
      const tls = issueGrpcTlsFiles(names);
      ({ configMaps, deployments } = playableDeployments(
        objects,
        { "switchboard-grpc-tls": tls.dir },
        serviceAddresses,
      ));
      closers.push(async () => {
        kubelet.stopAll();
        for (const pod of pods) await podman("pod", "rm", "-f", pod.name).catch(() => undefined);
      });
      for (const [index, deployment] of deployments.entries()) {
        await scaleUp(deployment, deployment.replicas);
        // The bridge exists once the first pod is on it: its MAC address is pinned. Linux gives
        // a bridge whose address was never set the lowest address of its ports, so it changes as
        // pods come and go; the pods' ARP entries for the bridge's addresses (PostgreSQL, Redis
        // and the Services' stand-ins) then name a MAC nobody answers, and what they send there
        // is lost for ~30 s, until the entries are refreshed: calls hang to their deadline.
        // Netavark 1.4 (Debian 12) leaves it unset (later releases set it: containers/netavark
        // #833); Kubernetes' CNI bridge plugin sets it.
        if (index === 0) await pinMacAddress(bridge);
      }
      // The pods retry PostgreSQL meanwhile (STARTUP_WAIT_MS).
      for (const plan of plans) {
        await run("ip", ["addr", "add", `${serviceAddresses[plan.name]}/32`, "dev", bridge]);
        const service = await ServiceStandIn.start(plan, serviceAddresses[plan.name]!);
        services.push(service);
        closers.unshift(() => service.close());
      }
      kubelet.services.push(...services);
      for (const [port, target] of [
        [postgresPort, 5432],
        [redisPort, 6379],
      ] as const) {
        const forwarder = await forward(gateway, port, target);
        closers.unshift(() => forwarder.close());
      }
      for (const pod of pods) kubelet.watch(pod, await podAddress(pod.name));
      gatewayUrl = `http://${serviceAddresses[deployments.find((d) => d.component === "gateway")!.name]}:8080`;
    }, 300_000);

    afterAll(async () => {
      for (const close of closers.reverse()) await close().catch(() => undefined);
    }, 180_000);

    it("runs every Deployment's replicas, each Ready by its rendered probe within its startup budget", async () => {
      const played = Object.fromEntries(deployments.map((d) => [d.component, d.replicas]));
      expect(played).toMatchObject(replicas);
      expect(pods).toHaveLength(deployments.reduce((sum, d) => sum + d.replicas, 0));
      const statuses = await Promise.all(
        pods.map(async (pod) => {
          const ready = await kubelet.waitReady(pod.name, pod.startupBudgetMs);
          return [pod.name, ready ? "Ready" : "NotReady"] as const;
        }),
      );
      expect(Object.fromEntries(statuses)).toEqual(
        Object.fromEntries(pods.map((pod) => [pod.name, "Ready"])),
      );
      for (const service of services) {
        const ready = pods.filter((pod) => pod.component === service.plan.component).length;
        expect(service.endpoints.size, service.plan.name).toBe(ready);
      }
    }, 300_000);

    it("the seed Job loads numbers, and the README walkthrough passes through the gateway Service", async () => {
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
      // The first search after a bulk load can outlast the gateway's 5 s deadline on a busy
      // machine (504): a client retries it, and so does this one, for up to 30 s.
      const token = await clientCredentialsToken(
        (init) => fetchOnce(`${gatewayUrl}/oauth/token`, init),
        bootstrap,
      );
      await eventually(
        () =>
          fetchOnce(`${gatewayUrl}/v1/api/numbers/search?limit=1`, {
            headers: { authorization: `Bearer ${token}` },
          }).then((response) => response.status),
        (status) => status !== 504,
        30_000,
      );
      const { number, hold, numbers } = await readmeWalkthrough(gatewayUrl, bootstrap);
      expect(number).toMatch(/^\+1\d{10}$/);
      expect(hold).toMatch(/^hld_/);
      expect(numbers.map((entry) => entry.number)).toContain(number);
      assigned = number;
    }, 120_000);

    it("a rolling replacement of call-control under traffic through the gateway Service loses no request", async () => {
      const callControl = deployments.find((d) => d.component === "call-control")!;
      const token = await clientCredentialsToken(
        (init) => fetchOnce(`${gatewayUrl}/oauth/token`, init),
        bootstrap,
      );
      const api = (path: string, init: RequestInit = {}) =>
        fetch(`${gatewayUrl}${path}`, {
          ...init,
          headers: {
            authorization: `Bearer ${token}`,
            "content-type": "application/json",
            ...(init.headers as Record<string, string>),
          },
          signal: AbortSignal.timeout(15_000),
        });
      expect(
        (await api("/v1/api/agents", { method: "POST", body: '{"name":"alice"}' })).status,
      ).toBe(201);
      const answers = new Map<number | string, number>();
      const calls: string[] = [];
      // What happened when, for a failure's message.
      const started = Date.now();
      const timeline: string[] = [];
      const note = (event: string) => timeline.push(`+${Date.now() - started} ms ${event}`);
      let sending = true;
      /**
       * Sends `request` every `pauseMs` until the rollout is over, counting its answers by
       * status. The four list clients stay under calls:read's 50 a second (429 beyond).
       */
      const client = async (
        request: () => Promise<Response>,
        expected: number,
        pauseMs: number,
      ) => {
        while (sending) {
          const sent = Date.now() - started;
          const status = await request()
            .then(async (response) => {
              const body = (await response.json()) as { id?: string };
              if (response.status === 201 && body.id) calls.push(body.id);
              return response.status === expected ? "expected" : response.status;
            })
            .catch((error: unknown) => String(error));
          answers.set(status, (answers.get(status) ?? 0) + 1);
          if (status !== "expected") note(`${status} to a request sent at +${sent} ms`);
          await new Promise((resolve) => setTimeout(resolve, pauseMs));
        }
      };
      // Four clients list calls; one places a 2 s sandbox call (+1555010xxx0) every second.
      const clients = [
        ...Array.from({ length: 4 }, () => client(() => api("/v1/api/calls?limit=1"), 200, 150)),
        client(
          () =>
            api("/v1/api/calls/outbound", {
              method: "POST",
              headers: { "idempotency-key": `rollout-${randomBytes(6).toString("hex")}` },
              body: JSON.stringify({ from: assigned, to: "+15550100000", agent: "alice" }),
            }),
          201,
          1_000,
        ),
      ];
      const terminations: { exitCode: number; exitMs: number }[] = [];
      try {
        // maxSurge 25% of 2 is one, maxUnavailable 0: a new pod Ready before an old one goes.
        for (const old of pods.filter((pod) => pod.deployment === callControl.name)) {
          const [replacement] = await scaleUp(callControl, 1);
          note(`${replacement!.name} played`);
          kubelet.watch(replacement!, await podAddress(replacement!.name));
          expect(await kubelet.waitReady(replacement!.name, callControl.startupBudgetMs)).toBe(
            true,
          );
          note(`${replacement!.name} Ready; deleting ${old.name}`);
          terminations.push(await kubelet.terminate(old));
          note(`${old.name} exited ${JSON.stringify(terminations.at(-1))}`);
          pods = pods.filter((pod) => pod !== old);
        }
        await new Promise((resolve) => setTimeout(resolve, 3_000));
      } finally {
        sending = false;
        await Promise.all(clients);
      }
      const total = [...answers.values()].reduce((sum, count) => sum + count, 0);
      console.info(
        `call-control rollout: ${JSON.stringify(Object.fromEntries(answers))}, ${calls.length} calls`,
      );
      expect(total).toBeGreaterThan(100);
      if (answers.size > 1) {
        for (const pod of pods.filter((candidate) => candidate.component === "gateway")) {
          const logs = await podman("logs", "--tail", "15", `${pod.name}-${pod.container}`);
          note(`${pod.name}:\n${logs}`);
        }
      }
      expect(Object.fromEntries(answers), timeline.join("\n")).toEqual({ expected: total });
      // Every call placed during the rollout completes, wherever its pod went.
      const statuses = await eventually(
        async () => {
          await new Promise((resolve) => setTimeout(resolve, 1_000));
          return Promise.all(
            calls.map((id) =>
              api(`/v1/api/calls/${id}`).then(
                async (response) => ((await response.json()) as { status: string }).status,
              ),
            ),
          );
        },
        (all) => all.every((status) => status === "completed"),
        60_000,
      );
      expect(calls.length).toBeGreaterThan(10);
      expect(new Set(statuses)).toEqual(new Set(["completed"]));
      for (const { exitCode, exitMs } of terminations) {
        expect(exitCode).toBe(0);
        expect(exitMs).toBeLessThan(callControl.graceSeconds * 1000);
      }
    }, 400_000);
  });
});

const run = promisify(execFile);

/** Sets `device`'s MAC address to the one it has, so that the kernel never changes it (NET_ADDR_SET). */
async function pinMacAddress(device: string): Promise<void> {
  const address = readFileSync(`/sys/class/net/${device}/address`, "utf8").trim();
  await run("ip", ["link", "set", "dev", device, "address", address]);
  expect(readFileSync(`/sys/class/net/${device}/addr_assign_type`, "utf8").trim()).toBe("3");
}

/**
 * The README's Walkthrough block run by bash against `url`, its first lines (the local
 * bootstrap file and URL) replaced by the bootstrap client and the gateway Service's URL.
 */
async function readmeWalkthrough(
  url: string,
  client: { id: string; secret: string },
): Promise<{ number: string; hold: string; numbers: { number: string }[] }> {
  const readme = readFileSync(join(chartDir, "..", "..", "README.md"), "utf8");
  const walkthrough = readme.slice(readme.indexOf("## Walkthrough"));
  const block = shellBlocks(walkthrough)[0]!
    .split("\n")
    .filter((line) => !/^(ID|URL)=/.test(line))
    .join("\n");
  // Each reply on a line of its own (curl prints none after the body).
  const script = [
    "set -euo pipefail",
    'curl() { command curl --fail-with-body "$@"; echo; }',
    block,
    'echo "NUMBER=$NUMBER"; echo "HOLD=$HOLD"',
  ].join("\n");
  const { stdout } = await run("bash", ["-c", script], {
    env: { PATH: process.env.PATH ?? "", ID: client.id, SECRET: client.secret, URL: url },
  });
  const lines = stdout.trim().split("\n");
  const value = (name: string) =>
    lines.find((line) => line.startsWith(`${name}=`))!.slice(name.length + 1);
  const list = JSON.parse(lines.at(-3)!) as { data: { number: string }[] };
  return { number: value("NUMBER"), hold: value("HOLD"), numbers: list.data };
}
