export { migrateInventory, migrationsDir } from "./migrations.js";
export { createInventoryService, type InventoryServiceOptions } from "./service.js";
export { startInventory, type InventoryOptions, type RunningInventory } from "./server.js";
export { seedInventory, inventoryCount, insertNumbers, importNumbers } from "./seed.js";
export { parseNumberCsv } from "./number-csv.js";
export { generateNumbers, type GeneratedNumber } from "./generator.js";
export { sweepExpiredHolds, startSweeper, type Sweeper } from "./sweeper.js";
export { defaultHoldLimit, defaultHoldTtlSeconds } from "./holds.js";
export { inventoryComponent } from "./component.js";
