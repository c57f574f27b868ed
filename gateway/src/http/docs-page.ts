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
    res.set("Cache-Control", "no-cache").type("text/html").send(html);
  });
  router.get("/docs/redoc.standalone.js", (_req: Request, res: Response) => {
    bundle ??= readFileSync(bundleUrl);
    res.set("Cache-Control", "public, max-age=86400").type("application/javascript").send(bundle);
  });
  return router;
}
