// The package ships JavaScript only; this is the part of its API the tests call.
declare module 'parse-prometheus-text-format' {
  /**
   * One sample: `value` for counters and gauges, `buckets`, `count` and `sum` for histograms;
   * numbers as written. A histogram with labels besides `le` comes out folded into one sample
   * without them (the parser's own limit), so its figures per label are read another way.
   */
  export interface ParsedSample {
    readonly labels?: Readonly<Record<string, string>>;
    readonly value?: string;
    readonly buckets?: Readonly<Record<string, string>>;
    readonly count?: string;
    readonly sum?: string;
  }
  export interface ParsedFamily {
    readonly name: string;
    readonly help: string;
    readonly type: 'COUNTER' | 'GAUGE' | 'HISTOGRAM' | 'SUMMARY' | 'UNTYPED';
    readonly metrics: readonly ParsedSample[];
  }
  /** Throws on a line that is not in the text format. */
  export default function parsePrometheusTextFormat(text: string): ParsedFamily[];
}
