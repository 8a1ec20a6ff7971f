/**
 * Hiss outside speech: a fricative start (/s/, /f/, /ʃ/) is noise-like, and Silero voices nothing
 * until the vowel after it, 100–160 ms later. "Stop please" would pause a reply that late. A frame
 * loud against the room, crossing zero often (energy high in the band) and with no period (not a
 * beep or a whistle) is hiss; two in a row open a possible onset (speech-onset.ts), which the
 * vowel's first voiced frame keeps.
 *
 * Hiss that goes on or comes and goes (a fan, rustling, crackle) is not a fricative: a run reports
 * only within its first RUN_END frames and while its hiss lasts, and the detector then rests until
 * REARM frames without hiss. So such a sound pauses a reply once, for at most 220 ms.
 */

/** Quieter than this is never hiss, whatever the room (dBFS). */
const MIN_LEVEL_DBFS = -50;
/** Above the room's floor by this much (dB). */
const OVER_FLOOR_DB = 15;
/** The room's floor follows a louder room this slowly (dB a frame: 5 dB a second). */
const FLOOR_RISE_DB = 0.1;
/** Digital silence (a muted track) says nothing of the room: the floor ignores it. */
const ROOM_MIN_DBFS = -80;
/** Zero crossings per sample: /s/ and /ʃ/ measure 0.45–0.65, vowels under 0.2, coughs 0.16–0.30. */
const MIN_CROSSINGS = 0.35;
/** Normalised autocorrelation at any lag of 2–64 samples above this is a tone, not hiss. */
const MAX_PERIODICITY = 0.7;
const MAX_LAG = 64;
/**
 * Frames from a run's first hiss frame within which it may report (8: 160 ms, a long fricative);
 * two frames in a row without hiss end it sooner.
 */
const RUN_END = 8;
/** Frames in a row without hiss after which a run that ended may be followed by another (500 ms). */
const REARM = 25;

export class UnvoicedOnset {
  private floorDb: number | undefined;
  /** Frames since the open run's first hiss frame. */
  private age: number | undefined;
  private armed = true;
  private quiet = 0;

  /** Whether this frame is part of a hiss run that may be a fricative start. */
  push(frame: Int16Array): boolean {
    if (frame.length === 0) return false;
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
    // A resting detector reports nothing, so it need not tell hiss from a tone.
    const hiss = loud && crossings / frame.length >= MIN_CROSSINGS && (!this.armed || periodicity(frame, energy) <= MAX_PERIODICITY);
    this.learnFloor(level, hiss);
    this.quiet = hiss ? 0 : this.quiet + 1;
    if (!this.armed) {
      this.armed = this.quiet >= REARM;
      return false;
    }
    if (this.age === undefined) {
      if (hiss) this.age = 0;
      return false;
    }
    this.age += 1;
    if (this.age === 1 && !hiss) {
      this.age = undefined;
      return false;
    }
    // A fricative is one stretch of hiss; a second stretch would open a second pause.
    if (this.age >= RUN_END || this.quiet >= 2) {
      this.age = undefined;
      this.armed = false;
      return false;
    }
    return hiss;
  }

  /** A segment opened: what came before it is done with (the room's floor stays). */
  reset(): void {
    this.age = undefined;
    this.armed = true;
    this.quiet = 0;
  }

  /** The floor learns from the room, not from hiss it is judging; hiss past its run is the room now. */
  private learnFloor(level: number, hiss: boolean): void {
    if (level < ROOM_MIN_DBFS || (hiss && this.armed)) return;
    const floor = this.floorDb;
    this.floorDb = floor === undefined || level < floor || hiss ? level : floor + FLOOR_RISE_DB;
  }
}

/** The highest normalised autocorrelation over short lags: near 1 for a tone, low for noise. */
function periodicity(frame: Int16Array, energy: number): number {
  let best = 0;
  for (let lag = 2; lag <= MAX_LAG && lag < frame.length && best <= MAX_PERIODICITY; lag += 1) {
    let sum = 0;
    for (let i = lag; i < frame.length; i += 1) sum += frame[i]! * frame[i - lag]!;
    if (sum / energy > best) best = sum / energy;
  }
  return best;
}
