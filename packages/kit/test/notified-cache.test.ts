import { afterEach, describe, expect, it, vi } from "vitest";
import { NotifiedCache, type NotifiedCacheOptions } from "../src/notified-cache.js";

interface Owner {
  accountId: string | undefined;
  number: string;
}

/** A cache whose reads are counted and answer what `current` holds. */
function counted(options: NotifiedCacheOptions<Owner> = {}) {
  const state = { reads: 0, current: { accountId: "acct_a", number: "+15550100" } as Owner };
  const cache = new NotifiedCache<Owner>(options);
  const get = (key = "+15550100") =>
    cache.get(key, async () => {
      state.reads += 1;
      return state.current;
    });
  return { state, cache, get };
}

describe("NotifiedCache", () => {
  afterEach(() => vi.useRealTimers());

  it("reads every time until the source says it is listening", async () => {
    const { state, cache, get } = counted();
    await get();
    await get();
    expect(state.reads).toBe(2);
    cache.listening();
    await get();
    await get();
    expect(state.reads).toBe(3);
  });

  it("forgets what a change names, everything for a change that names nothing, and everything when lost", async () => {
    const { state, cache, get } = counted();
    cache.listening();
    await get();
    await get("+15550101");
    state.current = { accountId: "acct_b", number: "+15550100" };
    cache.changed("+15550100");
    expect((await get()).accountId).toBe("acct_b");
    await get("+15550101");
    expect(state.reads).toBe(3);
    cache.changed();
    await get("+15550101");
    expect(state.reads).toBe(4);
    cache.lost();
    await get();
    await get();
    expect(state.reads).toBe(6);
  });

  it("forgets a value by another name namesOf gives it (a number kept by its id, changed by its E.164)", async () => {
    const { state, cache, get } = counted({ namesOf: (owner) => [owner.number] });
    cache.listening();
    await get("acct_a num_1");
    await get("acct_a num_1");
    expect(state.reads).toBe(1);
    cache.changed("+15550100");
    await get("acct_a num_1");
    expect(state.reads).toBe(2);
  });

  it("keeps only what keep allows", async () => {
    const { state, cache, get } = counted({ keep: (owner) => owner.accountId !== undefined });
    cache.listening();
    state.current = { accountId: undefined, number: "+15550100" };
    await get();
    await get();
    expect(state.reads).toBe(2);
  });

  it("lets the oldest entry go when full", async () => {
    const { state, cache, get } = counted({ maxEntries: 2 });
    cache.listening();
    await get("a");
    await get("b");
    await get("c");
    await get("b");
    await get("c");
    expect(state.reads).toBe(3);
    await get("a");
    expect(state.reads).toBe(4);
  });

  it("does not keep a read that a change overtook", async () => {
    let answer!: (value: Owner) => void;
    let reads = 0;
    const cache = new NotifiedCache<Owner>();
    const get = () =>
      cache.get("+15550100", () => {
        reads += 1;
        return new Promise<Owner>((resolve) => (answer = resolve));
      });
    cache.listening();
    const pending = get();
    cache.changed("+15550100");
    answer({ accountId: "acct_old", number: "+15550100" });
    await pending;
    const again = get();
    answer({ accountId: "acct_new", number: "+15550100" });
    expect((await again).accountId).toBe("acct_new");
    expect(reads).toBe(2);
  });

  it("stops trusting a source silent for longer than silenceMs, and trusts it again when it speaks", async () => {
    vi.useFakeTimers();
    const { state, cache, get } = counted({ silenceMs: 3_000 });
    cache.listening();
    await get();
    vi.advanceTimersByTime(3_001);
    await get();
    await get();
    expect(state.reads).toBe(3);
    cache.listening();
    await get();
    await get();
    expect(state.reads).toBe(4);
  });
});
