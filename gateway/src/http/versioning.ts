import type { NextFunction, Request, Response } from "express";
import { DomainError } from "@switchboard/kit";
import { SUPPORTED_VERSIONS } from "./request-context.js";

const versionSegment = /^\/(v\d+)(?=\/|$)/;

/**
 * `/v1/...` is canonical and `/...` is served by v1: the version segment is stripped before
 * routing. Any other version is 404 unsupported-version.
 */
export function versioning(req: Request, _res: Response, next: NextFunction): void {
  const match = versionSegment.exec(req.path);
  if (match) {
    const version = match[1] as string;
    if (!(SUPPORTED_VERSIONS as readonly string[]).includes(version)) {
      next(
        new DomainError(
          "unsupported-version",
          `API version ${version} is not supported; supported versions: ${SUPPORTED_VERSIONS.join(", ")}`,
          { extensions: { supported_versions: [...SUPPORTED_VERSIONS] } },
        ),
      );
      return;
    }
    req.url = req.url.slice(match[0].length) || "/";
  }
  req.versionlessPath = req.path;
  next();
}
