import { readFileSync } from "node:fs";
import express, { type Request, type Response } from "express";

/** Where `npm run build` puts Redoc's standalone bundle (scripts/copy-docs-assets.mjs). */
const bundleUrl = new URL("../../dist/docs/redoc.standalone.js", import.meta.url);

const page = (title: string) => `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>${title}</title>
    <link rel="icon" href="data:," />
    <style>body { margin: 0; }</style>
  </head>
  <body>
    <redoc spec-url="/v1/openapi.json" hide-download-button="false"></redoc>
    <script src="/docs/redoc.standalone.js"></script>
  </body>
</html>
`;

/**
 * What the page may load (docs/security.md): its own script (Redoc's bundle) and the document
 * from this origin, the style elements Redoc injects (styled-components), data: images, and
 * Redoc's search worker (a blob: URL); nothing else, no framing, no forms, no <base>.
 */
export const docsContentSecurityPolicy = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "worker-src blob:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

/** The headers of both responses: no MIME sniffing; the page is never framed (old browsers too). */
const protect = (res: Response) =>
  res.set({
    "Content-Security-Policy": docsContentSecurityPolicy,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
  });

/**
 * `GET /docs`: the API reference, the OpenAPI document served at /v1/openapi.json rendered by
 * Redoc, served from the gateway itself (no CDN). The problem catalogue is in the document, and
 * each kind is also at /v1/errors/<kind>.
 */
export function docsPage(options: {
  title: string;
  /** Middleware before the pages (the rate limit). */
  before?: express.RequestHandler[];
}): express.Router {
  const router = express.Router();
  for (const middleware of options.before ?? []) router.use("/docs", middleware);
  let bundle: Buffer | undefined;
  const html = page(options.title);
  router.get("/docs", (_req: Request, res: Response) => {
    protect(res).set("Cache-Control", "no-cache").type("text/html").send(html);
  });
  router.get("/docs/redoc.standalone.js", (_req: Request, res: Response) => {
    bundle ??= readFileSync(bundleUrl);
    protect(res)
      .set("Cache-Control", "public, max-age=86400")
      .type("application/javascript")
      .send(bundle);
  });
  return router;
}
