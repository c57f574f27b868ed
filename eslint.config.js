import js from "@eslint/js";
import globals from "globals";
import tseslint from "typescript-eslint";

/** The service packages: none imports another (they talk over gRPC and events). */
const servicePackages = ["inventory", "call-control", "messaging", "usage", "webhook"];
const packagePattern = (names) => names.map((name) => `@switchboard/${name}`);

/** `no-restricted-imports` patterns: each group with the reason shown when it is broken. */
const restrictedImports = (...patterns) => [
  "error",
  { patterns: patterns.map(([group, message]) => ({ group, message })) },
];

export default tseslint.config(
  {
    ignores: [
      "**/dist/**",
      "**/node_modules/**",
      "packages/proto/src/gen/**",
      "**/.switchboard/**",
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_" },
      ],
      "no-console": "off",
    },
  },
  // Type-aware rules on the code that ships: a promise is awaited, returned or handled, and never
  // handed to what expects a plain function (an express handler, an event listener).
  {
    files: ["{packages,services,gateway,platform}/**/src/**/*.ts", "test/smsc/src/**/*.ts"],
    ignores: ["packages/sdk/src/schema.ts"],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/no-misused-promises": "error",
    },
  },
  // Boundaries (docs/architecture.md rules 3 and 11).
  {
    files: ["services/*/src/**/*.ts"],
    rules: {
      "no-restricted-imports": restrictedImports([
        packagePattern([...servicePackages, "gateway", "platform"]),
        "a service never imports another service, the gateway or the platform: call it over gRPC (its proto) or react to its events",
      ]),
    },
  },
  {
    files: ["gateway/src/**/*.ts"],
    rules: {
      "no-restricted-imports": restrictedImports([
        packagePattern([...servicePackages, "platform"]),
        "the gateway reaches the services over gRPC only (gateway/src/backends.ts)",
      ]),
    },
  },
  // packages/: the libraries (kit, proto, sdk) and the agent smoke (agent-smoke, which the
  // gateway mounts and hands its ports: gateway/src/smoke/gateway-smoke.ts). No package imports
  // a component; kit and proto, below all of them, import no other package either.
  {
    files: ["packages/*/src/**/*.ts"],
    rules: {
      "no-restricted-imports": restrictedImports([
        packagePattern([...servicePackages, "gateway", "platform"]),
        "a package never imports the gateway, a service or the platform: the component hands it what it needs (the agent smoke's ports)",
      ]),
    },
  },
  {
    files: ["packages/kit/src/**/*.ts", "packages/proto/src/**/*.ts"],
    rules: {
      "no-restricted-imports": restrictedImports([
        packagePattern([...servicePackages, "gateway", "platform", "sdk", "agent-smoke"]),
        "kit and proto are below every component: they import none",
      ]),
    },
  },
  {
    files: ["services/call-control/src/sip/**/*.ts"],
    rules: {
      "no-restricted-imports": restrictedImports(
        [
          packagePattern([...servicePackages, "gateway", "platform"]),
          "a service never imports another service, the gateway or the platform: call it over gRPC (its proto) or react to its events",
        ],
        [
          ["**/carrier/**", "../carrier", "../carrier.js"],
          "sip/ is the SIP stack (protocol, transports, dialogs, registrar); the carrier adapter (carrier/sip) uses it, never the other way",
        ],
      ),
    },
  },
);
