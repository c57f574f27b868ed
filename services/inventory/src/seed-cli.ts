import { parseArgs } from "node:util";
import { createPool } from "@switchboard/kit";
import { migrateInventory } from "./migrations.js";
import { inventoryCount, seedInventory } from "./seed.js";

/** `npm run seed -- --count N [--seed S]`: migrates DATABASE_URL, then seeds N numbers. */
const { values } = parseArgs({
  options: {
    count: { type: "string", default: "10000" },
    seed: { type: "string", default: "1" },
  },
});
const count = Number(values.count);
if (!Number.isInteger(count) || count < 1 || count > 5_000_000) {
  console.error("--count must be an integer from 1 to 5000000");
  process.exit(2);
}
const url = process.env.DATABASE_URL;
if (!url) {
  console.error("DATABASE_URL is required");
  process.exit(2);
}
const pool = createPool(url, { name: "inventory-seed", max: 2 });
try {
  await migrateInventory(pool);
  const started = performance.now();
  let reported = 0;
  const inserted = await seedInventory(pool, {
    count,
    seed: values.seed,
    onProgress: (n) => {
      if (n - reported >= 100_000) {
        reported = n;
        console.log(`  ${n} inserted…`);
      }
    },
  });
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  console.log(
    `seeded ${inserted} new numbers in ${seconds} s; the inventory holds ${await inventoryCount(pool)}`,
  );
} finally {
  await pool.end();
}
