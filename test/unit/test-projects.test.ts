import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { createVitest } from "vitest/node";

const root = new URL("../..", import.meta.url).pathname;

/** Every test file the suite had before it had projects: `**\/test/**\/*.test.ts`, built ones aside. */
function* testFiles(dir = root): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === "node_modules" || entry.name === "dist" || entry.name.startsWith(".")) {
      continue;
    }
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* testFiles(path);
    else if (entry.name.endsWith(".test.ts") && /(^|\/)test\//.test(relative(root, path))) {
      yield relative(root, path);
    }
  }
}

/** What a test file that needs PostgreSQL or Redis says (the helpers that reach them). */
const serverPattern =
  /createRealTestDatabase|testDatabaseKinds|testRedisUrl|requireTestRedis|TEST_REDIS_URL|database: "postgres"|redis: true/;

/**
 * vitest.config.ts's projects (unit, integration, e2e, tools): `npm test` runs all of them, so
 * together they must hold every test file, each exactly once (a file in two would run twice, a
 * file in none never).
 */
describe("the vitest projects", () => {
  it("hold every test file, each in exactly one project", async () => {
    const vitest = await createVitest("test", { root, watch: false, config: "vitest.config.ts" });
    try {
      const specifications = await vitest.globTestSpecifications();
      const projectsOf = new Map<string, string[]>();
      for (const specification of specifications) {
        const file = relative(root, specification.moduleId);
        projectsOf.set(file, [...(projectsOf.get(file) ?? []), specification.project.name]);
      }
      const inTwo = [...projectsOf].filter(([, projects]) => projects.length > 1);
      expect(inTwo).toEqual([]);
      expect([...projectsOf.keys()].sort()).toEqual([...testFiles()].sort());
      const names = new Set([...projectsOf.values()].flat());
      expect([...names].sort()).toEqual(["e2e", "integration", "tools", "unit"]);

      // The unit project runs with no server: a file that asks for PostgreSQL or Redis belongs
      // in integration (name it *.integration.test.ts).
      const unit = [...projectsOf].filter(([, projects]) => projects[0] === "unit");
      const needsServer = unit
        .map(([file]) => file)
        .filter((file) => file !== relative(root, import.meta.filename))
        .filter((file) => serverPattern.test(readFileSync(join(root, file), "utf8")));
      expect(needsServer).toEqual([]);
    } finally {
      await vitest.close();
    }
  });
});
