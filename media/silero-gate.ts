/**
 * Silero's quiet gate: the network is not run on a window that cannot be speech, and the window
 * is decided "no speech" at once. A window is quiet when no sample of it (its context included)
 * exceeds QUIET_PEAK. That alone is not enough: Silero's recurrent state carries speech into the
 * silence after it (a window of digital zeros right after a word scored 0.95 in the turn-taking
 * corpus), so the gate only skips while the network's last answer was "no speech" and after it
 * has itself seen QUIET_HANGOVER quiet windows in a row. While it skips, the state is carried as
 * the last run window left it (measured against resetting it: bench/results-voice-adapter.md,
 * "Silero's quiet gate").
 */

/**
 * −54 dBFS peak. Over the turn-taking corpus and the audio fixtures (85,823 windows), no window
 * with a peak this low that the gate would skip scored above 0.22; the room tone of the tests and
 * benches peaks at 30 and sox's near-silent fixture at 49.
 */
export const QUIET_PEAK = 64;

/** Quiet windows in a row the network still runs before the gate skips (512 ms: shorter pauses are decided as without the gate). */
export const QUIET_HANGOVER = 16;

/** Whether every sample of the window (context included) is within ±QUIET_PEAK. */
export function quietWindow(window: Int16Array): boolean {
  for (let i = 0; i < window.length; i += 1) {
    const s = window[i]!;
    if (s > QUIET_PEAK || s < -QUIET_PEAK) return false;
  }
  return true;
}

/** One detector's count of quiet windows in a row, in the order its windows are decided. */
export class QuietGate {
  private quietRun = 0;

  /** The next window in order: true when it is decided "no speech" without the network. */
  skips(quiet: boolean, speaking: boolean): boolean {
    if (!quiet) {
      this.quietRun = 0;
      return false;
    }
    this.quietRun += 1;
    return !speaking && this.quietRun > QUIET_HANGOVER;
  }

  /** Windows were dropped unseen (the fallback took them): the count starts again. */
  restart(): void {
    this.quietRun = 0;
  }
}
