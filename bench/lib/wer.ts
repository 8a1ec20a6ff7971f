/** Lower case, apostrophes kept, every other mark a space: how recognisers spell their output. */
export function words(text: string): string[] {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9']+/g, ' ')
    .trim()
    .split(' ')
    .filter(Boolean);
}

/**
 * Word errors of `hypothesis` against `reference`: the fewest substitutions, deletions and
 * insertions (word-level Levenshtein distance). Word error rate = errors / reference words,
 * summed over a set before dividing, so long sentences weigh more than short ones.
 */
export function wordErrors(reference: string, hypothesis: string): { errors: number; words: number } {
  const ref = words(reference);
  const hyp = words(hypothesis);
  let previous = Array.from({ length: hyp.length + 1 }, (_, j) => j);
  for (let i = 1; i <= ref.length; i += 1) {
    const current = [i];
    for (let j = 1; j <= hyp.length; j += 1) {
      const substitution = previous[j - 1]! + (ref[i - 1] === hyp[j - 1] ? 0 : 1);
      current.push(Math.min(substitution, previous[j]! + 1, current[j - 1]! + 1));
    }
    previous = current;
  }
  return { errors: previous[hyp.length]!, words: ref.length };
}

/** Word error rate over pairs, in percent. */
export function wordErrorRate(pairs: ReadonlyArray<{ reference: string; hypothesis: string }>): number {
  let errors = 0;
  let total = 0;
  for (const pair of pairs) {
    const counted = wordErrors(pair.reference, pair.hypothesis);
    errors += counted.errors;
    total += counted.words;
  }
  return total === 0 ? 0 : (100 * errors) / total;
}
