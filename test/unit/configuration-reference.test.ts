import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { withConfigurationTables } from "@switchboard/platform";
import { describe, expect, it } from "vitest";

const file = fileURLToPath(new URL("../../docs/configuration.md", import.meta.url));

describe("docs/configuration.md", () => {
  // CONFIG_WRITE=1 rewrites the tables instead (after a settings schema changed).
  it("holds the tables generated from every settings schema", () => {
    const current = readFileSync(file, "utf8");
    const generated = withConfigurationTables(current);
    if (process.env.CONFIG_WRITE === "1") writeFileSync(file, generated);
    expect(current).toBe(generated);
  });
});
