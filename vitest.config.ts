import { defineConfig, type TestProjectInlineConfiguration } from "vitest/config";

/**
 * Four projects; a test file belongs to exactly one, by where it lives and how it is named
 * (test/unit/test-projects.test.ts checks that):
 *
 * - `unit`: every other `test/**\/*.test.ts`. Needs nothing but Node and `npm install` (no build,
 *   no PostgreSQL, no Redis, no tools; PGlite, in process, is allowed): `npm run test:unit`,
 *   `npm run test:watch`.
 * - `integration`: `*.integration.test.ts`, next to the code it tests (test/sdk's too). Needs
 *   PostgreSQL (TEST_DATABASE_URL) and Redis (TEST_REDIS_URL), and for a few suites a tool
 *   (SIPp, baresip, rtpengine).
 * - `e2e`: test/e2e and test/mesh. Start the whole platform, many from the built `dist/`
 *   (`npm run build` first), with PostgreSQL, Redis, and SIPp/baresip/rtpengine for the SIP
 *   suites.
 * - `tools`: test/chart, test/image, test/docs and test/monitoring: the chart (helm), the image
 *   (podman), the docs page (Chromium), alerts and dashboard (Prometheus).
 *
 * `npm test` (and CI) runs all four.
 */
export const projectFiles = {
  unit: {
    include: ["**/test/**/*.test.ts"],
    exclude: ["**/*.integration.test.ts", "test/{e2e,mesh,chart,image,docs,monitoring}/**"],
  },
  integration: {
    include: ["**/test/**/*.integration.test.ts"],
    exclude: ["test/{e2e,mesh,chart,image,docs,monitoring}/**"],
  },
  e2e: { include: ["test/{e2e,mesh}/**/*.test.ts"], exclude: [] },
  tools: { include: ["test/{chart,image,docs,monitoring}/**/*.test.ts"], exclude: [] },
} as const;

const alwaysExcluded = ["**/node_modules/**", "**/dist/**"];

const project = (name: keyof typeof projectFiles): TestProjectInlineConfiguration => ({
  resolve: { conditions: ["source"] },
  test: {
    name,
    include: [...projectFiles[name].include],
    exclude: [...alwaysExcluded, ...projectFiles[name].exclude],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: "forks",
    // Unit files share each worker's module cache (the imports are most of their time: a whole
    // unit run takes half as long); the others start servers and platforms, each file afresh.
    isolate: name !== "unit",
    env: { NODE_ENV: "test" },
  },
});

export default defineConfig({
  resolve: { conditions: ["source"] },
  test: {
    // Once for the whole run, whichever projects run (the projects do not repeat it): captures
    // every log line of the run and fails it if one holds a secret or a message body.
    globalSetup: ["test/support/log-capture.ts"],
    projects: [project("unit"), project("integration"), project("e2e"), project("tools")],
  },
});
