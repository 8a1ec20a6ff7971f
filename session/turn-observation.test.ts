import { describe, expect, it } from 'vitest';
import type { TurnScope, TurnSummary } from './observer.ts';
import { TurnObservation } from './turn-observation.ts';

function scope(): TurnScope & { ended: Array<TurnSummary | undefined>; ran: number } {
  const s = {
    ended: [] as Array<TurnSummary | undefined>,
    ran: 0,
    run<T>(fn: () => T): T {
      s.ran += 1;
      return fn();
    },
    end(reply: TurnSummary | undefined) {
      s.ended.push(reply);
    },
  };
  return s;
}

describe('TurnObservation (one turn\'s waterfall)', () => {
  it('turns marks into the stages that have both ends, to 0.1 ms; the first mark of a moment wins', () => {
    const o = new TurnObservation(scope());
    o.mark('lastVoiced', 1000);
    o.mark('endOfTurn', 1260.04);
    o.mark('asrFinal', 1300);
    o.mark('llmRequest', 1301);
    o.mark('llmFirstToken', 1310.56);
    o.mark('llmRequest', 1500); // a second tool round
    o.mark('ttsRequest', 1320);
    o.mark('ttsFirstAudio', 1340);
    o.mark('firstAudioOut', 1342.5);
    o.mark('firstAudioOut', 1362.5);
    expect(o.metrics()).toEqual({ end_of_turn: 260, asr_final: 40, llm_first_token: 9.6, tts_first_audio: 20, first_audio_out: 82.5 });
  });

  it('barge_in_stop needs both the onset and the stop; an unmarked stop (a resumed pause) does not count', () => {
    const o = new TurnObservation(scope());
    o.mark('downlinkStopped', 50);
    o.unmark('downlinkStopped');
    expect(o.metrics()).toEqual({});
    o.mark('speechOnset', 100);
    o.mark('downlinkStopped', 212.34);
    expect(o.metrics()).toEqual({ barge_in_stop: 112.3 });
  });

  it('runs work inside the host scope and ends it once', () => {
    const s = scope();
    const o = new TurnObservation(s);
    expect(o.run(() => 7)).toBe(7);
    const summary: TurnSummary = { turnId: 't1', status: 'completed', modality: 'text', metrics: {} };
    o.end(summary);
    o.end(undefined);
    expect(s).toMatchObject({ ran: 1, ended: [summary] });
  });
});
