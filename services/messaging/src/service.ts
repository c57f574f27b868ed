import { unary, type GrpcService, type SigningKeyStore } from "@switchboard/kit";
import { messaging } from "@switchboard/proto";
import { createConsent, getConsent, listConsents } from "./consents/consents.js";
import { revokeConsent } from "./consents/revocation.js";
import type { MessagingContext } from "./context.js";
import { receiveSandboxMessage } from "./messages/inbound.js";
import { getMessage, listMessages } from "./messages/queries.js";
import { sendMessage } from "./messages/send.js";
import { getSettings, updateSettings } from "./settings.js";
import {
  createTemplate,
  createTemplateVersion,
  getTemplate,
  listTemplates,
} from "./templates/templates.js";

/** The MessagingService gRPC handlers: each a thin adapter over one operation module. */
export function createMessagingService(ctx: MessagingContext, keys: SigningKeyStore): GrpcService {
  const { logger } = ctx;
  const implementation: messaging.MessagingServiceServer = {
    sendMessage: unary(logger, async (request: messaging.SendMessageRequest, call) => ({
      message: await sendMessage(ctx, request, call.idempotencyKey),
    })),
    getMessage: unary(logger, async (request: messaging.GetMessageRequest) => ({
      message: await getMessage(ctx, request),
    })),
    listMessages: unary(logger, (request: messaging.ListMessagesRequest) =>
      listMessages(ctx, request),
    ),
    createTemplate: unary(logger, async (request: messaging.CreateTemplateRequest, call) => ({
      template: await createTemplate(ctx, request, call.idempotencyKey),
    })),
    createTemplateVersion: unary(
      logger,
      async (request: messaging.CreateTemplateVersionRequest, call) => ({
        template: await createTemplateVersion(ctx, request, call.idempotencyKey),
      }),
    ),
    getTemplate: unary(logger, async (request: messaging.GetTemplateRequest) => ({
      template: await getTemplate(ctx, request),
    })),
    listTemplates: unary(logger, (request: messaging.ListTemplatesRequest) =>
      listTemplates(ctx, request),
    ),
    createConsent: unary(logger, async (request: messaging.CreateConsentRequest, call) => ({
      consent: await createConsent(ctx, request, call.idempotencyKey),
    })),
    getConsent: unary(logger, async (request: messaging.GetConsentRequest) => ({
      consent: await getConsent(ctx, request),
    })),
    listConsents: unary(logger, (request: messaging.ListConsentsRequest) =>
      listConsents(ctx, request),
    ),
    revokeConsent: unary(logger, async (request: messaging.RevokeConsentRequest, context) => ({
      consent: await revokeConsent(ctx, request, context.idempotencyKey),
    })),
    receiveSandboxMessage: unary(
      logger,
      async (request: messaging.ReceiveSandboxMessageRequest) => ({
        message: await receiveSandboxMessage(ctx, request),
      }),
    ),
    getSettings: unary(logger, async (request: messaging.GetSettingsRequest) => ({
      settings: await getSettings(ctx, request),
    })),
    updateSettings: unary(logger, async (request: messaging.UpdateSettingsRequest) => ({
      settings: await updateSettings(ctx, request),
    })),
    listPublicKeys: unary(logger, async (): Promise<messaging.ListPublicKeysResponse> => {
      const { keys: jwks } = await keys.publicJwks();
      return { keysJson: jwks.map((key) => JSON.stringify(key)) };
    }),
  };
  return { definition: messaging.MessagingServiceService, implementation };
}
