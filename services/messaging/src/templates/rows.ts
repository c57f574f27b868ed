import { wire, type messaging } from "@switchboard/proto";
import type { StoredTemplateVersion } from "./signature.js";

/** A template version joined with its template. */
export interface TemplateRow {
  id: string;
  account_id: string;
  name: string;
  version: number;
  latest_version: number;
  channels: wire.ChannelValue[];
  body: string;
  variables: string[];
  status: wire.TemplateStatusValue;
  content_sha256: string;
  signature: string;
  kid: string;
  created_at: Date;
  approved_at: Date;
  request_fingerprint: string | null;
}

export const templateColumns = `t.id, t.account_id, v.name, v.version, t.latest_version, v.channels,
  v.body, v.variables, v.status, v.content_sha256, v.signature, v.kid, t.created_at, v.approved_at`;

export const templateFrom = `messaging.templates t
  JOIN messaging.template_versions v ON v.template_id = t.id`;

export const toTemplate = (row: TemplateRow): messaging.Template => ({
  id: row.id,
  name: row.name,
  version: row.version,
  latestVersion: row.latest_version,
  channels: row.channels.map(wire.channel.of),
  body: row.body,
  variables: row.variables,
  status: wire.templateStatus.of(row.status),
  contentSha256: row.content_sha256,
  signature: row.signature,
  kid: row.kid,
  createdAt: row.created_at.toISOString(),
  approvedAt: row.approved_at.toISOString(),
});

export const storedVersion = (row: TemplateRow): StoredTemplateVersion => ({
  templateId: row.id,
  name: row.name,
  version: row.version,
  channels: row.channels,
  body: row.body,
  contentSha256: row.content_sha256,
  signature: row.signature,
  kid: row.kid,
});
