/** The timer of a runner woken for work that falls due at known times (createWakeTimer). */
export interface WakeTimer {
  /** Runs the loop at `atMs`, unless it is already set to run sooner. */
  armAt(atMs: number): void;
  /** No more runs; resolves once the one in flight ended. */
  stop(): Promise<void>;
}

/**
 * Runs `loop` at the earliest time asked of it (armAt), one run at a time. A time that comes
 * while a run is in flight is not lost: the run's `again()` then answers true (once), so it goes
 * round once more before it asks for its next time itself.
 */
export function createWakeTimer(loop: (again: () => boolean) => Promise<void>): WakeTimer {
  let timer: NodeJS.Timeout | undefined;
  let timerAt = Infinity;
  let running: Promise<void> | undefined;
  let missed = false;
  let stopped = false;

  const again = () => {
    const was = missed;
    missed = false;
    return was && !stopped;
  };
  const fire = () => {
    timer = undefined;
    timerAt = Infinity;
    if (stopped) return;
    if (running) {
      missed = true;
      return;
    }
    running = loop(again).finally(() => {
      running = undefined;
    });
  };

  return {
    armAt(atMs) {
      if (stopped || atMs >= timerAt) return;
      if (timer) clearTimeout(timer);
      timerAt = atMs;
      timer = setTimeout(fire, Math.max(0, atMs - Date.now()));
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = undefined;
      await running;
    },
  };
}
