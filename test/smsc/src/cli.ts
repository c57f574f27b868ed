#!/usr/bin/env node
import { createInterface } from "node:readline";
import { parseArgs } from "node:util";
import type { SmscEvent } from "./api.js";
import { isSubmitFault, submitFaults } from "./faults.js";
import { statusName } from "./outcomes.js";
import type { ReceiptFormat } from "./receipts.js";
import { startTestSmsc } from "./smsc.js";

const usage = `usage: switchboard-test-smsc --system-id ID --password SECRET [options]

  --port N               listen port (default 2775; 0 for any)
  --host HOST            listen address (default 127.0.0.1)
  --receipt-delay-ms N   from submit to delivery receipt (default 1000)
  --receipt-format F     text | tlv | both (default both)
  --max-per-second N     throttle accepted submits past N in any second
  --slow-response-ms N   how late the slow-response fault answers (default 5000)
  --show-text            print message texts (hidden by default, as in our logs)

The outcome of a submit follows the destination's last digit: 0 delivered, 1 undeliverable,
2 rejected, 3 expired, 4 deleted, 5 unknown, 6 throttled once, 7 refused (invalid destination),
8 queue full once, 9 no receipt.

On stdin, one command a line:
  mo FROM TO TEXT...     deliver a mobile-originated message (mo +14155550100 +14155550123 STOP)
  drop                   break every connection
  fault NAME [N]         the next N (default 1) accepted submits meet the fault NAME:
                         ${submitFaults.join(", ")}
`;

function fail(message: string): never {
  process.stderr.write(`${message}\n\n${usage}`);
  process.exit(2);
}

const { values } = (() => {
  try {
    return parseArgs({
      options: {
        port: { type: "string", default: "2775" },
        host: { type: "string", default: "127.0.0.1" },
        "system-id": { type: "string" },
        password: { type: "string" },
        "receipt-delay-ms": { type: "string", default: "1000" },
        "receipt-format": { type: "string", default: "both" },
        "max-per-second": { type: "string" },
        "slow-response-ms": { type: "string" },
        "show-text": { type: "boolean", default: false },
        help: { type: "boolean", default: false },
      },
    });
  } catch (error) {
    return fail((error as Error).message);
  }
})();

if (values.help) {
  process.stdout.write(usage);
  process.exit(0);
}

const number = (name: string, value: string | undefined): number | undefined => {
  if (value === undefined) return undefined;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 0) fail(`--${name}: not a whole number: ${value}`);
  return parsed;
};

const systemId = values["system-id"] ?? fail("--system-id is required");
const password = values.password ?? fail("--password is required");
const format = values["receipt-format"];
if (format !== "text" && format !== "tlv" && format !== "both") {
  fail(`--receipt-format: text, tlv or both, not ${format}`);
}
const showText = values["show-text"];

const quoted = (text: string) => (showText ? ` text=${JSON.stringify(text)}` : "");

/** One line per event, without the password (never in an event) or, by default, texts. */
function describe(event: SmscEvent): string {
  switch (event.type) {
    case "session":
      return `session ${event.sessionId} ${event.state} ${event.remote}`;
    case "bind": {
      const { bind } = event;
      return `bind session=${bind.sessionId} ${bind.command} system_id=${bind.systemId} ${statusName(bind.status)}`;
    }
    case "unbind":
      return `unbind session=${event.sessionId}`;
    case "submit": {
      const s = event.submit;
      const concat = s.udh ?? s.sar;
      const part = concat ? ` part=${concat.seq}/${concat.total} ref=${concat.ref}` : "";
      return (
        `submit session=${s.sessionId} id=${s.messageId} from=${s.source} to=${s.destination} ` +
        `dcs=${s.dataCoding}${part} chars=${[...s.text].length} receipt=${s.receipt}${quoted(s.text)}`
      );
    }
    case "refused": {
      const s = event.submit;
      return (
        `submit session=${s.sessionId} from=${s.source} to=${s.destination} ` +
        `${statusName(s.status)} (${s.reason})`
      );
    }
    case "receipt": {
      const a = event.attempt;
      const answer = a.status === undefined ? a.result : statusName(a.status);
      return `receipt session=${a.sessionId} id=${a.messageId} stat=${a.stat} attempt=${a.attempt} ${answer}`;
    }
    case "mo": {
      const { request } = event;
      return (
        `mo session=${event.sessionId} from=${request.from} to=${request.to} ` +
        `parts=${event.statuses.length} ${event.statuses.map(statusName).join(",")}${quoted(request.text)}`
      );
    }
    case "drop":
      return `drop sessions=${event.sessions} lost_submits=${event.lost}`;
    case "fault":
      return `fault session=${event.sessionId} id=${event.messageId} ${event.fault}`;
  }
}

const log = (line: string) => process.stdout.write(`${new Date().toISOString()} ${line}\n`);

const smsc = await startTestSmsc({
  host: values.host,
  port: number("port", values.port),
  systemId,
  password,
  receiptDelayMs: number("receipt-delay-ms", values["receipt-delay-ms"]),
  receiptFormat: format as ReceiptFormat,
  maxPerSecond: number("max-per-second", values["max-per-second"]),
  slowResponseMs: number("slow-response-ms", values["slow-response-ms"]),
  onEvent: (event) => log(describe(event)),
}).catch((error: unknown) => fail(`cannot listen: ${(error as Error).message}`));

log(`listening on ${smsc.host}:${smsc.port} system_id=${systemId}`);

// Stdin may be closed at once (run in the background): the SMSC keeps running until a signal.
createInterface({ input: process.stdin }).on("line", (line) => {
  const [command, from, to, ...words] = line.trim().split(/\s+/);
  if (!command) return;
  if (command === "drop") {
    void smsc.dropConnections();
  } else if (command === "fault") {
    const [, fault = "", count = "1"] = line.trim().split(/\s+/);
    if (!isSubmitFault(fault) || !/^[1-9]\d*$/.test(count)) {
      process.stderr.write(`fault NAME [N]: NAME is one of ${submitFaults.join(", ")}\n`);
      return;
    }
    smsc.faultSubmits(fault, Number(count));
    log(`fault ${fault} armed for ${count} submit(s)`);
  } else if (command === "mo" && from && to && words.length > 0) {
    smsc
      .sendMo({ from, to, text: words.join(" ") })
      .catch((error: unknown) => log(`mo failed: ${(error as Error).message}`));
  } else {
    process.stderr.write("commands: mo FROM TO TEXT... | drop | fault NAME [N]\n");
  }
});

let stopping = false;
const shutdown = (signal: NodeJS.Signals) => {
  if (stopping) process.exit(1);
  stopping = true;
  log(`${signal}: unbinding and stopping`);
  smsc.stop({ unbind: true }).then(
    () => process.exit(0),
    () => process.exit(1),
  );
};
process.on("SIGINT", shutdown);
process.on("SIGTERM", shutdown);
