import { defineConfig } from "vitest/config";

export default defineConfig({
  resolve: { conditions: ["source"] },
  test: {
    include: ["**/test/**/*.test.ts"],
    exclude: ["**/node_modules/**", "**/dist/**"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: "forks",
    // Captures every log line of the run and fails it if one holds a secret or a message body.
    globalSetup: ["test/support/log-capture.ts"],
    env: { NODE_ENV: "test" },
  },
});
