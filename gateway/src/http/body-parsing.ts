import express, { type NextFunction, type Request, type Response } from "express";
import { DomainError } from "@switchboard/kit";
import type { RouteSpec } from "./route-spec.js";
import { checkBodyText } from "./text-safety.js";

export const MAX_JSON_BODY = "64kb";

const jsonParser = express.json({ limit: MAX_JSON_BODY, type: () => true, strict: false });
const formParser = express.urlencoded({ limit: MAX_JSON_BODY, extended: false, type: () => true });

const hasBody = (req: Request): boolean =>
  req.headers["transfer-encoding"] !== undefined ||
  (req.headers["content-length"] !== undefined && req.headers["content-length"] !== "0");

/** Maps body-parser failures to their problem kinds (400 malformed, 413 too large). */
function parserErrors(error: unknown): DomainError {
  const type = (error as { type?: string }).type;
  if (type === "entity.too.large") {
    return new DomainError("payload-too-large", `request bodies are limited to ${MAX_JSON_BODY}`);
  }
  if (type === "encoding.unsupported" || type === "charset.unsupported") {
    return new DomainError(
      "unsupported-media-type",
      "the body's encoding or charset is not supported",
    );
  }
  return new DomainError("malformed-request", "the request body is not valid JSON");
}

/**
 * Parses the body of a route in the media type its row declares. A body in another media type
 * is 415; a route without a body ignores one.
 */
export function bodyParser(route: RouteSpec) {
  const mediaType = route.bodyMediaType ?? "application/json";
  const parse = mediaType === "application/json" ? jsonParser : formParser;
  return (req: Request, res: Response, next: NextFunction): void => {
    if (!route.body || !hasBody(req)) {
      req.body = undefined;
      next();
      return;
    }
    if (!req.is(mediaType)) {
      if (route.handlerValidatesBody) {
        req.body = undefined;
        next();
        return;
      }
      next(new DomainError("unsupported-media-type", `the request body must be ${mediaType}`));
      return;
    }
    parse(req, res, (error?: unknown) => {
      if (error) return next(parserErrors(error));
      try {
        // A handler answering for its own body (OAuth's RFC 6749 errors) checks its text too.
        if (!route.handlerValidatesBody) checkBodyText(req.body);
      } catch (refusal) {
        return next(refusal);
      }
      next();
    });
  };
}
