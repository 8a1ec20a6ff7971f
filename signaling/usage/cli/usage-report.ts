import type { MeterTotals, UsageReport } from '../usage-ports.ts';

const DAY = /^\d{4}-\d{2}-\d{2}$/;
const TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

/** --since: a date (that UTC day's start) or an ISO time with Z or an offset; null when neither. */
export function sinceInstant(text: string): string | null {
  const time = DAY.test(text) ? Date.parse(`${text}T00:00:00Z`) : TIME.test(text) ? Date.parse(text) : NaN;
  return Number.isNaN(time) ? null : new Date(time).toISOString();
}

/** The meters the table shows (--json has them all). */
const COLUMNS: Array<[keyof MeterTotals, string]> = [
  ['session_s', 'session_s'],
  ['audio_in_s', 'audio_in_s'],
  ['audio_out_s', 'audio_out_s'],
  ['asr_s', 'asr_s'],
  ['llm_input_tokens', 'llm_in'],
  ['llm_output_tokens', 'llm_out'],
  ['think_output_tokens', 'think_out'],
  ['tts_chars', 'tts_chars'],
  ['tool_calls', 'tools'],
  ['units', 'units'],
];

/** The usage report as two aligned tables, per day and per session, under a line of totals. */
export function formatUsage(account: string, since: string | undefined, report: UsageReport): string {
  const estimated = report.totals.llm_tokens_estimated || report.totals.think_tokens_estimated ? ' (token counts partly estimated)' : '';
  const head = `usage of ${account}${since ? ` since ${since}` : ''}: ${report.sessions.length}${report.truncated ? '+' : ''} sessions, ${fmt(report.totals.session_s)} s, ${fmt(report.totals.units)} units${estimated}\n`;
  if (report.days.length === 0) return `${head}no usage recorded\n`;
  const meters = (row: MeterTotals) => COLUMNS.map(([key]) => fmt(Number(row[key])));
  const days = table(['day', ...COLUMNS.map(([, label]) => label)], report.days.map((d) => [d.day, ...meters(d)]));
  const sessions = table(
    ['session_id', 'last_at', 'turns', ...COLUMNS.map(([, label]) => label)],
    report.sessions.map((s) => [s.session_id, s.last_at.slice(0, 19).replace('T', ' '), String(s.turns), ...meters(s)]),
  );
  return `${head}\nper day\n${days}\nper session (most recent first${report.truncated ? ', the first 1000' : ''})\n${sessions}`;
}

function table(header: string[], rows: string[][]): string {
  const all = [header, ...rows];
  const widths = header.map((_, i) => Math.max(...all.map((r) => (r[i] ?? '').length)));
  // Text left, numbers right.
  return all.map((r) => r.map((cell, i) => (i === 0 || (i === 1 && header[1] === 'last_at') ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ').trimEnd()).join('\n') + '\n';
}

/** Milliseconds' precision at most, no trailing zeros. */
function fmt(value: number): string {
  return String(Math.round(value * 1000) / 1000);
}
