import { startInventory } from "@switchboard/inventory";
import type { ServiceComponent } from "./component.js";

/** Every backend service, in start order (a service may need the addresses of earlier ones). */
export const serviceComponents: ServiceComponent[] = [
  {
    name: "inventory",
    addressVariable: "INVENTORY_ADDR",
    start: ({ pool, bus, logger, host, port }) => startInventory({ pool, bus, port, host, logger }),
  },
];
