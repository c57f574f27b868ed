import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { carrierNames } from "@switchboard/kit";
import { describe, expect, it } from "vitest";

const doc = readFileSync(
  fileURLToPath(new URL("../../docs/architecture.md", import.meta.url)),
  "utf8",
);

/** The paragraph of one service in the architecture's list of services. */
const serviceEntry = (name: string): string => {
  const start = doc.indexOf(`- **${name}**`);
  expect(start, `docs/architecture.md describes ${name}`).toBeGreaterThanOrEqual(0);
  const end = doc.indexOf("\n- **", start + 1);
  return doc.slice(start, end);
};

describe("docs/architecture.md", () => {
  it("names every carrier adapter a deployment can choose, under the side that has it", () => {
    const sides = { "call-control": ["sandbox", "sip"], messaging: ["sandbox", "smpp"] };
    const named = new Set(Object.values(sides).flat());
    expect([...named].sort()).toEqual([...carrierNames].sort());
    for (const [service, carriers] of Object.entries(sides)) {
      const entry = serviceEntry(service);
      for (const carrier of carriers)
        expect(entry, `${service}: ${carrier}`).toContain(`\`${carrier}\``);
      expect(entry).not.toMatch(/only (adapter )?so far/);
    }
  });
});
