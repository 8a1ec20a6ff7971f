/**
 * Outside speech, the last frames' VAD decisions. A segment starts once `need` of the last
 * WINDOW frames are voiced. Before that, the first voiced frame is a possible onset: a reply
 * that pauses there stops two frames (40 ms) sooner than at the start, and the listener's buffer
 * (the pacer's lead) covers the pause when no start follows. The onset is dropped as soon as no
 * start can come while its frame is still in the window (at most three frames on).
 *
 * Hiss (unvoiced-onset.ts) opens an onset too, before any voiced frame: a fricative's vowel comes
 * up to a few frames after it, past a stop's closure ("stop"). The first voiced frame then stands
 * in for the onset's frame, with no second `onset`; hiss that stays unvoiced for HISS_GAP frames
 * after its last hiss frame is dropped.
 */
export type OnsetStep = 'onset' | 'start' | 'dropped' | undefined;

const WINDOW = 4;
/** Frames after the last hiss frame that may still bring the vowel (a stop's closure is 1–3). */
const HISS_GAP = 4;

export class OnsetWindow {
  private recent: boolean[] = [];
  private open = false;
  /** Frames since the open onset. */
  private age = 0;
  /** Frames since the last hiss frame of an open onset that no voiced frame has reached yet. */
  private sinceHiss: number | undefined;
  /** Voiced frames in the window when it started a segment. */
  voiced = 0;

  push(speech: boolean, need: number, hiss = false): OnsetStep {
    this.recent.push(speech);
    if (this.recent.length > WINDOW) this.recent.shift();
    // Counted in a loop: this runs for every frame of every session outside speech.
    let voiced = 0;
    for (const v of this.recent) if (v) voiced += 1;
    if (voiced >= need) {
      this.voiced = voiced;
      this.reset();
      return 'start';
    }
    if (this.sinceHiss !== undefined) return this.pushHiss(speech, hiss);
    if (!this.open) {
      this.open = speech;
      this.age = 0;
      if (speech) return 'onset';
      if (!hiss) return undefined;
      this.sinceHiss = 0;
      return 'onset';
    }
    this.age += 1;
    if (this.startPossible(need)) return undefined;
    this.open = false;
    return 'dropped';
  }

  /** An onset opened by hiss: the first voiced frame carries it on, a long gap drops it. */
  private pushHiss(speech: boolean, hiss: boolean): OnsetStep {
    if (speech) {
      this.sinceHiss = undefined;
      this.open = true;
      this.age = 0;
      return undefined;
    }
    this.sinceHiss = hiss ? 0 : this.sinceHiss! + 1;
    if (this.sinceHiss < HISS_GAP) return undefined;
    this.sinceHiss = undefined;
    return 'dropped';
  }

  /** Whether the frames to come can start a segment while the onset's frame is still in the window. */
  private startPossible(need: number): boolean {
    const n = this.recent.length;
    for (let k = 1; k < WINDOW - this.age; k += 1) {
      let voiced = k;
      for (let i = Math.max(0, n - (WINDOW - k)); i < n; i += 1) if (this.recent[i]) voiced += 1;
      if (voiced >= need) return true;
    }
    return false;
  }

  reset(): void {
    this.recent = [];
    this.open = false;
    this.sinceHiss = undefined;
  }
}
