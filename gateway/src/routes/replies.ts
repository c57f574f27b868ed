import type { Request } from "express";
import type { Reply } from "../http/route-spec.js";

export const ok = (body: unknown): Reply => ({ status: 200, body });

export const accepted = (body: unknown): Reply => ({ status: 202, body });

export const created = (location: string, body: unknown): Reply => ({
  status: 201,
  body,
  headers: { Location: location },
});

/** `{data, next_cursor, has_more}` plus `Link: <…>; rel="next"` when there is a next page. */
export function pageReply(req: Request, data: unknown[], nextCursor: string): Reply {
  const hasMore = nextCursor !== "";
  const headers: Record<string, string> = {};
  if (hasMore) {
    const url = new URL(req.originalUrl, "http://placeholder");
    url.searchParams.set("cursor", nextCursor);
    headers.Link = `<${url.pathname}${url.search}>; rel="next"`;
  }
  return {
    status: 200,
    body: { data, next_cursor: hasMore ? nextCursor : null, has_more: hasMore },
    headers,
  };
}

export const noContent: Reply = { status: 204 };
