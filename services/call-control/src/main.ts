import { runComponent } from "@switchboard/kit";
import { callControlComponent } from "./component.js";

/** Its own process: `node services/call-control/dist/main.js`. */
await runComponent(callControlComponent);
