/** What each planned close means to the person on the call. */
const REASONS = {
  session_window: 'the session key expires',
  max_duration: 'the call reaches its time limit',
  idle: 'nothing has been said for a while',
  credit: 'the account runs out of credit',
  restart: 'the server restarts',
};

/**
 * A countdown for the close the server announced (`session_closing_soon`): "closing in 42 s: the
 * account runs out of credit", ticking every second; a notice with `cancelled` takes it away, a
 * later one for the same reason replaces it, and the soonest is shown. `low_credit_warning` adds
 * what is left. Both go when the call ends or starts again.
 */
export function closingCountdown(page) {
  const banner = page.$('closing');
  const due = new Map(); // reason → { at, resumable }
  let credit = '';
  let ticker;
  const render = () => {
    const soonest = [...due.entries()].sort((a, b) => a[1].at - b[1].at)[0];
    const lines = [];
    if (soonest) {
      const [reason, { at, resumable }] = soonest;
      const seconds = Math.max(0, Math.ceil((at - performance.now()) / 1000));
      lines.push(`closing in ${seconds} s: ${REASONS[reason] ?? reason}${resumable ? ' (the conversation can be resumed)' : ''}`);
    }
    if (credit) lines.push(credit);
    banner.textContent = lines.join(' · ');
    banner.dataset.reason = soonest?.[0] ?? '';
    banner.hidden = lines.length === 0;
    if (!soonest) ticker = clearInterval(ticker);
  };
  const reset = () => {
    due.clear();
    credit = '';
    render();
  };
  page.on('session_closing_soon', (d) => {
    if (d.cancelled) due.delete(d.reason);
    else due.set(d.reason, { at: performance.now() + d.closes_in_ms, resumable: d.resumable });
    if (d.reason === 'credit' && d.cancelled) credit = '';
    ticker ??= setInterval(render, 250);
    render();
  });
  page.on('low_credit_warning', (d) => {
    credit = `credit low: ${d.remaining} units left, about ${d.seconds_left} s at this rate`;
    render();
  });
  page.on('connected', reset);
  page.on('disconnected', reset);
}
