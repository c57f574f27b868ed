import { runComponent } from "@switchboard/kit";
import { webhookComponent } from "./component.js";

/** Its own process: `node services/webhook/dist/main.js`. */
await runComponent(webhookComponent);
