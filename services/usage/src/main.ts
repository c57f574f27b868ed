import { runComponent } from "@switchboard/kit";
import { usageComponent } from "./component.js";

/** Its own process: `node services/usage/dist/main.js`. */
await runComponent(usageComponent);
