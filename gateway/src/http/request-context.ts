import type { NextFunction, Request, Response } from "express";
import { newId } from "@switchboard/kit";

export const API_VERSION = "v1";
export const SUPPORTED_VERSIONS = [API_VERSION] as const;

declare module "express-serve-static-core" {
  interface Request {
    requestId: string;
    startedAt: bigint;
    /** The path without its version segment (`/api/numbers/search`). */
    versionlessPath: string;
  }
}

/** Every reply carries X-Request-Id and API-Version; a request id is minted here, never taken from the client. */
export function requestContext(req: Request, res: Response, next: NextFunction): void {
  req.requestId = newId("req");
  req.startedAt = process.hrtime.bigint();
  res.setHeader("X-Request-Id", req.requestId);
  res.setHeader("API-Version", API_VERSION);
  next();
}
