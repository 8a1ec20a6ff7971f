/**
 * Outside speech, the last frames' VAD decisions. A segment starts once `need` of the last
 * WINDOW frames are voiced. Before that, the first voiced frame is a possible onset: a reply
 * that pauses there stops two frames (40 ms) sooner than at the start, and the listener's buffer
 * (the pacer's lead) covers the pause when no start follows. The onset is dropped as soon as no
 * start can come while its frame is still in the window (at most three frames on).
 */
export type OnsetStep = 'onset' | 'start' | 'dropped' | undefined;

const WINDOW = 4;

export class OnsetWindow {
  private recent: boolean[] = [];
  private open = false;
  /** Frames since the open onset. */
  private age = 0;
  /** Voiced frames in the window when it started a segment. */
  voiced = 0;

  push(speech: boolean, need: number): OnsetStep {
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
    if (!this.open) {
      this.open = speech;
      this.age = 0;
      return speech ? 'onset' : undefined;
    }
    this.age += 1;
    if (this.startPossible(need)) return undefined;
    this.open = false;
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
  }
}
