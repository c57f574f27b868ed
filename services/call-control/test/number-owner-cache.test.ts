import { afterEach, describe, expect, it, vi } from "vitest";
import { NumberOwnerCache, type NumberOwner } from "../src/number-owner-cache.js";

const owner = (accountId: string): NumberOwner => ({
  accountId,
  number: { id: "num_1", number: "+15550100", seatId: undefined },
});

/** A cache over a read that counts its calls and answers what `current` holds. */
function counted(silenceMs = 3_000) {
  const state = { reads: 0, current: owner("acct_a") };
  const cache = new NumberOwnerCache(
    async () => {
      state.reads += 1;
      return state.current;
    },
    { silenceMs },
  );
  return { state, cache };
}

describe("NumberOwnerCache", () => {
  afterEach(() => vi.useRealTimers());

  it("reads every time until the watch says it is listening", async () => {
    const { state, cache } = counted();
    await cache.lookup("+15550100");
    await cache.lookup("+15550100");
    expect(state.reads).toBe(2);
    cache.listening();
    await cache.lookup("+15550100");
    await cache.lookup("+15550100");
    expect(state.reads).toBe(3);
  });

  it("forgets a changed number, and everything when the watch is lost", async () => {
    const { state, cache } = counted();
    cache.listening();
    await cache.lookup("+15550100");
    state.current = owner("acct_b");
    cache.changed("+15550100");
    expect((await cache.lookup("+15550100")).accountId).toBe("acct_b");
    cache.lost();
    await cache.lookup("+15550100");
    await cache.lookup("+15550100");
    expect(state.reads).toBe(4);
  });

  it("does not keep a read that a change overtook", async () => {
    let answer!: (value: NumberOwner) => void;
    let reads = 0;
    const cache = new NumberOwnerCache(
      () => {
        reads += 1;
        return new Promise<NumberOwner>((resolve) => (answer = resolve));
      },
      { silenceMs: 3_000 },
    );
    cache.listening();
    const pending = cache.lookup("+15550100");
    cache.changed("+15550100");
    answer(owner("acct_old"));
    await pending;
    const again = cache.lookup("+15550100");
    answer(owner("acct_new"));
    expect((await again).accountId).toBe("acct_new");
    expect(reads).toBe(2);
  });

  it("stops trusting a watch silent for longer than silenceMs, and trusts it again when it speaks", async () => {
    vi.useFakeTimers();
    const { state, cache } = counted(3_000);
    cache.listening();
    await cache.lookup("+15550100");
    vi.advanceTimersByTime(3_001);
    await cache.lookup("+15550100");
    await cache.lookup("+15550100");
    expect(state.reads).toBe(3);
    cache.listening();
    await cache.lookup("+15550100");
    await cache.lookup("+15550100");
    expect(state.reads).toBe(4);
  });
});
