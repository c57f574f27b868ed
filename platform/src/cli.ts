import { runAdminCli } from "@switchboard/gateway";
import { signingKeySecretOf } from "@switchboard/kit";
import {
  bootstrapAccountOf,
  dataDirFrom,
  readRuntime,
  savedSecret,
  SIGNING_KEY_SECRET_FILE,
} from "./data-dir.js";

const usage = `usage: switchboard <command>
  start                 run the embedded platform (same as npm start)
  admin <…>             accounts, clients, service tokens and signing keys (switchboard admin help)`;

const [command, ...rest] = process.argv.slice(2);

if (command === "start") {
  await import("./embedded.js");
} else if (command === "admin") {
  const dataDir = dataDirFrom();
  const runtime = readRuntime(dataDir);
  const databaseUrl = process.env.DATABASE_URL ?? runtime?.databaseUrl;
  if (!databaseUrl) {
    process.stderr.write(
      "switchboard admin: set DATABASE_URL, or start the embedded platform (npm start) first\n",
    );
    process.exit(2);
  }
  const code = await runAdminCli(rest, {
    databaseUrl,
    adminAccount: bootstrapAccountOf(process.env),
    // The embedded platform's own (generated into its data dir) unless one is set.
    signingKeySecret: signingKeySecretOf({
      ...process.env,
      SIGNING_KEY_SECRET:
        process.env.SIGNING_KEY_SECRET ?? savedSecret(dataDir, SIGNING_KEY_SECRET_FILE),
    }),
    out: (line) => process.stdout.write(`${line}\n`),
  });
  process.exit(code);
} else {
  process.stdout.write(`${usage}\n`);
  process.exit(command === undefined || command === "help" ? 0 : 2);
}
