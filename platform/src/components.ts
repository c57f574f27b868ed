import { callControlComponent } from "@switchboard/call-control";
import { inventoryComponent } from "@switchboard/inventory";
import type { ComponentDeclaration } from "@switchboard/kit";
import { messagingComponent } from "@switchboard/messaging";
import { usageComponent } from "@switchboard/usage";
import { webhookComponent } from "@switchboard/webhook";

/**
 * Every backend service, in start order (a service starts after those it needs). The one list:
 * the embedded platform, the mesh supervisor, the gateway's addresses and the chart checks
 * derive from it.
 */
export const serviceComponents = [
  inventoryComponent,
  usageComponent,
  callControlComponent,
  messagingComponent,
  webhookComponent,
] as const satisfies readonly ComponentDeclaration[];
