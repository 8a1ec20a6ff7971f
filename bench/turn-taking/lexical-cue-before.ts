import type { TurnCue } from '../../media/endpointer.ts';

/**
 * The lexical cue as it was before the enlarged corpus (main at 0bfa454, session/voice/lexical-cue.ts),
 * kept here only so the bench can run the old and the new rules side by side on the same probes.
 */

/**
 * Words a thought never ends on: conjunctions, fillers, articles, possessives, "to", an
 * intensifier, and a subject with its auxiliary contracted ("i'm", "it's": English never leaves
 * a contracted auxiliary at the end, "yes I am" but never "yes I'm"). Recognisers hear a
 * hesitant "um" as "i'm" about as often as not, which this catches too.
 */
const TRAILING_INCOMPLETE = new Set([
  'and', 'or', 'but', 'so', 'because', 'cause', 'if', 'than', 'whether', 'although', 'nor',
  'um', 'uh', 'er', 'ah', 'erm',
  'the', 'a', 'an', 'my', 'your', 'our', 'their', 'its', 'to', 'very',
  "i'm", "i've", "i'll", "i'd", "you're", "you've", "you'll", "we're", "we've", "we'll", "they're", "they've", "they'll",
  "he's", "she's", "it's", "that's", "there's", "he'll", "she'll", "it'll",
]);

/** Words a statement does not end on, though a question may ("where are you from"). */
const TRAILING_WEAK = new Set([
  'of', 'for', 'with', 'in', 'on', 'at', 'from', 'about', 'into', 'onto', 'by', 'upon', 'between', 'without', 'against', 'towards', 'toward', 'during', 'until', 'unless',
  'i', 'we', 'they', 'would', 'could', 'should', 'like',
]);

/** First words of a question (wh-words and inverted auxiliaries). */
const QUESTION_START = new Set([
  'what', "what's", 'where', "where's", 'when', 'who', "who's", 'whom', 'whose', 'why', 'which', 'how', "how's",
  'is', 'are', 'was', 'were', 'do', 'does', 'did', 'can', 'could', 'would', 'will', 'should', 'shall', 'may', 'might', 'have', 'has',
  "isn't", "aren't", "don't", "doesn't", "didn't", "can't", "won't",
]);

function words(text: string): string[] {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9' -]+/g, ' ')
    .split(/\s+/)
    .filter(Boolean);
}

/**
 * `incomplete` when the speech trails off on a word a thought does not end on, `question` for a
 * question of three words or more that does not end on such a word, else `neutral`.
 */
export function lexicalCueBefore(text: string): TurnCue {
  const w = words(text);
  const last = w[w.length - 1];
  if (last === undefined) return 'neutral';
  if (TRAILING_INCOMPLETE.has(last)) return 'incomplete';
  const question = w.length >= 3 && QUESTION_START.has(w[0]!);
  if (TRAILING_WEAK.has(last)) return question ? 'neutral' : 'incomplete';
  return question ? 'question' : 'neutral';
}
