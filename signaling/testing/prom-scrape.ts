/** One line of the Prometheus text format: a series and its value. */
export interface PromSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** A parsed scrape of /metrics (the Prometheus text format, version 0.0.4). */
export class PromScrape {
  readonly samples: PromSample[] = [];
  /** Metric families declared with `# TYPE`, by name. */
  readonly types = new Map<string, string>();

  constructor(text: string) {
    for (const line of text.split('\n')) {
      if (line.startsWith('# TYPE ')) {
        const [, , name, type] = line.split(' ');
        this.types.set(name!, type!);
        continue;
      }
      if (line === '' || line.startsWith('#')) continue;
      const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
      if (!match) throw new Error(`not a Prometheus sample line: ${line}`);
      this.samples.push({ name: match[1]!, labels: parseLabels(match[2] ?? ''), value: Number(match[3]) });
    }
  }

  /** The sum of every series of `name` whose labels include `labels`. */
  value(name: string, labels: Record<string, string> = {}): number {
    return this.samples
      .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
      .reduce((sum, s) => sum + s.value, 0);
  }

  /** Every value label `label` takes among the series of `name`. */
  labelValues(name: string, label: string): Set<string> {
    return new Set(this.samples.filter((s) => s.name === name && s.labels[label] !== undefined).map((s) => s.labels[label]!));
  }
}

function parseLabels(text: string): Record<string, string> {
  const labels: Record<string, string> = {};
  const pattern = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;
  for (let m = pattern.exec(text); m; m = pattern.exec(text)) labels[m[1]!] = m[2]!.replace(/\\n/g, '\n').replace(/\\"/g, '"').replace(/\\\\/g, '\\');
  return labels;
}

export async function scrape(baseUrl: string, headers: Record<string, string> = {}): Promise<PromScrape> {
  const response = await fetch(`${baseUrl}/metrics`, { headers });
  if (response.status !== 200) throw new Error(`/metrics answered ${response.status}: ${await response.text()}`);
  return new PromScrape(await response.text());
}
