import {
  checkIdempotencyKey,
  cursorId,
  DomainError,
  FieldErrors,
  idPage,
  isUniqueViolation,
  newId,
  notFound,
  pageLimit,
  type PoolClient,
  replayByKey,
  requestFingerprint,
  requireAccount,
  withTransaction,
} from "@switchboard/kit";
import type { messaging } from "@switchboard/proto";
import type { MessagingContext } from "../context.js";
import { spellChannels } from "../validation.js";
import { templateColumns, templateFrom, toTemplate, type TemplateRow } from "./rows.js";
import { checkTemplateContent, checkTemplateName, type TemplateInput } from "./template-input.js";

/** CreateTemplate: the template and its version 1, approved and signed, in one transaction. */
export async function createTemplate(
  ctx: MessagingContext,
  sent: messaging.CreateTemplateRequest,
  idempotencyKey: string | undefined,
): Promise<messaging.Template> {
  const request = { ...sent, channels: spellChannels(sent.channels) };
  const errors = requireAccount(request.accountId);
  checkTemplateName(request.name, errors);
  const input = checkTemplateContent(request.channels, request.body, errors);
  checkIdempotencyKey(idempotencyKey);
  const fingerprint = requestFingerprint("create-template", request);
  const signed = await ctx.signer.sign({ name: request.name, version: 1, ...input });
  try {
    return await withTransaction(ctx.pool, async (client) => {
      const replay = await replayByKey(client, {
        scope: "messaging:tpl",
        accountId: request.accountId,
        key: idempotencyKey,
        fingerprint,
        find: async () =>
          (
            await client.query<TemplateRow>(
              `SELECT ${templateColumns}, t.request_fingerprint FROM ${templateFrom}
                WHERE t.account_id = $1 AND t.idempotency_key = $2 AND v.version = 1`,
              [request.accountId, idempotencyKey],
            )
          ).rows[0],
        toResource: toTemplate,
      });
      if (replay) return replay;
      const id = newId("tpl");
      await client.query(
        `INSERT INTO messaging.templates (id, account_id, name, latest_version, idempotency_key, request_fingerprint)
         VALUES ($1, $2, $3, 1, $4, $5)`,
        [id, request.accountId, request.name, idempotencyKey ?? null, fingerprint],
      );
      return insertVersion(ctx, client, id, request.accountId, request.name, 1, input, signed);
    });
  } catch (error) {
    if (isUniqueViolation(error, "templates_account_id_name_key")) {
      throw new DomainError("conflict", `a template named "${request.name}" already exists`, {
        errors: [{ pointer: "#/name", detail: "is already the name of another template" }],
      });
    }
    throw error;
  }
}

/** CreateTemplateVersion: a new immutable version (channels default to the previous ones). */
export async function createTemplateVersion(
  ctx: MessagingContext,
  sent: messaging.CreateTemplateVersionRequest,
  idempotencyKey: string | undefined,
): Promise<messaging.Template> {
  const request = { ...sent, channels: spellChannels(sent.channels) };
  const errors = requireAccount(request.accountId);
  errors.throwIfAny();
  checkIdempotencyKey(idempotencyKey);
  const fingerprint = requestFingerprint("create-template-version", request);
  return withTransaction(ctx.pool, async (client) => {
    const replay = await replayByKey(client, {
      scope: "messaging:tpv",
      accountId: request.accountId,
      key: idempotencyKey,
      fingerprint,
      find: async () =>
        (
          await client.query<TemplateRow>(
            `SELECT ${templateColumns}, v.request_fingerprint FROM ${templateFrom}
              WHERE v.account_id = $1 AND v.idempotency_key = $2`,
            [request.accountId, idempotencyKey],
          )
        ).rows[0],
      toResource: toTemplate,
    });
    if (replay) return replay;
    const current = await client.query<{
      name: string;
      latest_version: number;
      channels: string[];
    }>(
      `SELECT t.name, t.latest_version, v.channels FROM ${templateFrom}
        WHERE t.id = $1 AND t.account_id = $2 AND v.version = t.latest_version
        FOR UPDATE OF t`,
      [request.templateId, request.accountId],
    );
    const template = current.rows[0];
    if (!template) throw notFound("the template");
    const channels = request.channels.length > 0 ? request.channels : template.channels;
    const input = checkTemplateContent(channels, request.body, new FieldErrors());
    const version = template.latest_version + 1;
    const signed = await ctx.signer.sign({ name: template.name, version, ...input });
    await client.query(
      `UPDATE messaging.templates SET latest_version = $2, updated_at = now() WHERE id = $1`,
      [request.templateId, version],
    );
    return insertVersion(
      ctx,
      client,
      request.templateId,
      request.accountId,
      template.name,
      version,
      input,
      signed,
      {
        key: idempotencyKey,
        fingerprint,
      },
    );
  });
}

async function insertVersion(
  ctx: MessagingContext,
  client: PoolClient,
  templateId: string,
  accountId: string,
  name: string,
  version: number,
  input: TemplateInput,
  signed: { contentSha256: string; signature: string; kid: string },
  idempotency?: { key: string | undefined; fingerprint: string },
): Promise<messaging.Template> {
  await client.query(
    `INSERT INTO messaging.template_versions
       (template_id, version, account_id, name, channels, body, variables, status,
        content_sha256, signature, kid, idempotency_key, request_fingerprint)
     VALUES ($1, $2, $3, $4, $5, $6, $7, 'approved', $8, $9, $10, $11, $12)`,
    [
      templateId,
      version,
      accountId,
      name,
      input.channels,
      input.body,
      input.variables,
      signed.contentSha256,
      signed.signature,
      signed.kid,
      idempotency?.key ?? null,
      idempotency?.fingerprint ?? null,
    ],
  );
  const { rows } = await client.query<TemplateRow>(
    `SELECT ${templateColumns} FROM ${templateFrom} WHERE t.id = $1 AND v.version = $2`,
    [templateId, version],
  );
  const row = rows[0] as TemplateRow;
  await ctx.outbox.append(client, {
    type: "template.approved",
    accountId,
    resourceId: templateId,
    data: { ...templateEventData(row) },
  });
  return toTemplate(row);
}

const templateEventData = (row: TemplateRow) => ({
  id: row.id,
  name: row.name,
  version: row.version,
  channels: row.channels,
  status: row.status,
  content_sha256: row.content_sha256,
  kid: row.kid,
  approved_at: row.approved_at.toISOString(),
});

/** GetTemplate: the latest version, or the one asked for. */
export async function getTemplate(
  ctx: MessagingContext,
  request: messaging.GetTemplateRequest,
): Promise<messaging.Template> {
  requireAccount(request.accountId).throwIfAny();
  const version = request.version;
  const { rows } = await ctx.pool.query<TemplateRow>(
    `SELECT ${templateColumns} FROM ${templateFrom}
      WHERE t.id = $1 AND t.account_id = $2 AND v.version = ${version === undefined ? "t.latest_version" : "$3"}`,
    version === undefined
      ? [request.templateId, request.accountId]
      : [request.templateId, request.accountId, version],
  );
  if (!rows[0])
    throw notFound(version === undefined ? "the template" : `version ${version} of the template`);
  return toTemplate(rows[0]);
}

/** ListTemplates: the account's templates at their latest version, newest template first. */
export async function listTemplates(
  ctx: MessagingContext,
  request: messaging.ListTemplatesRequest,
): Promise<messaging.ListTemplatesResponse> {
  requireAccount(request.accountId).throwIfAny();
  const limit = pageLimit(request.limit);
  const binding = `templates:${request.accountId}`;
  const after = cursorId(request.cursor, binding);
  const { rows } = await ctx.pool.query<TemplateRow>(
    `SELECT ${templateColumns} FROM ${templateFrom}
      WHERE t.account_id = $1 AND v.version = t.latest_version ${after ? "AND t.id < $3" : ""}
      ORDER BY t.id DESC LIMIT $2`,
    after ? [request.accountId, limit + 1, after] : [request.accountId, limit + 1],
  );
  const page = idPage(rows, limit, binding, toTemplate);
  return { templates: page.items, nextCursor: page.nextCursor, hasMore: page.hasMore };
}
