import { DomainError } from "@switchboard/kit";
import { messaging, wire } from "@switchboard/proto";
import { findListed } from "./find-in-pages.js";
import { smokeMarker } from "./smoke-resources.js";
import { runKey, type SmokeState } from "./smoke-state.js";
import { StepFailure, StepSkipped, type StepScope } from "./step-scope.js";
import type { StepSpec } from "./step-runner.js";

const templateBody = "Switchboard smoke check {{run}}";
/** One key per account: every run after the first gets the same template back. */
const templateKey = "smoke.template.v1";
const { Channel, ConsentStatus, MessageStatus } = messaging;
const terminal = new Set([
  MessageStatus.DELIVERED,
  MessageStatus.UNDELIVERED,
  MessageStatus.FAILED,
  MessageStatus.EXPIRED,
  MessageStatus.READ,
]);

const isSmokeEvidence = (json: string): boolean => {
  try {
    return typeof (JSON.parse(json) as { smoke?: unknown }).smoke === "string";
  } catch {
    return false;
  }
};

/** The approved template named `smoke` (created once per account). */
async function smokeTemplate(scope: StepScope, state: SmokeState): Promise<messaging.Template> {
  const svc = state.backends.messaging;
  try {
    const { template } = await scope.rpc(
      svc,
      (c) => c.createTemplate,
      {
        accountId: state.accountId,
        name: smokeMarker,
        channels: [Channel.SMS],
        body: templateBody,
      },
      templateKey,
    );
    if (template) return template;
  } catch (error) {
    if (!(error instanceof DomainError && error.kind === "conflict")) throw error;
  }
  // A `smoke` template made some other way: usable if it takes the same variable over SMS.
  const found = await findListed(
    scope,
    {
      backend: svc,
      method: (c) => c.listTemplates,
      request: { accountId: state.accountId },
      items: (r) => r.templates,
    },
    (t) => t.name === smokeMarker,
  );
  if (!found || found.variables.join() !== "run" || !found.channels.includes(Channel.SMS)) {
    throw new StepFailure('the template named "smoke" is not the smoke\'s (sms, {{run}})');
  }
  return found;
}

/** A granted sms consent of the smoke's recipient marked as the smoke's (else a new one). */
async function smokeConsent(
  scope: StepScope,
  state: SmokeState,
  recipient: string,
): Promise<messaging.Consent> {
  const svc = state.backends.messaging;
  const found = await findListed(
    scope,
    {
      backend: svc,
      method: (c) => c.listConsents,
      request: {
        accountId: state.accountId,
        phoneNumber: recipient,
        status: ConsentStatus.GRANTED,
      },
      items: (r) => r.consents,
    },
    (c) => c.channels.includes(Channel.SMS) && isSmokeEvidence(c.evidenceJson),
  );
  if (found) return found;
  const { consent } = await scope.rpc(
    svc,
    (c) => c.createConsent,
    {
      accountId: state.accountId,
      phoneNumber: recipient,
      channels: [Channel.SMS],
      source: messaging.ConsentSource.API,
      evidenceJson: JSON.stringify({ smoke: state.smokeId }),
    },
    runKey(state, "consent"),
  );
  if (!consent) throw new StepFailure("messaging answered without a consent");
  return consent;
}

/**
 * messages.send: template + consent + an SMS to SMOKE_MESSAGE_TO, until delivered: on the
 * sandbox a number that is delivered, on an SMSC (`smpp`) a handset the operator chose.
 */
export function messageStep(
  state: SmokeState,
  options: { budgetMs: number; carrier: string | undefined; to: string },
) {
  const svc = state.backends.messaging;
  const spec: StepSpec = {
    name: "messages.send",
    needs: ["resources"],
    budgetMs: options.budgetMs,
    run: async (scope) => {
      if (options.carrier === undefined)
        throw new StepSkipped("no messaging carrier is configured");
      const template = await smokeTemplate(scope, state);
      const consent = await smokeConsent(scope, state, options.to);
      const { message: queued } = await scope.rpc(
        svc,
        (c) => c.sendMessage,
        {
          accountId: state.accountId,
          channel: Channel.SMS,
          to: options.to,
          from: state.resources!.number,
          templateId: template.id,
          variables: { run: state.smokeId },
          consentId: consent.id,
          mediaUrls: [],
          ttlSeconds: 600,
        },
        runKey(state, "message"),
      );
      if (!queued) throw new StepFailure("messaging answered without a message");
      state.message = queued;
      const { message } = await scope.poll(
        "the message to be delivered",
        () =>
          scope.rpc(svc, (c) => c.getMessage, { accountId: state.accountId, messageId: queued.id }),
        (r) => r.message !== undefined && terminal.has(r.message.status),
      );
      if (message?.status !== MessageStatus.DELIVERED && message?.status !== MessageStatus.READ) {
        const status = (message && wire.messageStatus.spell(message.status)) ?? "unknown";
        throw new StepFailure(`${queued.id} ended ${status}`);
      }
      state.records.set("messages.send", [{ kind: "message.sent", resourceId: queued.id }]);
      return `${queued.id} from ${queued.from} delivered (${template.id}, ${consent.id})`;
    },
  };
  return spec;
}
