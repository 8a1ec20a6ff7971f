import { describe, expect, it } from 'vitest';
import { useFakeClock } from '../testing/test-session.ts';
import type { TestSession } from '../testing/test-session.ts';
import {
  ask,
  done,
  finish,
  lookup,
  mentions,
  narrationAfter,
  nextTurn,
  open,
  openWithToolCall,
  pos,
  refusalOf,
  report,
  request,
  requests,
  sayWhenMentioned,
  passTime,
  toolResult,
  useRigs,
  utteranceOf,
  WAIT_MS,
  type Rig,
  type RecordedRequest,
} from '../testing/tool-kit.ts';

/**
 * Deferred client calls (SPEC tool_deferred / tool_deferred_ack, "Tool call" open → deferred):
 * an eligible call becomes a managed job, the turn moves on, and the job's end is told in a
 * narration turn once the floor is free. Spoken delivery that is cut off is retried once and
 * then reported in tool_job_delivery_failed.
 */

const start = useRigs();
useFakeClock();

/** A session where the model calls `report` (deferrable) on the first turn and the client defers it. */
async function deferredJob(
  rig: Rig,
  handle = 'report-1',
  statusLabel: string | undefined = 'Building the report',
): Promise<{ client: TestSession; turnId: string; ack: Extract<TestSession['frames'][number], { type: 'tool_deferred_ack' }> }> {
  const { client, turnId } = await openWithToolCall(rig, {
    calls: [{ id: 'call_job', name: 'report', args: { quarter: 'Q3' } }],
    question: 'build the Q3 report',
    answer: 'I started the report.',
    tools: [report, lookup],
  });
  client.send({ type: 'tool_deferred', id: 'call_job', handle, ...(statusLabel ? { status_label: statusLabel } : {}) });
  const ack = await client.waitFor('tool_deferred_ack', () => true, WAIT_MS);
  return { client, turnId, ack };
}

describe('accepted deferral', () => {
  it('ack {accepted, id, handle, job_id, status_label, deferred_timeout}; the turn moves on; the later result is narrated', async () => {
    const rig = await start({ tools: { deferredTimeoutMs: 120_000 } });
    rig.fake.script(sayWhenMentioned('JOB-RESULT-Q3', 'Your Q3 report is ready.'));
    const { client, turnId, ack } = await deferredJob(rig);
    expect(ack).toEqual({
      type: 'tool_deferred_ack',
      accepted: true,
      id: 'call_job',
      handle: 'report-1',
      job_id: expect.any(String),
      status_label: 'Building the report',
      deferred_timeout: 120,
    });
    const jobId = ack.job_id as string;
    expect(jobId.length).toBeGreaterThan(0);

    // The turn ends without the result.
    const end = await done(client, turnId);
    expect(end.status).toBe('completed');
    expect(pos(client, ack)).toBeLessThan(pos(client, end));
    expect(utteranceOf(client, turnId)).toBe('I started the report.');
    const told = toolResult(request(rig, 1), 'call_job');
    expect(told).toMatchObject({ outcome: 'unknown', verified: false });
    expect(JSON.stringify(told?.content)).toContain(jobId);

    const narration = await narrationAfter(client, { type: 'tool_result', id: 'call_job', content: { pdf: 'JOB-RESULT-Q3' }, outcome: 'succeeded', verified: true });
    expect(narration).not.toBe(turnId);
    expect((await done(client, narration)).status).toBe('completed');
    expect(utteranceOf(client, narration)).toBe('Your Q3 report is ready.');
    expect(requests(rig)).toHaveLength(3);
    expect(mentions(request(rig, 2), 'JOB-RESULT-Q3')).toBe(true);
    expect(client.all('error')).toEqual([]);
    // The result was for the job: a second one is refused.
    expect(await refusalOf(client, { type: 'tool_result', id: 'call_job', content: 'again', outcome: 'succeeded' })).toMatchObject({ code: 'unknown_tool_call' });
    finish(client, rig);
  });

  it('a host tool_cancel of a deferred job (by its handle) ends the job and the user is told', async () => {
    const rig = await start();
    rig.fake.script(sayWhenMentioned('was cancelled', 'The report was cancelled.'));
    const { client, turnId } = await deferredJob(rig, 'handle-c');
    await done(client, turnId);
    const narration = await narrationAfter(client, { type: 'tool_cancel', id: 'handle-c' });
    await done(client, narration);
    expect(utteranceOf(client, narration)).toBe('The report was cancelled.');
    expect(client.all('error')).toEqual([]);
    finish(client, rig);
  });
});

describe('deferred timeout replaces the call timeout', () => {
  it('a deferred call is not cancelled at TOOL_TIMEOUT_MS; its result still ends the job', async () => {
    const rig = await start({ tools: { defaultTimeoutMs: 300, deferredTimeoutMs: 120_000 } });
    rig.fake.script(sayWhenMentioned('LONG-JOB-OK', 'The long job is done.'));
    const { client, turnId, ack } = await deferredJob(rig);
    expect(ack).toMatchObject({ accepted: true, deferred_timeout: 120 });
    await done(client, turnId);
    await passTime(1000);
    expect(client.all('tool_cancel')).toEqual([]);
    const narration = await narrationAfter(client, { type: 'tool_result', id: 'call_job', content: 'LONG-JOB-OK', outcome: 'succeeded', verified: true });
    await done(client, narration);
    expect(utteranceOf(client, narration)).toBe('The long job is done.');
    expect(client.all('error')).toEqual([]);
    finish(client, rig);
  });
});

describe('refused deferrals', () => {
  it('not_deferrable: the call stays open and its result still counts', async () => {
    const rig = await start();
    const { client, turnId } = await openWithToolCall(rig, {
      calls: [{ id: 'call_nd', name: 'lookup', args: { order: 'N' } }],
      question: 'look up N',
      answer: 'Got N.',
    });
    client.send({ type: 'tool_deferred', id: 'call_nd', handle: 'h-nd' });
    const ack = await client.waitFor('tool_deferred_ack', () => true, WAIT_MS);
    expect(ack).toMatchObject({ accepted: false, id: 'call_nd', reason: 'not_deferrable' });
    expect(ack.job_id).toBeUndefined();
    await passTime(100);
    expect(client.all('done')).toEqual([]);
    client.send({ type: 'tool_result', id: 'call_nd', content: 'N', outcome: 'succeeded', verified: true });
    await done(client, turnId);
    expect(toolResult(request(rig, 1), 'call_nd')).toEqual({ outcome: 'succeeded', verified: true, content: 'N' });
    finish(client, rig);
  });

  it('unknown_call', async () => {
    const rig = await start();
    const client = await open(rig, { tools: [report] });
    client.send({ type: 'tool_deferred', id: 'call_never', handle: 'h-x' });
    const ack = await client.waitFor('tool_deferred_ack', () => true, WAIT_MS);
    expect(ack).toMatchObject({ accepted: false, id: 'call_never', reason: 'unknown_call' });
    finish(client, rig);
  });

  it('already_deferred', async () => {
    const rig = await start();
    const { client, turnId } = await deferredJob(rig, 'h-1');
    await done(client, turnId);
    client.send({ type: 'tool_deferred', id: 'call_job', handle: 'h-2' });
    const second = await client.waitFor('tool_deferred_ack', (f) => !f.accepted, WAIT_MS);
    expect(second).toMatchObject({ accepted: false, id: 'call_job', reason: 'already_deferred' });
    expect(client.all('tool_deferred_ack')).toHaveLength(2);
    finish(client, rig);
  });

  it('call_closed: the call already has its result', async () => {
    const rig = await start();
    const { client, turnId } = await openWithToolCall(rig, {
      calls: [{ id: 'call_closed', name: 'report', args: {} }],
      question: 'build it',
      answer: 'Done.',
      tools: [report],
    });
    client.send({ type: 'tool_result', id: 'call_closed', content: 'built', outcome: 'succeeded' });
    await done(client, turnId);
    client.send({ type: 'tool_deferred', id: 'call_closed', handle: 'h-closed' });
    const ack = await client.waitFor('tool_deferred_ack', () => true, WAIT_MS);
    expect(ack).toMatchObject({ accepted: false, id: 'call_closed', reason: 'call_closed' });
    finish(client, rig);
  });

  it('duplicate_handle: a second call cannot take a handle already in use', async () => {
    const rig = await start();
    const { client, turnId } = await openWithToolCall(rig, {
      calls: [
        { id: 'call_d1', name: 'report', args: { n: 1 } },
        { id: 'call_d2', name: 'report', args: { n: 2 } },
      ],
      question: 'two reports',
      answer: 'Both started.',
      tools: [report],
    });
    client.send({ type: 'tool_deferred', id: 'call_d1', handle: 'same-handle' });
    await client.waitFor('tool_deferred_ack', (f) => f.id === 'call_d1', WAIT_MS);
    client.send({ type: 'tool_deferred', id: 'call_d2', handle: 'same-handle' });
    const refused = await client.waitFor('tool_deferred_ack', (f) => f.id === 'call_d2', WAIT_MS);
    expect(refused).toMatchObject({ accepted: false, id: 'call_d2', reason: 'duplicate_handle' });
    // call_d2 is still open and deferrable under another handle; then the turn moves on.
    client.send({ type: 'tool_deferred', id: 'call_d2', handle: 'other-handle' });
    const accepted = await client.waitFor('tool_deferred_ack', (f) => f.id === 'call_d2' && f.accepted, WAIT_MS);
    expect(accepted.handle).toBe('other-handle');
    expect((await done(client, turnId)).status).toBe('completed');
    finish(client, rig);
  });
});

describe('deferred timeout', () => {
  it('DEFERRED_TIMEOUT_S passes → server tool_cancel {id}, the user is told in a narration turn', async () => {
    const rig = await start({ tools: { deferredTimeoutMs: 1000 } });
    rig.fake.script(sayWhenMentioned('timed_out', 'Sorry, the report timed out.'));
    const { client, turnId, ack } = await deferredJob(rig);
    expect(ack).toMatchObject({ accepted: true, deferred_timeout: 1 });
    await done(client, turnId);
    const after = client.frames.length;
    const cancel = await client.waitFor('tool_cancel', (f) => f.id === 'call_job', WAIT_MS, after);
    expect(cancel).toEqual({ type: 'tool_cancel', id: 'call_job' });
    const narration = await nextTurn(client, after);
    expect(pos(client, cancel)).toBeLessThan(pos(client, client.all('turn').find((f) => f.turn_id === narration)));
    await done(client, narration);
    expect(utteranceOf(client, narration)).toBe('Sorry, the report timed out.');
    expect(await refusalOf(client, { type: 'tool_result', id: 'call_job', content: 'too late', outcome: 'succeeded' })).toMatchObject({ code: 'unknown_tool_call' });
    finish(client, rig);
  });
});

describe('narration and the floor', () => {
  it('a job result arriving while a reply streams is narrated only after that reply is done', async () => {
    const rig = await start();
    const slowText = Array.from({ length: 16 }, (_, i) => `word${i}`).join(' ');
    rig.fake.script((body: RecordedRequest) => {
      if (mentions(body, 'SLOW-JOB-RESULT') && body.messages.at(-1)?.role === 'system') return { text: 'The job finished.' };
      if (body.messages.at(-1)?.content === 'tell me a story') return { text: slowText };
      return { text: 'ok' };
    });
    const { client, turnId } = await deferredJob(rig);
    await done(client, turnId);

    rig.fake.delayMs = 60;
    const story = await ask(client, 'tell me a story');
    await client.waitFor('text_delta', (f) => f.turn_id === story.turnId, WAIT_MS);
    const sentAt = client.frames.length;
    client.send({ type: 'tool_result', id: 'call_job', content: 'SLOW-JOB-RESULT', outcome: 'succeeded', verified: true });
    const storyDone = await done(client, story.turnId);
    rig.fake.delayMs = 0;
    // The result reached the server while the story was still streaming.
    expect(pos(client, storyDone)).toBeGreaterThan(sentAt);
    expect(storyDone.status).toBe('completed');
    expect(utteranceOf(client, story.turnId)).toBe(slowText);

    const narration = await nextTurn(client, sentAt);
    expect(narration).not.toBe(story.turnId);
    const narrationTurn = client.all('turn').find((f) => f.turn_id === narration);
    expect(pos(client, narrationTurn)).toBeGreaterThan(pos(client, storyDone));
    await done(client, narration);
    expect(utteranceOf(client, narration)).toBe('The job finished.');
    finish(client, rig);
  });
});

describe('tool_job_delivery_failed', () => {
  it('a narration cut off before anything was delivered is requeued once, then reported failed; both inside their turns', async () => {
    const rig = await start();
    const { client, turnId, ack } = await deferredJob(rig);
    const jobId = ack.job_id as string;
    await done(client, turnId);

    // Both narration attempts hang before any text, so each is cut off with nothing delivered.
    rig.fake.enqueue({ hang: true }, { hang: true });
    const first = await narrationAfter(client, { type: 'tool_result', id: 'call_job', content: 'REPORT-DONE', outcome: 'succeeded', verified: true });
    client.send({ type: 'interrupt' });
    const firstDone = await done(client, first);
    expect(firstDone.status).toBe('interrupted');
    const requeued = client.all('tool_job_delivery_failed');
    expect(requeued).toHaveLength(1);
    expect(requeued[0]).toMatchObject({ job_ids: [], requeued: [jobId], detail: expect.any(String) });
    const firstTurn = client.all('turn').find((f) => f.turn_id === first);
    expect(pos(client, firstTurn)).toBeLessThan(pos(client, requeued[0]));
    expect(pos(client, requeued[0])).toBeLessThan(pos(client, firstDone));

    const second = await nextTurn(client, pos(client, firstDone) + 1);
    client.send({ type: 'interrupt' });
    const secondDone = await done(client, second);
    expect(secondDone.status).toBe('interrupted');
    const failed = client.all('tool_job_delivery_failed');
    expect(failed).toHaveLength(2);
    expect(failed[1]).toMatchObject({ job_ids: [jobId], requeued: [] });
    const secondTurn = client.all('turn').find((f) => f.turn_id === second);
    expect(pos(client, secondTurn)).toBeLessThan(pos(client, failed[1]));
    expect(pos(client, failed[1])).toBeLessThan(pos(client, secondDone));

    // No third attempt: the next turn is the user's, and the result stays in context.
    await passTime(200);
    expect(client.all('turn')).toHaveLength(3);
    const ping = await ask(client, 'ping');
    await done(client, ping.turnId);
    expect(client.all('turn')).toHaveLength(4);
    expect(mentions(requests(rig).at(-1)!, 'REPORT-DONE')).toBe(true);
    finish(client, rig);
  });

  it('a narration cut off after some text was delivered is not retried and reports nothing', async () => {
    const rig = await start();
    const { client, turnId } = await deferredJob(rig);
    await done(client, turnId);
    rig.fake.enqueue({ text: Array.from({ length: 40 }, (_, i) => `w${i}`).join(' ') });
    rig.fake.delayMs = 50;
    const narration = await narrationAfter(client, { type: 'tool_result', id: 'call_job', content: 'done', outcome: 'succeeded', verified: true });
    await client.waitFor('text_delta', (f) => f.turn_id === narration, WAIT_MS);
    client.send({ type: 'interrupt' });
    expect((await done(client, narration)).status).toBe('interrupted');
    rig.fake.delayMs = 0;
    await passTime(300);
    expect(client.all('tool_job_delivery_failed')).toEqual([]);
    expect(client.all('turn')).toHaveLength(2);
    finish(client, rig);
  });
});
