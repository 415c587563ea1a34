declare module 'parse-prometheus-text-format' {
  /** Families as prom2json gives them; values are strings. */
  export default function parsePrometheusTextFormat(text: string): unknown[];
}
