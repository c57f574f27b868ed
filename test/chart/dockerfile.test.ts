import { readFileSync } from "node:fs";
import { join } from "node:path";
import { validate } from "dockerfile-utils";
import { describe, expect, it } from "vitest";
import type { IDeployment } from "kubernetes-models/apps/v1";
import { dockerfileStages } from "./support/dockerfile-instructions.js";
import { ofKind, renderObjects } from "./support/render.js";

const root = join(import.meta.dirname, "..", "..");
const dockerfile = readFileSync(join(root, "Dockerfile"), "utf8");
const stages = dockerfileStages(dockerfile);
const [build, runtime] = [stages.at(-2)!, stages.at(-1)!];
const argsOf = (stage: typeof build, keyword: string) =>
  stage.instructions.filter((instruction) => instruction.keyword === keyword).map((i) => i.args);

describe("Dockerfile", () => {
  it("passes dockerfile-utils with no error or warning", () => {
    expect(validate(dockerfile)).toEqual([]);
  });

  it("the linter reports a broken Dockerfile (the check has teeth)", () => {
    const diagnostics = validate("FROM node:20\nRUNN npm test\nENTRYPOINT ['node']\n");
    expect(diagnostics.map((diagnostic) => diagnostic.message)).toEqual([
      "Unknown instruction: RUNN",
      expect.stringMatching(/single quotes/),
    ]);
  });

  it("builds in one stage and runs from another with production dependencies only", () => {
    expect(stages.map((stage) => stage.name)).toEqual(["build", "runtime"]);
    const buildRuns = argsOf(build, "RUN").join(" && ");
    expect(buildRuns).toMatch(/npm install /);
    expect(buildRuns).toMatch(/npm run build/);
    expect(buildRuns).toMatch(/npm prune --omit=dev/);
    expect(argsOf(runtime, "RUN")).toEqual([]);
    expect(argsOf(runtime, "COPY").every((args) => args.startsWith("--from=build "))).toBe(true);
    expect(argsOf(runtime, "ENV")).toContain("NODE_ENV=production");
  });

  it("copies every workspace's manifest before installing", () => {
    const { workspaces } = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
      workspaces: string[];
    };
    const copies = argsOf(build, "COPY");
    for (const workspace of workspaces) {
      expect(copies, workspace).toContain(`${workspace}/package.json ${workspace}/`);
    }
  });

  it("runs as a numeric non-root user with an exec-form telemetry entrypoint", () => {
    const [user] = argsOf(runtime, "USER");
    expect(user).toMatch(/^[1-9]\d*(:\d+)?$/);
    expect(JSON.parse(argsOf(runtime, "ENTRYPOINT")[0]!)).toEqual([
      "node",
      "--import",
      "@switchboard/kit/telemetry/register",
    ]);
    expect(JSON.parse(argsOf(runtime, "CMD")[0]!)).toEqual(["gateway/dist/main.js"]);
    expect(argsOf(runtime, "WORKDIR")).toEqual(["/app"]);
  });

  it("holds every entry script the chart starts, and runs as the chart's user", () => {
    const copied = argsOf(runtime, "COPY").map((args) => args.split(" ").at(-1)!.replace("./", ""));
    const deployments = ofKind<IDeployment>(
      renderObjects({ set: ["components.webhook-worker.enabled=true"] }),
      "Deployment",
    );
    for (const deployment of deployments) {
      const pod = deployment.spec!.template.spec!;
      const entry = pod.containers[0]!.args![0]!;
      expect(copied, entry).toContain(entry.split("/")[0]);
      expect(`${pod.securityContext!.runAsUser}:${pod.securityContext!.runAsGroup}`).toBe(
        argsOf(runtime, "USER")[0],
      );
    }
  });

  it(".dockerignore leaves out local builds and dependencies but not the sources", () => {
    const ignored = readFileSync(join(root, ".dockerignore"), "utf8")
      .split("\n")
      .filter((line) => line && !line.startsWith("#"));
    for (const pattern of ["**/node_modules", "**/dist", ".git"])
      expect(ignored).toContain(pattern);
    for (const needed of ["protos", "package-lock.json", "packages", "services", "src"]) {
      expect(
        ignored.some((pattern) => pattern.replace(/^\*\*\//, "") === needed),
        needed,
      ).toBe(false);
    }
  });
});
