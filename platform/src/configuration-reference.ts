import { gatewaySettings } from "@switchboard/gateway";
import { processSettingsSchema, startupWaitSettings } from "@switchboard/kit";
import { z } from "zod";
import { serviceComponents } from "./components.js";
import { embeddedSettings } from "./embedded-settings.js";
import { meshSettings } from "./mesh/mesh-config.js";

interface JsonProperty {
  description?: string;
  default?: unknown;
}

const cell = (text: string) => text.replace(/\|/g, "\\|").replace(/\n/g, " ");

const defaultOf = (property: JsonProperty) =>
  property.default === undefined || property.default === ""
    ? "—"
    : `\`${cell(String(property.default))}\``;

/** One Markdown table: every variable a schema reads, its meaning and its default. */
function table(schemas: z.ZodType[]): string {
  const rows = new Map<string, JsonProperty>();
  for (const schema of schemas) {
    const json = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as {
      properties?: Record<string, JsonProperty>;
    };
    for (const [name, property] of Object.entries(json.properties ?? {})) {
      if (!rows.has(name)) rows.set(name, property);
    }
  }
  const lines = [...rows].map(
    ([name, property]) =>
      `| \`${name}\` | ${cell(property.description ?? "")} | ${defaultOf(property)} |`,
  );
  return ["| variable | meaning | default |", "|---|---|---|", ...lines].join("\n");
}

/**
 * docs/configuration.md's tables, by marker name, generated from the settings schemas
 * (test/unit/configuration-reference.test.ts keeps the file equal to them).
 */
export function configurationTables(): Record<string, string> {
  return {
    embedded: table([embeddedSettings]),
    mesh: table([meshSettings]),
    gateway: table([gatewaySettings, startupWaitSettings]),
    ...Object.fromEntries(
      serviceComponents.map((component) => [
        component.name,
        table([processSettingsSchema(component), component.settings]),
      ]),
    ),
  };
}

/** `text` with each `<!-- config:<name>:begin -->` … `end` block replaced by its table. */
export function withConfigurationTables(text: string): string {
  let result = text;
  for (const [name, body] of Object.entries(configurationTables())) {
    const begin = `<!-- config:${name}:begin -->`;
    const end = `<!-- config:${name}:end -->`;
    const from = result.indexOf(begin);
    const to = result.indexOf(end);
    if (from < 0 || to < from) throw new Error(`docs/configuration.md has no ${name} block`);
    result = `${result.slice(0, from + begin.length)}\n${body}\n${result.slice(to)}`;
  }
  return result;
}
