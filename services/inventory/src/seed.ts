import { newId, withTransaction, type Pool, type Queryable } from "@switchboard/kit";
import { generateNumbers, type GeneratedNumber } from "./generator.js";
import { digitRuns } from "./runs.js";

const numberColumns = `(id, e164, calling_code, national, country, region, locality, area_code, type,
   capabilities, max_run, digit_runs)
SELECT id, e164, calling_code, national, country, region, locality, area_code, type,
       capabilities, max_run, digit_runs::smallint[]
  FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
              $8::text[], $9::text[], $10::smallint[], $11::smallint[], $12::text[])
    AS t(id, e164, calling_code, national, country, region, locality, area_code, type,
         capabilities, max_run, digit_runs)`;

const insertBatch = `INSERT INTO inventory.numbers ${numberColumns}
ON CONFLICT (calling_code, national) DO NOTHING`;

/**
 * Numbers in, existing ones (by E.164) updated where their capabilities, region or locality
 * differ; their state (holds, assignment) is never touched. Each returned row says whether it
 * was new.
 */
const upsertBatch = `INSERT INTO inventory.numbers AS n ${numberColumns}
ON CONFLICT (calling_code, national) DO UPDATE
   SET capabilities = excluded.capabilities, region = excluded.region,
       locality = excluded.locality
 WHERE (n.capabilities, n.region, n.locality)
       IS DISTINCT FROM (excluded.capabilities, excluded.region, excluded.locality)
RETURNING (xmax = 0) AS inserted`;

/** The twelve parallel arrays `numberColumns` unnests. */
function columnsOf(numbers: readonly GeneratedNumber[]): unknown[][] {
  const columns: unknown[][] = Array.from({ length: 12 }, () => []);
  for (const n of numbers) {
    const runs = digitRuns(n.national);
    const values = [
      newId("num"),
      n.e164,
      n.callingCode,
      n.national,
      n.country,
      n.region,
      n.locality,
      n.areaCode,
      n.type,
      n.capabilities,
      runs.maxRun,
      `{${runs.byDigit.join(",")}}`,
    ];
    values.forEach((value, i) => columns[i]!.push(value));
  }
  return columns;
}

/** Inserts numbers in multi-row batches; returns how many were new (existing ones are kept). */
export async function insertNumbers(
  pool: Queryable,
  numbers: readonly GeneratedNumber[],
): Promise<number> {
  const result = await pool.query(insertBatch, columnsOf(numbers));
  return result.rowCount ?? 0;
}

/** Inserts new numbers and updates changed ones (see `upsertBatch`); counts each outcome. */
export async function upsertNumbers(
  db: Queryable,
  numbers: readonly GeneratedNumber[],
): Promise<{ inserted: number; updated: number; unchanged: number }> {
  const { rows } = await db.query<{ inserted: boolean }>(upsertBatch, columnsOf(numbers));
  const inserted = rows.filter((row) => row.inserted).length;
  const updated = rows.length - inserted;
  return { inserted, updated, unchanged: numbers.length - rows.length };
}

/**
 * Seeds `count` generated numbers (deterministic from `seed`; seeding again with the same seed
 * adds nothing), then refreshes the planner statistics. Returns the number of rows inserted.
 */
export async function seedInventory(
  pool: Pool,
  options: {
    count: number;
    seed?: number | string;
    batchSize?: number;
    onProgress?: (inserted: number) => void;
  },
): Promise<number> {
  const batchSize = options.batchSize ?? 5_000;
  let inserted = 0;
  let batch: GeneratedNumber[] = [];
  for (const number of generateNumbers({ count: options.count, seed: options.seed ?? 1 })) {
    batch.push(number);
    if (batch.length === batchSize) {
      inserted += await insertNumbers(pool, batch);
      batch = [];
      options.onProgress?.(inserted);
    }
  }
  if (batch.length > 0) inserted += await insertNumbers(pool, batch);
  await pool.query("VACUUM (ANALYZE) inventory.numbers");
  return inserted;
}

/** How many numbers the inventory holds, in any state. */
export async function inventoryCount(pool: Pool): Promise<number> {
  const result = await pool.query<{ count: number }>(
    "SELECT count(*)::int AS count FROM inventory.numbers",
  );
  return result.rows[0]?.count ?? 0;
}

/**
 * Imports a carrier's numbers (number-csv.ts) in one transaction: all of them or, on any
 * error, none. Importing the same list again changes nothing.
 */
export async function importNumbers(
  pool: Pool,
  numbers: readonly GeneratedNumber[],
  batchSize = 5_000,
): Promise<{ inserted: number; updated: number; unchanged: number }> {
  const total = { inserted: 0, updated: 0, unchanged: 0 };
  await withTransaction(pool, async (client) => {
    for (let start = 0; start < numbers.length; start += batchSize) {
      const counts = await upsertNumbers(client, numbers.slice(start, start + batchSize));
      total.inserted += counts.inserted;
      total.updated += counts.updated;
      total.unchanged += counts.unchanged;
    }
  });
  await pool.query("ANALYZE inventory.numbers");
  return total;
}
