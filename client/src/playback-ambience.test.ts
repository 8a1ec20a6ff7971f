import { afterEach, describe, expect, it, vi } from 'vitest';
import { AmbienceController, resolveAmbience, type AmbienceBed } from './ambience/ambience-controller.ts';
import { float32ToPcm16 } from './pcm.ts';
import { PlaybackController, type PlaybackStoppedFrame } from './playback/playback-controller.ts';
import type { AudioPlayer } from './types.ts';

afterEach(() => {
  vi.useRealTimers();
});

function harness(clear: () => { remainingMs: number; discardedMs?: number } = () => ({ remainingMs: 80.6 })) {
  const enqueued: Array<{ n: number; sr: number }> = [];
  const reports: PlaybackStoppedFrame[] = [];
  let replyStarts = 0;
  const player: AudioPlayer = { enqueue: (s, sr) => void enqueued.push({ n: s.length, sr }), clear };
  const playback = new PlaybackController(player, {
    audio: () => undefined,
    report: (f) => void reports.push(f),
    replyAudioStarted: () => void (replyStarts += 1),
    played: () => undefined,
    cleared: () => undefined,
  });
  return { playback, enqueued, reports, replyStarts: () => replyStarts };
}

const pcm = (n: number) => float32ToPcm16(new Float32Array(n).fill(0.1));

describe('PlaybackController', () => {
  it('decodes per ready.audio and hands chunks to the player', () => {
    const h = harness();
    h.playback.onFrame({ type: 'turn' });
    h.playback.onAudio(pcm(320));
    h.playback.configure({ output_encoding: 'pcm_f32le', output_sr: 24000 });
    h.playback.onAudio(new Float32Array(480).buffer);
    expect(h.enqueued).toEqual([{ n: 320, sr: 16000 }, { n: 480, sr: 24000 }]);
    expect(h.replyStarts()).toBe(1);
  });

  it('on interrupted (clear) reports playback_stopped with barge_seq and drops audio until the next turn', () => {
    const h = harness();
    h.playback.onFrame({ type: 'turn' });
    h.playback.onAudio(pcm(320));
    h.playback.onFrame({ type: 'interrupted', clear: true, barge_seq: 3 });
    h.playback.onAudio(pcm(320)); // in flight when the reply stopped
    expect(h.reports).toEqual([{ type: 'client_event', event: 'playback_stopped', remaining_ms: 81, discarded_ms: 81, barge_seq: 3 }]);
    expect(h.enqueued).toHaveLength(1);
    h.playback.onFrame({ type: 'turn' });
    h.playback.onAudio(pcm(320));
    expect(h.enqueued).toHaveLength(2);
    expect(h.replyStarts()).toBe(2);
  });

  it('on canceled reports without barge_seq; interrupted with clear=false keeps playing', () => {
    const h = harness(() => ({ remainingMs: 40, discardedMs: 140 }));
    h.playback.onFrame({ type: 'turn' });
    h.playback.onFrame({ type: 'interrupted', clear: false, barge_seq: 1 });
    expect(h.reports).toEqual([]);
    h.playback.onFrame({ type: 'canceled' });
    expect(h.reports).toEqual([{ type: 'client_event', event: 'playback_stopped', remaining_ms: 40, discarded_ms: 140 }]);
  });

  it('sanitises what a caller player returns', () => {
    const h = harness(() => ({ remainingMs: Number.NaN, discardedMs: -5 }));
    h.playback.onFrame({ type: 'interrupted', clear: true, barge_seq: 0 });
    expect(h.reports[0]).toMatchObject({ remaining_ms: 0, discarded_ms: 0, barge_seq: 0 });
  });
});

describe('AmbienceController', () => {
  function bedHarness(option: Parameters<typeof resolveAmbience>[0]) {
    const calls: string[] = [];
    const states: boolean[] = [];
    const bed: AmbienceBed = {
      fadeIn: (level, s) => void calls.push(`in ${level} ${s}`),
      fadeOut: (s) => void calls.push(`out ${s}`),
      stop: () => void calls.push('stop'),
    };
    const c = new AmbienceController({ createBed: () => bed, stateChanged: (a) => void states.push(a) }, option);
    return { c, calls, states };
  }

  it('resolves the option forms with defaults', () => {
    expect(resolveAmbience(undefined)).toEqual({ mode: 'thinking', afterS: 1.5, fadeInS: 0.8, fadeOutS: 0.35, level: 0.05 });
    expect(resolveAmbience('off').mode).toBe('off');
    expect(resolveAmbience({ mode: 'continuous', level: 0.2, afterS: -1 })).toEqual({ mode: 'continuous', afterS: 1.5, fadeInS: 0.8, fadeOutS: 0.35, level: 0.2 });
  });

  it('thinking: fades in after afterS of working, out under the first reply audio', () => {
    vi.useFakeTimers();
    const h = bedHarness({ mode: 'thinking', afterS: 1, level: 0.1, fadeInS: 0.5, fadeOutS: 0.2 });
    h.c.enable(true);
    h.c.onWorking(true);
    vi.advanceTimersByTime(900);
    expect(h.c.active).toBe(false);
    vi.advanceTimersByTime(200);
    expect(h.c.active).toBe(true);
    h.c.onReplyAudio();
    expect(h.c.active).toBe(false);
    h.c.onWorking(false);
    expect(h.calls).toEqual(['in 0.1 0.5', 'out 0.2']);
    expect(h.states).toEqual([true, false]);
  });

  it('thinking: a short wait never fades in; working=false fades out', () => {
    vi.useFakeTimers();
    const h = bedHarness('thinking');
    h.c.enable(true);
    h.c.onWorking(true);
    vi.advanceTimersByTime(1000);
    h.c.onWorking(false);
    vi.advanceTimersByTime(2000);
    expect(h.calls).toEqual([]);
    h.c.onWorking(true);
    vi.advanceTimersByTime(1600);
    h.c.onWorking(false);
    expect(h.calls).toEqual(['in 0.05 0.8', 'out 0.35']);
  });

  it('continuous plays from enable to stop; off never plays; nothing on WebRTC', () => {
    const h = bedHarness('continuous');
    h.c.enable(true);
    h.c.onReplyAudio();
    expect(h.c.active).toBe(true);
    h.c.set('off');
    expect(h.c.active).toBe(false);
    h.c.set('continuous');
    h.c.stop();
    expect(h.calls).toEqual(['in 0.05 0.8', 'out 0.35', 'in 0.05 0.8', 'stop']);
    const rtc = bedHarness('continuous');
    rtc.c.enable(false);
    rtc.c.onWorking(true);
    expect(rtc.calls).toEqual([]);
  });
});
