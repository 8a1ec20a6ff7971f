/**
 * Each reply's latency waterfall as the server measured it (done.metrics, in ms), drawn under
 * its bubble as bars on one time line: a spoken turn from the user's last voiced sample (the end
 * of turn, then recognition, the model and synthesis inside the wait for the first audio), a
 * typed one from input_text, a barge-in from the speech onset that stopped the reply.
 */
export function turnWaterfall(page) {
  page.on('done', (d) => {
    const m = d.metrics;
    if (!m || Object.keys(m).length === 0) return;
    const bubble = [...page.$('log').querySelectorAll('.msg.assistant')].find((el) => el.dataset.turn === d.turn_id);
    if (!bubble) return;
    const eot = m.end_of_turn ?? 0;
    const start = {
      end_of_turn: 0,
      asr_final: eot,
      first_audio_out: eot,
      text_first_delta: 0,
      barge_in_stop: 0,
      llm_first_token: m.text_first_delta !== undefined ? m.text_first_delta - m.llm_first_token : eot + (m.asr_final ?? 0),
      tts_first_audio: eot + (m.first_audio_out ?? m.tts_first_audio) - m.tts_first_audio,
    };
    const rows = Object.entries(m).map(([stage, ms]) => ({ stage, ms, from: Math.max(0, start[stage] ?? 0) }));
    const span = Math.max(...rows.map((r) => r.from + r.ms), 1);
    const chart = document.createElement('span');
    chart.className = 'waterfall';
    chart.setAttribute('aria-label', 'turn latency waterfall (server-measured)');
    for (const r of rows) {
      const label = document.createElement('span');
      label.textContent = `${r.stage} ${Math.round(r.ms)} ms`;
      const track = document.createElement('span');
      track.className = 'track';
      const bar = document.createElement('span');
      bar.className = 'bar';
      bar.style.left = `${(r.from / span) * 100}%`;
      bar.style.width = `${(r.ms / span) * 100}%`;
      track.append(bar);
      chart.append(label, track);
    }
    bubble.append(chart);
  });
}
