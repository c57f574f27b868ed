import { randomBytes } from "node:crypto";
import { Agent, request } from "node:http";
import type { LoadInput } from "./load.js";

/** One send's answer: its HTTP status (or gRPC outcome) and, when accepted, the message's id. */
export interface SendAnswer {
  status: number | string;
  id?: string | undefined;
}

/** Sends the `index`th message of a load; `close` lets go of its connections. */
export interface Sender {
  one(index: number): Promise<SendAnswer>;
  close(): void;
}

/** The message texts are unique across a carrier's run: each load counts its codes from here. */
const codeBase: Record<LoadInput["label"], number> = {
  warm: 1_000_000,
  svc: 2_000_000,
  run: 3_000_000,
};

/** The `index`th send of a load: its sender and recipient in turn, a code of its own. */
const sendBody = (input: LoadInput, index: number) => {
  const recipient = input.recipients[index % input.recipients.length]!;
  return {
    to: recipient.to,
    from: input.senders[index % input.senders.length]!,
    templateId: input.templateId,
    code: String(codeBase[input.label] + index),
    consentId: recipient.consentId,
  };
};

const idempotencyKey = (input: LoadInput, index: number) =>
  `${input.label}-${index}-${randomBytes(6).toString("hex")}`;

/** `POST /v1/api/messages/send` through the gateway, over keep-alive connections. */
export function httpSender(input: LoadInput): Sender {
  const agent = new Agent({ keepAlive: true, maxSockets: input.concurrency });
  return {
    close: () => agent.destroy(),
    one: (index) =>
      new Promise((resolve, reject) => {
        const b = sendBody(input, index);
        const body = JSON.stringify({
          channel: "sms",
          to: b.to,
          from: b.from,
          template_id: b.templateId,
          variables: { name: "Ada", code: b.code },
          consent_id: b.consentId,
        });
        const req = request(
          `${input.url}/v1/api/messages/send`,
          {
            method: "POST",
            agent,
            headers: {
              Authorization: `Bearer ${input.token}`,
              "Content-Type": "application/json",
              "Content-Length": Buffer.byteLength(body),
              "Idempotency-Key": idempotencyKey(input, index),
            },
          },
          (res) => {
            const chunks: Buffer[] = [];
            res.on("data", (chunk: Buffer) => chunks.push(chunk));
            res.on("end", () =>
              resolve({
                status: res.statusCode ?? 0,
                id:
                  res.statusCode === 202
                    ? (JSON.parse(Buffer.concat(chunks).toString()) as { id: string }).id
                    : undefined,
              }),
            );
            res.on("error", reject);
          },
        );
        req.on("error", reject);
        req.end(body);
      }),
  };
}

/** MessagingService.SendMessage straight to the service (no gateway, no policies). */
export async function grpcSender(input: LoadInput): Promise<Sender> {
  // Loaded here, not at the top: a load through the gateway does not load the gRPC stack.
  const { callUnary, createClient } = await import("@switchboard/kit");
  const { messaging } = await import("@switchboard/proto");
  const client = createClient(messaging.MessagingServiceClient, input.grpcAddress);
  return {
    close: () => client.close(),
    one: async (index) => {
      const b = sendBody(input, index);
      try {
        const response = await callUnary(
          "messaging",
          client,
          client.sendMessage,
          {
            accountId: input.accountId,
            channel: messaging.Channel.SMS,
            to: b.to,
            from: b.from,
            templateId: b.templateId,
            variables: { name: "Ada", code: b.code },
            consentId: b.consentId,
            mediaUrls: [],
          },
          { deadlineMs: 30_000, metadata: { "idempotency-key": idempotencyKey(input, index) } },
        );
        return { status: "OK", id: response.message?.id };
      } catch (error) {
        return { status: (error as { kind?: string }).kind ?? "error" };
      }
    },
  };
}
