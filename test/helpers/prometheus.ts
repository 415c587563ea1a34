/**
 * A scrape read by a Prometheus text-format parser (parse-prometheus-text-format),
 * with lookups for tests.
 *
 * That parser keeps one set of buckets per histogram family: the buckets of a
 * histogram with labels (one per endpoint) come back merged, their count and
 * sum dropped. So the text is parsed twice: as it is, for the families, their
 * types and the counters and gauges; and with the histograms' TYPE lines taken
 * out, where each `_bucket`, `_sum` and `_count` series is a plain sample with
 * all its labels, from which `histogram()` puts each labelled histogram together.
 */
import parsePrometheusTextFormat from 'parse-prometheus-text-format';

export interface Sample {
  labels: Record<string, string>;
  value: string;
}

export interface Family {
  name: string;
  help: string;
  type: string;
  metrics: Sample[];
}

export interface HistogramSeries {
  labels: Record<string, string>;
  /** Cumulative count per upper bound (`le`), +Inf included. */
  buckets: Record<string, number>;
  count: number;
  sum: number;
}

const parse = (text: string): Family[] => (parsePrometheusTextFormat(text) as Family[]).map((f) => ({ ...f, metrics: f.metrics.map((m) => ({ ...m, labels: m.labels ?? {} })) }));
const matches = (labels: Record<string, string>, wanted: Record<string, string>): boolean => Object.entries(wanted).every(([k, v]) => labels[k] === v);
const without = (labels: Record<string, string>, name: string): Record<string, string> => Object.fromEntries(Object.entries(labels).filter(([k]) => k !== name));

export class Scrape {
  readonly families: Family[];
  /** Every series by its full name (histograms' `_bucket`, `_sum`, `_count` included), with its labels. */
  private readonly series = new Map<string, Sample[]>();

  constructor(readonly text: string) {
    this.families = parse(text);
    for (const family of parse(text.replace(/^# TYPE (\S+) histogram$/gm, '# TYPE $1 untyped'))) {
      this.series.set(family.name, [...(this.series.get(family.name) ?? []), ...family.metrics]);
    }
  }

  family(name: string): Family {
    const found = this.families.find((f) => f.name === name);
    if (!found) throw new Error(`no ${name} in the scrape`);
    return found;
  }

  /** Samples of a counter or gauge whose labels include `labels`. */
  samples(name: string, labels: Record<string, string> = {}): Sample[] {
    return this.family(name).metrics.filter((m) => matches(m.labels, labels));
  }

  /** The sum of the values of a counter's or gauge's samples matching `labels` (0 when none does). */
  total(name: string, labels: Record<string, string> = {}): number {
    return this.samples(name, labels).reduce((sum, m) => sum + Number(m.value), 0);
  }

  /** Each labelled histogram of a family whose labels include `labels`. */
  histograms(name: string, labels: Record<string, string> = {}): HistogramSeries[] {
    if (this.family(name).type !== 'HISTOGRAM') throw new Error(`${name} is not a histogram`);
    const byLabels = new Map<string, HistogramSeries>();
    const entry = (own: Record<string, string>): HistogramSeries => {
      const key = JSON.stringify(Object.entries(own).sort());
      let found = byLabels.get(key);
      if (!found) byLabels.set(key, (found = { labels: own, buckets: {}, count: NaN, sum: NaN }));
      return found;
    };
    for (const m of this.series.get(`${name}_bucket`) ?? []) entry(without(m.labels, 'le')).buckets[m.labels.le as string] = Number(m.value);
    for (const m of this.series.get(`${name}_count`) ?? []) entry(m.labels).count = Number(m.value);
    for (const m of this.series.get(`${name}_sum`) ?? []) entry(m.labels).sum = Number(m.value);
    return [...byLabels.values()].filter((h) => matches(h.labels, labels));
  }

  /** Every label value in the scrape, of every series. */
  labelValues(): string[] {
    return [...this.series.values()].flatMap((samples) => samples.flatMap((m) => Object.values(m.labels)));
  }
}
