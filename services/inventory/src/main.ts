import { runComponent } from "@switchboard/kit";
import { inventoryComponent } from "./component.js";

/** Its own process: `node services/inventory/dist/main.js`. */
await runComponent(inventoryComponent);
