import { Gauge } from "prom-client";
import type pg from "pg";
import { metricsRegistry } from "./registry.js";

/** Live pools by name; an ended pool leaves at the next scrape. */
const pools = new Map<pg.Pool, string>();

const live = (): [pg.Pool, string][] => {
  for (const pool of pools.keys()) if (pool.ending || pool.ended) pools.delete(pool);
  return [...pools];
};

new Gauge({
  name: "db_pool_connections",
  help: "PostgreSQL pool connections: total open, idle, and callers waiting for one (saturation)",
  labelNames: ["pool", "state"] as const,
  registers: [metricsRegistry],
  collect() {
    this.reset();
    for (const [pool, name] of live()) {
      this.inc({ pool: name, state: "total" }, pool.totalCount);
      this.inc({ pool: name, state: "idle" }, pool.idleCount);
      this.inc({ pool: name, state: "waiting" }, pool.waitingCount);
    }
  },
});

new Gauge({
  name: "db_pool_max",
  help: "The most connections a PostgreSQL pool opens",
  labelNames: ["pool"] as const,
  registers: [metricsRegistry],
  collect() {
    this.reset();
    for (const [pool, name] of live()) this.inc({ pool: name }, pool.options.max ?? 10);
  },
});

/** Reports a pool's connections under `name` until it ends (pools of one name add up). */
export function trackPool(pool: pg.Pool, name: string): void {
  pools.set(pool, name);
}
