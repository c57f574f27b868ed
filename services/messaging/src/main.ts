import { runComponent } from "@switchboard/kit";
import { messagingComponent } from "./component.js";

/** Its own process: `node services/messaging/dist/main.js`. */
await runComponent(messagingComponent);
