/**
 * Hiss outside speech: a fricative start (/s/, /f/, /ʃ/) is noise-like, and Silero voices nothing
 * until the vowel after it, 100–160 ms later. "Stop please" would pause a reply that late. A frame
 * loud against the room, crossing zero often (energy high in the band) and with no period (not a
 * beep or a whistle) is hiss; two in a row open a possible onset (speech-onset.ts), which the
 * vowel's first voiced frame keeps.
 *
 * Steady hiss (a fan, white noise) is not speech: a run reports only its first frames, and the
 * detector rearms once the run has been quiet for a while, so a noise costs one short pause.
 */

/** Quieter than this is never hiss, whatever the room (dBFS). */
const MIN_LEVEL_DBFS = -50;
/** Above the room's floor by this much (dB). */
const OVER_FLOOR_DB = 15;
/** The room's floor follows a louder room this slowly (dB a frame: 5 dB a second). */
const FLOOR_RISE_DB = 0.1;
/** Zero crossings per sample: /s/ and /ʃ/ measure 0.45–0.65, vowels under 0.2, coughs 0.16–0.30. */
const MIN_CROSSINGS = 0.35;
/** Normalised autocorrelation at any lag of 2–64 samples above this is a tone, not hiss. */
const MAX_PERIODICITY = 0.7;
const MAX_LAG = 64;
/** Hiss frames in a row before they count (a lone frame is a click or a crackle). */
const RUN_START = 2;
/** The run's last frame that still counts (8 frames: 160 ms, a long fricative). */
const RUN_END = 8;
/** Frames without hiss that end a run and rearm the detector. */
const REARM = 5;

export class UnvoicedOnset {
  private floorDb: number | undefined;
  private run = 0;
  private quiet = 0;

  /** Whether this frame is part of a hiss run that may be a fricative start. */
  push(frame: Int16Array): boolean {
    let energy = 0;
    let crossings = 0;
    for (let i = 0; i < frame.length; i += 1) {
      const v = frame[i]!;
      energy += v * v;
      if (i > 0 && v >= 0 !== frame[i - 1]! >= 0) crossings += 1;
    }
    const level = 10 * Math.log10(energy / frame.length / (32768 * 32768) + 1e-12);
    const floor = this.floorDb;
    const loud = level >= MIN_LEVEL_DBFS && (floor === undefined || level >= floor + OVER_FLOOR_DB);
    const hiss = loud && crossings / frame.length >= MIN_CROSSINGS && periodicity(frame, energy) <= MAX_PERIODICITY;
    // The floor learns from the room, not from the hiss it is judging, unless the hiss has become the room.
    if (!hiss || this.run >= RUN_END) this.floorDb = floor === undefined || level < floor ? level : floor + FLOOR_RISE_DB;
    if (!hiss) {
      this.quiet += 1;
      if (this.quiet >= REARM) this.run = 0;
      return false;
    }
    this.quiet = 0;
    this.run += 1;
    return this.run >= RUN_START && this.run <= RUN_END;
  }

  reset(): void {
    this.run = 0;
    this.quiet = 0;
  }
}

/** The highest normalised autocorrelation over short lags: near 1 for a tone, low for noise. */
function periodicity(frame: Int16Array, energy: number): number {
  let best = 0;
  for (let lag = 2; lag <= MAX_LAG && lag < frame.length; lag += 1) {
    let sum = 0;
    for (let i = lag; i < frame.length; i += 1) sum += frame[i]! * frame[i - lag]!;
    if (sum / energy > best) best = sum / energy;
  }
  return best;
}
